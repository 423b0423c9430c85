#include "controller/core/report_limits.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/api_enums.h"
#include "common/ulid.h"
#include "common/wire_limits.h"
#include "common/workload_params.h"

namespace fleetbench::controller {
namespace {

bool IsNodeNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '-' || c == '_' || c == '.';
}

}  // namespace

absl::Status CheckNodeName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNodeNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("node name must be 1..", kMaxNodeNameBytes, " characters"));
  }
  for (char c : name) {
    if (!IsNodeNameChar(c)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node name '", ClipInput(name), "' may use only letters, digits, '-', '_', '.'"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckHello(const v1::Hello& hello) {
  if (absl::Status s = CheckNodeName(hello.name()); !s.ok()) return s;
  // Sizes before contents: whatever a hello stores comes back in every
  // ListNodes answer, for every user. Facts first: the likelier culprit.
  if (const size_t bytes = hello.facts().ByteSizeLong(); bytes > kMaxFactsBytes) {
    return absl::InvalidArgumentError(absl::StrCat("node facts are ", bytes, " bytes; at most ",
                                                   kMaxFactsBytes, " (docs/protocol.md, Bounds)"));
  }
  if (const size_t bytes = hello.ByteSizeLong(); bytes > kMaxHelloBytes) {
    return absl::InvalidArgumentError(absl::StrCat("hello is ", bytes, " bytes; at most ",
                                                   kMaxHelloBytes));
  }
  if (hello.labels_size() > kMaxLabels) {
    return absl::InvalidArgumentError(absl::StrCat("at most ", kMaxLabels, " labels"));
  }
  for (const auto& [k, v] : hello.labels()) {
    if (absl::Status s = CheckLabel("label", k, v); !s.ok()) return s;
  }
  if (hello.advertise_addr().size() > 255) {
    return absl::InvalidArgumentError("advertise_addr too long");
  }
  if (hello.capabilities_size() > 256 || hello.finished_task_ids_size() > 10000) {
    return absl::InvalidArgumentError("hello lists too many entries");
  }
  for (const v1::Capability& capability : hello.capabilities()) {
    if (absl::Status s = CheckDeclaredMetrics(capability); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool IsValidMetricName(const std::string& name) {
  if (name.size() < 3 || name.size() > kMaxNameLength) return false;
  if (name.front() == '.' || name.back() == '.') return false;
  bool dot = false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '.';
    if (!ok) return false;
    dot |= c == '.';
  }
  return dot;
}

absl::Status CheckDeclaredMetrics(const v1::Capability& capability) {
  if (capability.metrics_size() > kMaxMetricsPerCapability) {
    return absl::InvalidArgumentError(
        absl::StrCat("benchmark ", capability.benchmark().substr(0, kMaxNameLength), " declares ",
                     capability.metrics_size(), " metrics; at most ", kMaxMetricsPerCapability));
  }
  for (const v1::MetricDescriptor& m : capability.metrics()) {
    if (absl::Status s = CheckMetricDescriptor(m, capability.benchmark()); !s.ok()) return s;
  }
  if (capability.dynamic_metric_prefix().size() > kMaxNameLength) {
    return absl::InvalidArgumentError("dynamic_metric_prefix too long");
  }
  return CheckDeclaredWorkloads(capability);
}

absl::Status CheckMetricDescriptor(const v1::MetricDescriptor& m, const std::string& benchmark) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("declared metric '", m.name().substr(0, 64),
                                                   "': ", why));
  };
  if (!IsValidMetricName(m.name())) return bad("bad metric name");
  if (m.unit().empty() || m.unit().size() > kMaxUnitLength) {
    return bad("unit must be 1..32 characters");
  }
  if (m.direction() != v1::METRIC_DIRECTION_HIGHER_IS_BETTER &&
      m.direction() != v1::METRIC_DIRECTION_LOWER_IS_BETTER) {
    return bad("direction must be higher or lower is better");
  }
  if (m.description().size() > kMaxDescriptionLength) return bad("description too long");
  if (!m.benchmark().empty() && m.benchmark() != benchmark) {
    return bad(absl::StrCat("declared under benchmark ", benchmark.substr(0, 64), " but names ",
                            m.benchmark().substr(0, 64)));
  }
  return absl::OkStatus();
}

