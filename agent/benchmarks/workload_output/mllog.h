// agent/benchmarks/workload_output/mllog.h — metrics from an MLPerf
// training log in a workload's output.
//
// Format (mlcommons/logging, mlperf_logging/mllog): one event a line
// (wrapped here),
//
//   :::MLLOG {"namespace": "", "time_ms": 1721026606541,
//             "event_type": "INTERVAL_START", "key": "run_start",
//             "value": null, "metadata": {"file": "train.py", "lineno": 129}}
//
// event_type is POINT_IN_TIME, INTERVAL_START or INTERVAL_END. Launchers put
// text before the tag ("0: " from srun --label, a timestamp); like the MLPerf
// compliance checker, the reader takes the line from its last ":::MLLOG ".
// Lines without the tag are not the log's and are skipped.
//
// What it reads, and the metrics it gives (Metrics()):
//  - "throughput" (samples/s, higher is better): the value of key
//    "tracked_stats" when it is an object with a "throughput" number (what
//    the MLPerf reference implementations log after each block or epoch),
//    or of key "throughput" as a number or such an object. With several,
//    the median: the first block carries warm-up (compilation, cold caches)
//    and the last may be cut short, and the median is moved by neither.
//    MLPerf does not fix the unit of that throughput; the reference
//    implementations mostly count samples, so samples/s it is. The reader
//    cannot tell when a log counts something else (tokens): such a workload
//    reports its own with FLEETBENCH_METRIC lines (metric_line.h).
//  - "run_time_s" (s, lower is better): time_ms of the first "run_stop" less
//    that of the first "run_start" before it (the MLPerf time-to-train). A
//    log holding several runs gives its first.
//  - run_status(): the "status" of the first run_stop's metadata, "success"
//    or "aborted" as MLPerf writes it; not a metric, since it says whether
//    the other numbers count at all.
//
// Errors: a line with the tag that is malformed (not a JSON object, over
// kMaxMllogLineBytes, a missing or mistyped "key", "event_type" or
// "time_ms", a throughput or status of the wrong type, a status that is not
// 1 to 32 printable ASCII characters, a run_stop before its run_start) is
// skipped and counted; first_error() says which line and why
// (INVALID_ARGUMENT). Any byte string is safe input. Note that Python's json
// writes NaN for a NaN value, which JSON does not allow: such a line counts
// as malformed.
//
// Thread safety: none; one reader per output stream, fed in order.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_MLLOG_H_
#define FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_MLLOG_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "agent/benchmarks/workload_output/workload_metric.h"

namespace fleetbench::agent {

inline constexpr absl::string_view kMllogTag = ":::MLLOG ";
// Real lines are a few hundred bytes; the bound keeps a runaway line (a
// whole tensor printed as the value) from being parsed at all.
inline constexpr size_t kMaxMllogLineBytes = 64 * 1024;

class MllogReader {
 public:
  // Reads the next line of output (a trailing "\n" or "\r\n" is allowed).
  void AddLine(absl::string_view line);

  // throughput and run_time_s, each when the log had what it needs, in that
  // order. Every one passes CheckWorkloadMetric.
  std::vector<WorkloadMetric> Metrics() const;

  // The status run_stop gave, or nullopt before a run_stop with one.
  const std::optional<std::string>& run_status() const { return run_status_; }

  // Lines given to AddLine, with the tag or not.
  int lines() const { return lines_; }
  // Lines with the tag that were malformed, and the first one's error (OK
  // when none was).
  int malformed_lines() const { return malformed_lines_; }
  const absl::Status& first_error() const { return first_error_; }

 private:
  absl::Status ReadEvent(absl::string_view json);

  int lines_ = 0;
  int malformed_lines_ = 0;
  absl::Status first_error_;
  std::vector<double> throughputs_;
  std::optional<double> run_start_ms_;
  std::optional<double> run_stop_ms_;
  bool run_stop_seen_ = false;
  std::optional<std::string> run_status_;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_OUTPUT_MLLOG_H_
