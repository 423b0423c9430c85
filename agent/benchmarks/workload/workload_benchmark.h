// agent/benchmarks/workload/workload_benchmark.h — the `workload` plugin: a
// team's own job step, run by name (docs/workloads.md).
//
// A workload is a command a node's operator declares on that node
// (workload_manifest.h); a run names it (`--param workload.name=NAME`) and
// may give values for its declared parameters, never a command. Run():
//   - resolves the values (common/workload_params.h) and expands the
//     command; runs it as one supervised process tree
//     (workload_process/workload_process.h) in the manifest's cwd, else
//     the task's scratch folder, under the run's deadline;
//   - turns its output into samples: each `FLEETBENCH_METRIC {...}` stdout
//     line (workload_output/metric_line.h) and MLPerf `:::MLLOG` lines
//     (mllog.h) become `workload.NAME.METRIC` with the line's unit and
//     direction, declared to the controller at run time
//     (RunContext::DeclareMetric); with every run also
//     `workload.NAME.wall_s` (the command's wall time),
//     `workload.NAME.setup_s` (to its first output), and what it used:
//     `cpu_cores` (CPU time over wall) and `peak_rss_mb` (its process
//     group's peak resident memory); and per block device under its cwd
//     and the node's dataset roots, `disk_read_MBps` and `disk_busy_pct`
//     over the run (disk_activity.h), with the device as a param;
//   - keeps what it printed, less the metric lines and with the values of
//     secret-looking env variables masked, as the task's log
//     (RunContext::KeepLog);
//   - every sample carries the resolved parameter values (those up to
//     kMaxWorkloadValueOnSample bytes) and the manifest's work unit as
//     params;
//   - a LoadGen summary named by the manifest is removed before the
//     command starts and read only after it exits 0, as a regular file
//     (no link followed).
// Bounds: a metric line may not use a fixed name, change the unit its name
// came with, or go past kMaxWorkloadMetricNames names or
// kMaxWorkloadSamples lines; such a line fails the run like a malformed
// one (the good samples are kept).
// Failures: a command that exits non-zero, is killed, or runs past the
// deadline fails the benchmark with the last lines of its output in the
// reason; a malformed metric line fails it naming the line number. The
// good samples are kept either way (RunContext::KeepSamples).
//
// Without workloads declared the plugin is unavailable (Probe says how to
// declare one). Thread-compatible, like every plugin.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_WORKLOAD_BENCHMARK_H_
#define FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_WORKLOAD_BENCHMARK_H_

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/workload/workload_manifest.h"
#include "common/workload_params.h"

namespace fleetbench::agent {

// Bounds on what one run's output becomes: metric names of its own (the
// fixed ones aside), metric-line samples, and the length of a parameter
// value copied onto every sample.
inline constexpr size_t kMaxWorkloadMetricNames = 32;
inline constexpr size_t kMaxWorkloadSamples = 1000;
inline constexpr size_t kMaxWorkloadValueOnSample = 128;

class WorkloadBenchmark : public Benchmark {
 public:
  explicit WorkloadBenchmark(std::vector<Workload> workloads) : workloads_(std::move(workloads)) {}

  std::string name() const override { return "workload"; }
  absl::Status Probe() const override;
  // Needs `name`; on an agent, a declared workload and values its patterns
  // take. (The controller's copy has no workloads: it checks the name's
  // form, and the nodes' declarations before it stores a run.)
  absl::Status ValidateParams(const Params& params) const override;
  // None fixed: a workload's metrics are declared by its own output, at
  // run time, under kWorkloadMetricPrefix.
  std::vector<MetricInfo> metrics() const override { return {}; }
  std::string dynamic_metric_prefix() const override { return kWorkloadMetricPrefix; }
  void Describe(v1::Capability* capability) const override;
  absl::Duration DefaultTimeout(const Params& params) const override;
  absl::StatusOr<std::vector<v1::Sample>> Run(const Params& params,
                                              const RunContext& context) override;

 private:
  struct Resolved {
    const Workload* workload;
    std::map<std::string, std::string> values;  // every declared parameter's
  };
  const Workload* Find(const Params& params) const;
  // OK when `params` names a workload in a valid form.
  absl::Status CheckNamed(const Params& params) const;
  // The named workload on this node and its parameter values.
  absl::StatusOr<Resolved> Resolve(const Params& params) const;

  std::vector<Workload> workloads_;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_WORKLOAD_BENCHMARK_H_
