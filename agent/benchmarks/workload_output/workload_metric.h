// agent/benchmarks/workload_output/workload_metric.h — one metric a user's
// workload reports, and the rules every such metric meets.
//
// The workload's output is read by the parsers beside this file
// (metric_line.h: its own FLEETBENCH_METRIC lines; mllog.h: an MLPerf
// training log; loadgen_summary.h: an MLPerf LoadGen summary); each returns
// only metrics that pass CheckWorkloadMetric, so whoever stores them need
// not check again. The rules keep a name usable as a part of a stored metric
// name, and a unit short and printable wherever it is shown.
//
// Pure value type and function; thread-safe.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_WORKLOAD_METRIC_H_
#define FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_WORKLOAD_METRIC_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "fleetbench/v1/metric.pb.h"

namespace fleetbench::agent {

struct WorkloadMetric {
  std::string name;  // [a-z0-9_]{1,64}: "samples_per_s"
  double value = 0;  // finite
  std::string unit;  // 1..32 printable ASCII characters: "samples/s"
  // HIGHER_IS_BETTER or LOWER_IS_BETTER, never UNSPECIFIED.
  v1::MetricDirection direction = v1::METRIC_DIRECTION_UNSPECIFIED;
};

inline constexpr int kMaxWorkloadMetricNameBytes = 64;
inline constexpr int kMaxWorkloadMetricUnitBytes = 32;

// OK when `metric` meets the rules above; else INVALID_ARGUMENT naming the
// field ("name", "value", "unit", "direction") and what is wrong with it.
absl::Status CheckWorkloadMetric(const WorkloadMetric& metric);

// True for 1 to 32 printable ASCII characters (0x20 to 0x7e): a unit, and
// the other words the parsers keep from a workload's output (a LoadGen
// scenario, an MLPerf run status), which are stored and shown as they are.
bool IsShortPrintableText(absl::string_view text);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_WORKLOAD_METRIC_H_
