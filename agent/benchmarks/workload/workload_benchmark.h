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
//     group's peak resident memory);
//   - every sample carries the resolved parameter values and the
//     manifest's work unit as params.
// Failures: a command that exits non-zero, is killed, or runs past the
// deadline fails the benchmark with the last lines of its output in the
// reason; a malformed metric line fails it naming the line number. The
// good samples are kept either way (RunContext::KeepSamples).
//
// Without workloads declared the plugin is unavailable (Probe says how to
// declare one). Thread-compatible, like every plugin.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_WORKLOAD_BENCHMARK_H_
#define FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_WORKLOAD_BENCHMARK_H_

#include <string>
#include <vector>

#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/workload/workload_manifest.h"

namespace fleetbench::agent {

inline constexpr char kWorkloadMetricPrefix[] = "workload.";

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
  const Workload* Find(const Params& params) const;

  std::vector<Workload> workloads_;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_WORKLOAD_BENCHMARK_H_
