// agent/benchmarks/workload_output/loadgen_summary.h — metrics from an MLPerf
// Inference LoadGen summary (mlperf_log_summary.txt).
//
// Format (mlcommons/inference, loadgen/results.cc, PerformanceSummary::
// LogSummary): "label : value" lines under a banner, e.g.
//
//   ================================================
//   MLPerf Results Summary
//   ================================================
//   SUT name : PySUT
//   Scenario : Offline
//   Mode     : PerformanceOnly
//   Samples per second: 82.1782
//   Tokens per second: 24109.8
//   Result is : VALID
//   ...
//   ================================================
//   Additional Stats
//   ================================================
//   ...
//
// Which lines appear, and in which section, has changed between LoadGen
// versions (a Server run's completed and scheduled rates have swapped
// places), so lines are found by label anywhere in the text, padding around
// the ':' ignored; the first line with a label counts (an LLM Server summary
// prints its completed tokens per second twice). The metrics, each present
// when its line is:
//
//   label                           metric                   unit
//   Samples per second              samples_per_s            samples/s
//   Tokens per second               tokens_per_s             tokens/s
//   Completed samples per second    completed_samples_per_s  samples/s
//   Scheduled samples per second    scheduled_samples_per_s  samples/s
//   Completed tokens per second     completed_tokens_per_s   tokens/s
//   90th percentile latency (ns)    p90_latency_ns           ns
//   90th first token percentile latency (ns)
//                                   p90_first_token_latency_ns  ns
//
// Rates are higher-is-better, latencies lower-is-better. The last two are
// SingleStream's and MultiStream's headline (99th there; "90.0th" in some
// versions, read as 90; "99.9th" gives p99_9_...). The percentile lines of
// "Additional Stats" ("90.00 percentile latency (ns)") are not read.
//
// Errors: INVALID_ARGUMENT when the text has no "MLPerf Results Summary"
// line, no "Result is : VALID|INVALID", no Scenario, a Scenario or Mode that
// is not 1 to 32 printable characters, no metric line, or a metric line
// whose value is not a finite, non-negative number; the message names the
// line. Pure function, thread-safe.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_LOADGEN_SUMMARY_H_
#define FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_LOADGEN_SUMMARY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/benchmarks/workload_output/workload_metric.h"

namespace fleetbench::agent {

struct LoadgenSummary {
  // As LoadGen wrote them: "Offline", "Server", "SingleStream" ("Single
  // Stream" in early versions); "PerformanceOnly" ("Performance" early).
  std::string scenario;
  std::string mode;  // empty when absent
  // "Result is : VALID": LoadGen's own constraints (min duration, latency
  // bound, early stopping) were met. Metrics of an INVALID run are returned
  // too; whether to keep them is the caller's choice.
  bool result_valid = false;
  std::vector<WorkloadMetric> metrics;  // in the order of their lines
};

absl::StatusOr<LoadgenSummary> ParseLoadgenSummary(absl::string_view text);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_LOADGEN_SUMMARY_H_
