// controller/core/report_limits.h — bounds on what an agent may send. Every
// field of a hello and of a report is checked before it reaches the store.
#ifndef FLEETBENCH_CONTROLLER_CORE_REPORT_LIMITS_H_
#define FLEETBENCH_CONTROLLER_CORE_REPORT_LIMITS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/reason.h"
#include "common/wire_limits.h"
#include "fleetbench/v1/agent.pb.h"

namespace fleetbench::controller {

inline constexpr int kMaxSamplesPerReport = 20000;
inline constexpr int kMaxParamsPerSample = 64;
inline constexpr int kMaxOutcomesPerReport = 64;
inline constexpr size_t kMaxNameLength = 128;     // metric, benchmark
inline constexpr size_t kMaxParamLength = kMaxParamValueBytes;  // key or value
// Shared with the agent, which cuts its reasons to fit.
using ::fleetbench::kMaxReasonLength;

inline constexpr int kMaxMetricsPerCapability = 256;
// Metrics a report declares at run time (a workload's own).
inline constexpr int kMaxMetricsPerReport = 64;
inline constexpr size_t kMaxUnitLength = 32;
inline constexpr size_t kMaxDescriptionLength = 256;

// INVALID_ARGUMENT naming the first offending field, samples included. A
// final report (task_finished) must say how the task ended: a state that is
// not terminal (running, queued) is refused as part of the envelope.
absl::Status CheckReportBounds(const v1::Report& report);
// The same for everything but the samples: a report that fails this is
// refused whole; one whose envelope passes keeps its good samples. The
// envelope includes the metrics declared at run time (at most
// kMaxMetricsPerReport, each as CheckMetricDescriptor says, naming its
// benchmark); whether the node's capability allows their names is the
// core's check, against the hello. A task_log comes only on a final report,
// at most kMaxTaskLogBytes.
absl::Status CheckReportEnvelope(const v1::Report& report);
// Makes a report whose envelope was refused storable as the end of its
// task: reasons cut to kMaxReasonLength, outcome names to kMaxNameLength,
// outcomes past kMaxOutcomesPerReport dropped, and every sample dropped when there are more
// than kMaxSamplesPerReport (the others still face CheckSampleBounds), and
// the metrics it declares dropped. The
// report_id is left as sent: the ack must echo it.
void ClampReportEnvelope(v1::Report* report);
// INVALID_ARGUMENT saying what is wrong with one sample; with `latest`, a
// sample dated after it is refused too (the controller passes its clock
// plus the allowed skew).
absl::Status CheckSampleBounds(const v1::Sample& sample,
                               absl::Time latest = absl::InfiniteFuture());
// Removes the samples CheckSampleBounds refuses, keeping the others in
// order. Returns "" when none was refused, else what to tell the agent and
// store as the task's reason: "2 of 40 samples refused; sample 3: value is
// not finite" (the index is the sample's place in the report as sent).
std::string DropRefusedSamples(v1::Report* report,
                               absl::Time latest = absl::InfiniteFuture());
// The metric descriptors a hello's capability declares: a valid metric
// name, a unit of 1..32 characters, higher or lower is better, a
// description of at most 256 characters, and a benchmark that is empty or
// the capability's. INVALID_ARGUMENT naming the first offending metric.
absl::Status CheckDeclaredMetrics(const v1::Capability& capability);
// One metric descriptor, as CheckDeclaredMetrics checks each; `benchmark`
// is the one it must name (or leave empty).
absl::Status CheckMetricDescriptor(const v1::MetricDescriptor& m, const std::string& benchmark);
// The workloads a capability declares: at most kMaxWorkloadsPerNode,
// valid names, at most kMaxWorkloadParams parameters each with a valid
// pattern (common/workload_params.h).
absl::Status CheckDeclaredWorkloads(const v1::Capability& capability);
// INVALID_ARGUMENT unless `name` is 1..64 of letters, digits, '-', '_', '.'.
absl::Status CheckNodeName(const std::string& name);
// INVALID_ARGUMENT when a hello's name (CheckNodeName), facts, labels or
// lists are out of bounds; its capabilities face CheckDeclaredMetrics.
absl::Status CheckHello(const v1::Hello& hello);
// Metric names: lower-case letters, digits, '_' and '.', 3..128 chars,
// at least one dot (the unit is the last component).
bool IsValidMetricName(const std::string& name);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_REPORT_LIMITS_H_