absl::Status CheckDeclaredWorkloads(const v1::Capability& capability) {
  if (capability.workloads_size() > kMaxWorkloadsPerNode) {
    return absl::InvalidArgumentError(absl::StrCat("at most ", kMaxWorkloadsPerNode,
                                                   " workloads per node"));
  }
  for (const v1::WorkloadDeclaration& w : capability.workloads()) {
    if (absl::Status s = CheckWorkloadName(w.name()); !s.ok()) return s;
    if (w.params_size() > kMaxWorkloadParams || w.work_unit().size() > kMaxUnitLength) {
      return absl::InvalidArgumentError(
          absl::StrCat("workload ", w.name(), ": at most ", kMaxWorkloadParams,
                       " parameters and a work unit of at most ", kMaxUnitLength, " bytes"));
    }
    for (const auto& [key, param] : w.params()) {
      if (key.size() > 32 || param.default_().size() > kMaxWorkloadValueBytes ||
          param.pattern().size() > kMaxWorkloadPatternBytes) {
        return absl::InvalidArgumentError(
            absl::StrCat("workload ", w.name(), ": parameter ", ClipInput(key), " too long"));
      }
      if (absl::Status s = CheckWorkloadPattern(param.pattern()); !s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("workload ", w.name(), ": parameter ", key, ": ", s.message()));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckReportBounds(const v1::Report& report) {
  if (absl::Status s = CheckReportEnvelope(report); !s.ok()) return s;
  for (int i = 0; i < report.samples_size(); ++i) {
    if (absl::Status s = CheckSampleBounds(report.samples(i)); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("sample ", i, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckReportEnvelope(const v1::Report& report) {
  if (!IsUlid(report.report_id())) {
    return absl::InvalidArgumentError("report_id is not a ULID");
  }
  if (report.samples_size() > kMaxSamplesPerReport) {
    return absl::InvalidArgumentError(
        absl::StrCat("report has ", report.samples_size(), " samples; at most ",
                     kMaxSamplesPerReport));
  }
  if (report.task_finished() && !IsTerminal(report.task_state())) {
    return absl::InvalidArgumentError(
        absl::StrCat("a final report must end its task, but its state is ",
                     TaskStateName(report.task_state())));
  }
  if (report.task_reason().size() > kMaxReasonLength) {
    return absl::InvalidArgumentError("task_reason too long");
  }
  if (report.outcomes_size() > kMaxOutcomesPerReport) {
    return absl::InvalidArgumentError("too many outcomes");
  }
  if (report.task_log().size() > kMaxTaskLogBytes) {
    return absl::InvalidArgumentError(absl::StrCat("task_log is ", report.task_log().size(),
                                                   " bytes; at most ", kMaxTaskLogBytes));
  }
  if (!report.task_log().empty() && !report.task_finished()) {
    return absl::InvalidArgumentError("a task_log comes only on the final report");
  }
  if (report.metrics_size() > kMaxMetricsPerReport) {
    return absl::InvalidArgumentError(absl::StrCat("report declares ", report.metrics_size(),
                                                   " metrics; at most ", kMaxMetricsPerReport));
  }
  for (const v1::MetricDescriptor& m : report.metrics()) {
    if (m.benchmark().empty()) {
      return absl::InvalidArgumentError("a metric declared in a report must name its benchmark");
    }
    if (absl::Status s = CheckMetricDescriptor(m, m.benchmark()); !s.ok()) return s;
  }
  for (const v1::BenchmarkOutcome& o : report.outcomes()) {
    if (o.benchmark().size() > kMaxNameLength || o.reason().size() > kMaxReasonLength) {
      return absl::InvalidArgumentError("outcome field too long");
    }
  }
  return absl::OkStatus();
}

void ClampReportEnvelope(v1::Report* report) {
  if (report->samples_size() > kMaxSamplesPerReport) report->clear_samples();
  // Declarations in a refused envelope are not trusted: the samples stay,
  // ranked once their metrics are declared by a report that passes.
  report->clear_metrics();
  report->clear_task_log();
  report->set_task_reason(TruncateReason(report->task_reason()));
  if (report->outcomes_size() > kMaxOutcomesPerReport) {
    report->mutable_outcomes()->DeleteSubrange(kMaxOutcomesPerReport,
                                               report->outcomes_size() - kMaxOutcomesPerReport);
  }
  for (v1::BenchmarkOutcome& o : *report->mutable_outcomes()) {
    if (o.benchmark().size() > kMaxNameLength) o.mutable_benchmark()->resize(kMaxNameLength);
    o.set_reason(TruncateReason(o.reason()));
  }
}

absl::Status CheckSampleBounds(const v1::Sample& s, absl::Time latest) {
  auto bad = [](const std::string& why) { return absl::InvalidArgumentError(why); };
  if (!IsUlid(s.id())) return bad("id is not a ULID");
  if (!IsValidMetricName(s.metric())) {
    return bad(absl::StrCat("bad metric name '", s.metric().substr(0, 64), "'"));
  }
  if (s.benchmark().empty() || s.benchmark().size() > kMaxNameLength) {
    return bad("bad benchmark name");
  }
  if (s.unit().size() > kMaxUnitLength) return bad("unit too long");
  if (!std::isfinite(s.value())) return bad("value is not finite");
  if (latest != absl::InfiniteFuture() &&
      s.time_unix_ms() > absl::ToUnixMillis(latest)) {
    return bad(absl::StrCat("time ", absl::FormatTime(absl::FromUnixMillis(s.time_unix_ms())),
                            " is past the controller's clock by more than the allowed skew"));
  }
  if (s.params_size() > kMaxParamsPerSample) return bad("too many params");
  for (const auto& [k, v] : s.params()) {
    if (k.empty() || k.size() > kMaxParamLength || v.size() > kMaxParamLength) {
      return bad("param key or value out of bounds");
    }
  }
  return absl::OkStatus();
}

std::string DropRefusedSamples(v1::Report* report, absl::Time latest) {
  const int sent = report->samples_size();
  int refused = 0;
  std::string first;
  int kept = 0;
  for (int i = 0; i < sent; ++i) {
    absl::Status s = CheckSampleBounds(report->samples(i), latest);
    if (!s.ok()) {
      if (refused++ == 0) first = absl::StrCat("sample ", i, ": ", s.message());
      continue;
    }
    if (kept != i) report->mutable_samples()->SwapElements(kept, i);
    ++kept;
  }
  if (refused == 0) return "";
  report->mutable_samples()->DeleteSubrange(kept, sent - kept);
  return absl::StrCat(refused, " of ", sent, " samples refused; ", first);
}

}  // namespace fleetbench::controller
