// agent/benchmarks/workload_output/metric_line.h — the line a user's
// workload prints to report a metric of its own.
//
// Format: one line, the prefix and one JSON object with exactly four fields
// (wrapped here):
//
//   FLEETBENCH_METRIC {"name": "samples_per_s", "value": 1234.5,
//                      "unit": "samples/s", "direction": "higher"}
//
//   name       string, [a-z0-9_]{1,64}
//   value      number, finite (JSON has no NaN or Infinity)
//   unit       string, 1..32 printable ASCII characters
//   direction  string, "higher" (higher is better) or "lower"
//
// The prefix starts the line, with no whitespace before it: a workload's
// other output (a log message quoting a metric line, an indented table) is
// then never taken for one. A line is at most kMaxMetricLineBytes bytes, its
// end of line not counted.
//
// Errors: ParseMetricLine returns INVALID_ARGUMENT with one line a user can
// act on: the field and its problem (missing, wrong type, bad pattern, out of
// range, unknown field), or why the text is no JSON object, or the length.
// Any byte string is safe input: it is refused or parsed into a metric that
// passes CheckWorkloadMetric. Pure functions, thread-safe.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_METRIC_LINE_H_
#define FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_METRIC_LINE_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/benchmarks/workload_output/workload_metric.h"

namespace fleetbench::agent {

inline constexpr absl::string_view kMetricLinePrefix = "FLEETBENCH_METRIC ";
inline constexpr size_t kMaxMetricLineBytes = 4096;

// True when `line` starts with kMetricLinePrefix.
bool IsMetricLine(absl::string_view line);

// The metric on `line` (a trailing "\n" or "\r\n" is allowed).
absl::StatusOr<WorkloadMetric> ParseMetricLine(absl::string_view line);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_METRIC_LINE_H_
