#include "agent/runtime/task_runner.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/reason.h"
#include "common/wire_limits.h"
#include "common/ulid.h"
#include "common/utf8.h"

namespace fleetbench::agent {
namespace {

// absl and the wire enum share google.rpc.Code's numbers.
v1::StatusCode OutcomeCode(absl::StatusCode code) {
  const int value = static_cast<int>(code);
  return v1::StatusCode_IsValid(value) ? static_cast<v1::StatusCode>(value)
                                       : v1::STATUS_CODE_UNKNOWN;
}

}  // namespace

v1::Report FinalReport(const std::string& task_id, v1::TaskState state,
                       const std::string& reason,
                       const std::vector<v1::BenchmarkOutcome>& outcomes,
                       const std::string& log) {
  v1::Report report;
  report.set_report_id(NewUlid());
  report.set_task_id(task_id);
  report.set_task_finished(true);
  report.set_task_state(state);
  report.set_task_reason(TruncateReason(reason));
  for (const auto& o : outcomes) *report.add_outcomes() = o;
  report.set_task_log(LogTail(log));
  return report;
}

std::string LogTail(absl::string_view raw) {
  // What a benchmark printed may be any bytes; the report's text must be
  // UTF-8 (common/utf8.h).
  const std::string valid = ToValidUtf8(std::string_view(raw.data(), raw.size()));
  const absl::string_view log = valid;
  if (log.size() <= kMaxTaskLogBytes) return valid;
  absl::string_view tail = log.substr(log.size() - kMaxTaskLogBytes);
  // From a whole line when one starts in it, and never from the middle of
  // a UTF-8 character.
  if (const size_t newline = tail.find('\n');
      newline != absl::string_view::npos && newline + 1 < tail.size()) {
    tail.remove_prefix(newline + 1);
  }
  while (!tail.empty() && (static_cast<unsigned char>(tail.front()) & 0xC0) == 0x80) {
    tail.remove_prefix(1);
  }
  return std::string(tail);
}

v1::TaskState TaskStateFromOutcomes(const std::vector<v1::BenchmarkOutcome>& outcomes) {
  bool any_cancelled = false, any_failed = false, all_skipped = !outcomes.empty();
  for (const auto& o : outcomes) {
    any_cancelled |= o.state() == v1::TASK_STATE_CANCELLED;
    any_failed |= o.state() == v1::TASK_STATE_FAILED;
    all_skipped &= o.state() == v1::TASK_STATE_SKIPPED;
  }
  if (any_cancelled) return v1::TASK_STATE_CANCELLED;
  if (any_failed) return v1::TASK_STATE_FAILED;
  if (all_skipped) return v1::TASK_STATE_SKIPPED;
  return v1::TASK_STATE_SUCCEEDED;
}

TaskRunner::TaskRunner(std::vector<std::unique_ptr<Benchmark>> benchmarks,
                       std::string scratch_dir)
    : benchmarks_(std::move(benchmarks)), scratch_dir_(std::move(scratch_dir)) {}

std::vector<v1::Capability> TaskRunner::Capabilities() const {
  std::vector<v1::Capability> out;
  for (const auto& b : benchmarks_) {
    v1::Capability c;
    c.set_benchmark(b->name());
    absl::Status probe = b->Probe();
    c.set_status(probe.ok() ? v1::CAPABILITY_STATUS_AVAILABLE
                            : v1::CAPABILITY_STATUS_UNAVAILABLE);
    c.set_reason(TruncateReason(probe.message()));
    c.set_pairwise(b->pairwise());
    c.set_collective(b->collective());
    c.set_default_timeout_ms(absl::ToInt64Milliseconds(b->DefaultTimeout({})));
    c.set_dynamic_metric_prefix(b->dynamic_metric_prefix());
    b->Describe(&c);
    for (const MetricInfo& m : b->metrics()) {
      v1::MetricDescriptor* d = c.add_metrics();
      d->set_name(m.name);
      d->set_unit(m.unit);
      d->set_direction(m.direction);
      d->set_description(m.description);
      d->set_benchmark(c.benchmark());
    }
    out.push_back(std::move(c));
  }
  return out;
}

Benchmark* TaskRunner::Find(const std::string& name) const {
  for (const auto& b : benchmarks_) {
    if (b->name() == name) return b.get();
  }
  return nullptr;
}

void TaskRunner::Execute(const v1::RunTask& task, const std::atomic<bool>& cancelled,
                         const Hooks& hooks) {
  std::vector<v1::BenchmarkOutcome> outcomes;
  // What the benchmarks kept to be read, each under its name; its end is
  // the task's log.
  std::string log;
  const int total = task.benchmarks_size();
  for (int i = 0; i < total; ++i) {
    const v1::BenchmarkSpec& spec = task.benchmarks(i);
    v1::BenchmarkOutcome outcome;
    outcome.set_benchmark(spec.name());
    auto finish = [&](v1::TaskState state, absl::StatusCode code, const std::string& reason) {
      outcome.set_state(state);
      outcome.set_code(OutcomeCode(code));
      // Reasons quote user input (a parameter value): cut here, so the
      // report stays within what the controller stores.
      outcome.set_reason(TruncateReason(reason));
      outcomes.push_back(outcome);
    };
    if (cancelled.load()) {
      finish(v1::TASK_STATE_CANCELLED, absl::StatusCode::kCancelled,
             "cancelled before it started");
      continue;
    }
    Benchmark* bench = Find(spec.name());
    if (bench == nullptr) {
      finish(v1::TASK_STATE_FAILED, absl::StatusCode::kNotFound,
             absl::StrCat("unknown benchmark '", spec.name(), "'"));
      continue;
    }
    if (absl::Status probe = bench->Probe(); !probe.ok()) {
      finish(v1::TASK_STATE_SKIPPED, probe.code(), std::string(probe.message()));
      continue;
    }
    const bool in_group = task.has_group() && bench->collective();
    if (in_group && hooks.rendezvous == nullptr) {
      finish(v1::TASK_STATE_SKIPPED, absl::StatusCode::kFailedPrecondition,
             "runs as a group: start it through a controller with its members");
      continue;
    }
    if (bench->pairwise() && !hooks.publish_port) {
      finish(v1::TASK_STATE_SKIPPED, absl::StatusCode::kFailedPrecondition,
             "runs between two nodes: start it through a controller with two agents");
      continue;
    }
    Params params(spec.params().begin(), spec.params().end());
    if (absl::Status valid = bench->ValidateParams(params); !valid.ok()) {
      finish(v1::TASK_STATE_FAILED, valid.code(), std::string(valid.message()));
      continue;
    }
    if (spec.timeout_ms() < 0) {
      finish(v1::TASK_STATE_FAILED, absl::StatusCode::kInvalidArgument,
             absl::StrCat("timeout_ms ", spec.timeout_ms(), " is negative"));
      continue;
    }
    const absl::Duration timeout = spec.timeout_ms() > 0
                                       ? absl::Milliseconds(spec.timeout_ms())
                                       : bench->DefaultTimeout(params);
    auto progress = [&, i](double fraction, const std::string& message) {
      if (!hooks.progress) return;
      v1::Progress p;
      p.set_task_id(task.task_id());
      p.set_benchmark(spec.name());
      p.set_fraction((i + std::clamp(fraction, 0.0, 1.0)) / total);
      p.set_message(message);
      hooks.progress(p);
    };
    progress(0, "starting");
    RunContext::PublishPortFn publish;
    if (hooks.publish_port) {
      publish = [&](int port) { return hooks.publish_port(task.task_id(), port); };
    }
    std::vector<v1::Sample> kept;
    auto keep = [&kept](std::vector<v1::Sample> samples) {
      for (v1::Sample& s : samples) kept.push_back(std::move(s));
    };
    // Metrics the plugin declares as it runs go out with its samples;
    // the newest declaration of a name wins.
    std::map<std::string, v1::MetricDescriptor> declared;
    auto declare = [&declared, &spec](const v1::MetricDescriptor& metric) {
      v1::MetricDescriptor& d = declared[metric.name()];
      d = metric;
      d.set_benchmark(spec.name());
    };
    RunContext context(scratch_dir_, &cancelled, progress, publish, keep, declare);
    context.set_keep_log([&log, &spec](std::string text) {
      absl::StrAppend(&log, "== ", spec.name(), " ==\n", text);
      if (!text.empty() && text.back() != '\n') log += '\n';
      // Bounded as it grows: only the end is ever sent.
      if (log.size() > 2 * kMaxTaskLogBytes) log = LogTail(log);
    });
    context.set_deadline(absl::Now() + timeout);
    context.set_dataset_roots(dataset_roots_);
    GroupContext group;
    if (in_group) {
      const v1::GroupAssignment& g = task.group();
      group.group_id = g.group_id();
      group.rank = g.rank();
      group.size = g.size();
      for (const v1::GroupMember& m : g.members()) {
        group.member_nodes.push_back(m.node());
        group.member_addresses.push_back(m.address());
      }
      if (g.deadline_unix_ms() > 0) group.deadline = absl::FromUnixMillis(g.deadline_unix_ms());
      group.rendezvous = hooks.rendezvous;
      context.set_group(&group);
    }
    absl::StatusOr<std::vector<v1::Sample>> samples = bench->Run(params, context);
    if (samples.ok()) {
      for (v1::Sample& s : *samples) kept.push_back(std::move(s));
    }
    if (!kept.empty()) {
      v1::Report report;
      report.set_report_id(NewUlid());
      report.set_task_id(task.task_id());
      const int64_t now_ms = absl::ToUnixMillis(absl::Now());
      for (v1::Sample& s : kept) {
        s.set_id(NewUlid());
        s.set_run_id(task.run_id());
        s.set_benchmark(spec.name());
        if (s.time_unix_ms() == 0) s.set_time_unix_ms(now_ms);
        *report.add_samples() = std::move(s);
      }
      for (const auto& [name, d] : declared) *report.add_metrics() = d;
      hooks.report(report);
    }
    if (!samples.ok()) {
      // The deadline, not the user, ended it: a cancel the plugin saw
      // through cancelled(), or an error on the way out (a peer that gave
      // up at its own deadline).
      if (!cancelled.load() && context.deadline_passed()) {
        finish(v1::TASK_STATE_FAILED, absl::StatusCode::kDeadlineExceeded,
               absl::StrCat("ran past its timeout of ", absl::FormatDuration(timeout),
                            " and was cancelled (", samples.status().message(), ")"));
      } else if (absl::IsCancelled(samples.status())) {
        finish(v1::TASK_STATE_CANCELLED, absl::StatusCode::kCancelled,
               std::string(samples.status().message()));
      } else {
        finish(v1::TASK_STATE_FAILED, samples.status().code(),
               std::string(samples.status().message()));
      }
      continue;
    }
    finish(v1::TASK_STATE_SUCCEEDED, absl::StatusCode::kOk, "");
  }
  const v1::TaskState state = TaskStateFromOutcomes(outcomes);
  std::string reason;
  for (const auto& o : outcomes) {
    if (o.state() == v1::TASK_STATE_FAILED) {
      reason = ReasonOf(o.benchmark(), o.reason());
      break;
    }
  }
  hooks.report(FinalReport(task.task_id(), state, reason, outcomes, log));
}

}  // namespace fleetbench::agent
