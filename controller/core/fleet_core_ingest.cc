// FleetCore: ingest. Reports are validated against the task in flight,
// committed in batches (one transaction per batch), acknowledged only once
// durable, and only then allowed to end their task. Reports for tasks that
// already ended keep their samples and change no state. A sample the bounds
// refuse does not cost the report its good samples: those are stored, the
// task fails with what was refused, and the ack tells the agent. A report
// whose envelope is refused (a reason too long, too many samples) while its
// task is in flight still ends that task, failed with the refusal: acking it
// and leaving the task running would wedge its node. An ack never
// hides a refusal: `error` says what was not stored.
#include "controller/core/fleet_core.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/api_enums.h"
#include "common/logging.h"
#include "common/reason.h"
#include "controller/core/report_limits.h"

namespace fleetbench::controller {

namespace {

absl::Status CheckTaskOwner(const storage::TaskRecord& task, const std::string& node) {
  if (task.node != node) {
    return absl::PermissionDeniedError(
        absl::StrCat("task ", task.task_id, " belongs to node ", task.node));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status FleetCore::CheckReportInFlight(const std::string& node,
                                            const v1::Report& report) const {
  const storage::TaskRecord* task = live_.FindTask(report.task_id());
  if (task == nullptr) {
    return absl::NotFoundError(absl::StrCat("task ", report.task_id(),
                                            " is not in flight"));
  }
  return CheckTaskOwner(*task, node);
}

void FleetCore::DropRefused(PendingReport& p) {
  const absl::Time latest = clock_->Now() + options_.max_sample_clock_skew;
  std::string dropped = DropRefusedSamples(&p.report, latest);
  if (dropped.empty()) return;
  p.refused = p.refused.empty() ? dropped : absl::StrCat(p.refused, "; ", dropped);
}

absl::StatusOr<storage::TaskRecord> FleetCore::EndedTask(const std::string& task_id) {
  if (const storage::TaskRecord* unstored = live_.UnstoredEnd(task_id)) return *unstored;
  return store_->GetTask(task_id);
}

void FleetCore::RecomputeRun(const std::string& run_id) {
  if (!live_.HasRun(run_id)) {
    absl::StatusOr<storage::RunRecord> run = store_->GetRun(run_id);
    if (!run.ok()) {
      NoteStoreFailure(run.status(), absl::StrCat("reading run ", run_id));
      live_.NoteUnsettled(run_id);
      return;
    }
    live_.AddRun(*std::move(run));
  }
  UpdateRunState(run_id);
}

FleetCore::LateResult FleetCore::StoreLateReport(PendingReport& p, absl::Status* why) {
  // A report for a task that already ended: a resend after a lost ack, or
  // the spool of an agent whose task was declared lost. What was measured
  // is kept (ids make it idempotent); the task's end state stays, but for
  // a task declared lost, which its final report settles.
  absl::StatusOr<storage::TaskRecord> task = EndedTask(p.report.task_id());
  if (absl::IsNotFound(task.status())) {
    *why = absl::NotFoundError(absl::StrCat("task ", p.report.task_id(), " is not in flight"));
    return LateResult::kDrop;
  }
  if (!task.ok()) {
    // Not knowing is not "no such task": hold it, unacknowledged.
    NoteStoreFailure(task.status(), "reading the task of a late report");
    return LateResult::kStoreFailed;
  }
  if (absl::Status owner = CheckTaskOwner(*task, p.node); !owner.ok()) {
    *why = owner;
    return LateResult::kDrop;
  }
  DropRefused(p);
  storage::Store::ReportWrite w;
  for (v1::Sample& sample : *p.report.mutable_samples()) {
    sample.set_run_id(task->run_id);
    sample.set_node(p.node);
    w.samples.push_back(sample);
  }
  // Lost means the controller stopped hearing from the agent, not that the
  // task failed: when its final report arrives after all (a partition
  // healed, a stopped agent resumed), it says how the task ended.
  storage::TaskRecord settled;
  // A group member stays lost: its group ended around it, and the others'
  // reasons name it.
  const bool settles = p.report.task_finished() && task->state == v1::TASK_STATE_LOST &&
                       IsTerminal(p.report.task_state()) && task->group_id.empty();
  if (settles) {
    settled = *task;
    settled.state = p.refused.empty() ? p.report.task_state() : v1::TASK_STATE_FAILED;
    std::string note = absl::StrCat("final report arrived late, after the task was declared "
                                    "lost (", task->reason, ")");
    if (!p.refused.empty()) note = absl::StrCat(p.refused, "; ", note);
    if (!p.report.task_reason().empty()) absl::StrAppend(&note, "; ", p.report.task_reason());
    settled.reason = TruncateReason(note);
    settled.outcomes.assign(p.report.outcomes().begin(), p.report.outcomes().end());
    settled.updated = clock_->Now();
    w.task = &settled;
    w.task_log = p.report.task_log();
  }
  if (w.samples.empty() && !settles) return LateResult::kStored;
  absl::StatusOr<int> stored = store_->CommitReports({w});
  if (!stored.ok()) {
    NoteStoreFailure(stored.status(), "storing a late report");
    return LateResult::kStoreFailed;
  }
  {
    absl::MutexLock lock(&stats_mu_);
    stats_.samples_stored += *stored;
    stats_.samples_duplicate += static_cast<int64_t>(w.samples.size()) - *stored;
    stats_.reports_committed += 1;
    stats_.commits += 1;
  }
  DeclareReportMetrics(p.node, p.report);
  if (settles) {
    live_.EndStored(settled.task_id);
    LOG(INFO) << "task " << settled.task_id << " on " << p.node << " settled "
              << TaskStateName(settled.state) << " by its late final report";
    RecomputeRun(settled.run_id);
  }
  return LateResult::kStored;
}

void FleetCore::DeclareReportMetrics(const std::string& node, const v1::Report& report) {
  if (report.metrics().empty()) return;
  const NodeSessions::Session* session = sessions_.Find(node);
  if (session == nullptr) return;
  std::vector<v1::MetricDescriptor> allowed;
  for (const v1::MetricDescriptor& m : report.metrics()) {
    // Only under the prefix the node's hello gave that benchmark: a report
    // cannot redefine another plugin's metric (gemm's unit, say).
    const bool under_prefix =
        std::any_of(session->capabilities.begin(), session->capabilities.end(),
                    [&m](const v1::Capability& c) {
                      return c.benchmark() == m.benchmark() &&
                             !c.dynamic_metric_prefix().empty() &&
                             absl::StartsWith(m.name(), c.dynamic_metric_prefix());
                    });
    // And only a metric the report measures, under that benchmark: a report
    // cannot declare, ahead of them, the names another workload will use.
    const bool measured =
        std::any_of(report.samples().begin(), report.samples().end(), [&m](const v1::Sample& s) {
          return s.metric() == m.name() && s.benchmark() == m.benchmark();
        });
    if (under_prefix && measured) allowed.push_back(m);
  }
  declared_metrics_.DeclareAtRunTime(node, allowed);
}

void FleetCore::CommitReports(std::vector<PendingReport>& batch) {
  if (store_retry_.holding()) {
    // Earlier reports wait for the store: these go behind them, in order,
    // and are committed by the next retry.
    store_retry_.Hold(batch, clock_->Now());
    return;
  }
  CommitBatch(batch);
}

void FleetCore::CommitBatch(std::vector<PendingReport>& batch) {
  const absl::Time now = clock_->Now();
  struct Accepted {
    PendingReport* pending;
    storage::TaskRecord final_task;  // valid when finishing
    bool finishes = false;
    // The task ended here, not at the agent: tell it to stop measuring.
    bool stops_agent = false;
  };
  std::vector<Accepted> accepted;
  std::vector<PendingReport*> ack_only;  // stored on the late path, or dropped
  std::vector<PendingReport> unstored;   // the late path could not store them
  accepted.reserve(batch.size());
  for (PendingReport& p : batch) {
    p.node = sessions_.NodeOf(p.link);
    if (p.node.empty()) continue;  // stale stream: no ack, the agent resends
    sessions_.Touch(p.node, now);
    // The report a hello promised has come (stored or not, it is here).
    if (p.report.task_finished()) live_.ReportCame(p.report.task_id());
    absl::Status s = CheckReportInFlight(p.node, p.report);
    if (absl::Status envelope = CheckReportEnvelope(p.report); !envelope.ok()) {
      if (s.ok()) {
        // Its task is in flight and this node's: end it with the refusal,
        // keeping what can be stored.
        p.refused = absl::StrCat("report refused: ", envelope.message());
        ClampReportEnvelope(&p.report);
      } else {
        s = envelope;
      }
    }
    if (absl::IsNotFound(s)) {
      absl::Status why;
      switch (StoreLateReport(p, &why)) {
        case LateResult::kStored:
          ack_only.push_back(&p);  // stored; ack, no task transition here
          continue;
        case LateResult::kStoreFailed:
          unstored.push_back(std::move(p));  // no ack: held and retried
          continue;
        case LateResult::kDrop:
          s = why;
          break;
      }
    }
    if (!s.ok()) {
      // Already stored and finished (a resend after our ack was lost), or
      // garbage for no task of this node's. Either way, storing it again
      // would be wrong; ack so the agent stops resending, saying why.
      LOG(WARNING) << "report " << p.report.report_id() << " from " << p.node
                   << " dropped: " << s;
      p.refused = absl::StrCat("report dropped: ", s.message());
      ack_only.push_back(&p);
      continue;
    }
    Accepted a{&p, {}, false};
    storage::TaskRecord& task = *live_.FindTask(p.report.task_id());
    NoteGroupHeadline(task, p.report);
    DropRefused(p);
    for (v1::Sample& sample : *p.report.mutable_samples()) {
      // Trust the task, not the agent, for where a sample belongs.
      sample.set_run_id(task.run_id);
      sample.set_node(p.node);
    }
    if (p.report.task_finished() || !p.refused.empty()) {
      a.finishes = true;
      a.final_task = task;
      a.final_task.state = p.report.task_state();
      a.final_task.reason = p.report.task_reason();
      a.final_task.outcomes.assign(p.report.outcomes().begin(), p.report.outcomes().end());
      a.final_task.updated = now;
    }
    if (!p.refused.empty()) {
      // The task's numbers are incomplete: it cannot count as succeeded.
      a.final_task.state = v1::TASK_STATE_FAILED;
      a.final_task.reason = TruncateReason(
          a.final_task.reason.empty() ? p.refused
                                      : absl::StrCat(p.refused, "; ", a.final_task.reason));
      a.stops_agent = !p.report.task_finished();
    }
    if (a.finishes) groups_.ShapeMemberEnd(a.final_task);
    accepted.push_back(std::move(a));
  }

  auto ack = [](PendingReport* p) {
    v1::ControllerMessage msg;
    msg.mutable_ack()->set_report_id(p->report.report_id());
    msg.mutable_ack()->set_error(TruncateReason(p->refused));
    p->link->Send(msg);
  };
  // What the late path stored, or dropped as no task's, is settled either
  // way; it is acknowledged whatever happens to the commit below.
  for (PendingReport* p : ack_only) ack(p);

  std::vector<storage::Store::ReportWrite> writes;
  writes.reserve(accepted.size());
  int64_t total = 0;
  for (Accepted& a : accepted) {
    storage::Store::ReportWrite w;
    w.samples.assign(a.pending->report.samples().begin(), a.pending->report.samples().end());
    total += static_cast<int64_t>(w.samples.size());
    if (a.finishes) {
      w.task = &a.final_task;
      w.task_log = a.pending->report.task_log();
    }
    writes.push_back(std::move(w));
  }
  if (!writes.empty()) {
    // Real time, not clock_: the latency of the disk, whatever the clock
    // a test injects says.
    const absl::Time commit_start = absl::Now();
    absl::StatusOr<int> stored = store_->CommitReports(writes);
    const absl::Duration commit_took = absl::Now() - commit_start;
    if (!stored.ok()) {
      // Nothing is acked: the reports are held and retried.
      NoteStoreFailure(stored.status(), absl::StrCat("committing ", writes.size(), " reports"));
      for (Accepted& a : accepted) unstored.push_back(std::move(*a.pending));
      store_retry_.Hold(unstored, clock_->Now());
      return;
    }
    absl::MutexLock lock(&stats_mu_);
    stats_.samples_stored += *stored;
    stats_.samples_duplicate += total - *stored;
    stats_.reports_committed += static_cast<int64_t>(writes.size());
    stats_.commits += 1;
    stats_.ingest_commit_latency.Observe(commit_took);
  }
  if (!unstored.empty()) {
    store_retry_.Hold(unstored, clock_->Now());
  } else if (!writes.empty()) {
    NoteStoreOk();
  }
  // Durable now: acknowledge, then apply the task transitions.
  for (Accepted& a : accepted) {
    DeclareReportMetrics(a.pending->node, a.pending->report);
    ack(a.pending);
    if (a.stops_agent) {
      v1::ControllerMessage cancel;
      cancel.mutable_cancel_task()->set_task_id(a.final_task.task_id);
      a.pending->link->Send(cancel);
    }
  }
  bool any_finished = false;
  for (Accepted& a : accepted) {
    if (!a.finishes) continue;
    if (live_.FindTask(a.final_task.task_id) == nullptr) continue;
    live_.EndTask(a.final_task.task_id);
    SettlePairPartner(a.final_task);
    SettleGroup(a.final_task);
    UpdateRunState(a.final_task.run_id);
    any_finished = true;
  }
  if (any_finished) TryDispatch();
}

}  // namespace fleetbench::controller
