// agent/benchmarks/mem_numa/mem_numa.h — "mem_numa": host memory bandwidth by
// NUMA placement: threads on one node's CPUs reading and writing memory on
// the same node (local) or on another node (remote). On a two-socket
// machine the remote figure is the cross-socket link, one of the hidden
// variables that make "the same instance type" train at different speeds.
//
// What it measures: for every placement of numa_topology.h's plan (each
// node with allowed CPUs × each node with memory, local ones first), the
// STREAM copy and triad kernels (stream_team.h, the "mem" plugin's own
// threads and loops) with one thread pinned to each allowed CPU of the CPU
// node and the three arrays bound to the memory node (numa_memory.h,
// MPOL_BIND, so the first touch cannot land elsewhere); `repetitions`
// repetitions, the first untimed, the best rate reported as STREAM does.
// The share of the arrays' pages found on the memory node after the run
// (move_pages) is in the params (pages_on_node, 1 when the binding held).
//
// Metrics: mem_numa.local.{copy,triad}.GBps and mem_numa.remote.{copy,
// triad}.GBps, one sample per placement (cpu_node, memory_node in params);
// mem_numa.remote_to_local.ratio: the slowest remote triad over the median
// local triad.
//
// Skipped (FAILED_PRECONDITION from Probe() and Run(), with the nodes seen)
// on a machine with one NUMA node: every access is local there.
//
// Parameters (all strings; ValidateParams explains any bad one):
//   array_mib    MiB per array, 1..1048576   default max(4×LLC, 64 MiB)
//   repetitions  2..200, the first untimed   default 10
//
// Thread safety: one Run() at a time; cancellation is checked between
// repetitions.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_MEM_NUMA_MEM_NUMA_H_
#define FLEETBENCH_AGENT_BENCHMARKS_MEM_NUMA_MEM_NUMA_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench::agent {

struct MemNumaConfig {
  int64_t array_mib = 0;  // 0: the default
  int repetitions = 10;
};
absl::StatusOr<MemNumaConfig> ParseMemNumaParams(const Params& params);

class MemNumaBenchmark final : public Benchmark {
 public:
  // `node_root`: where the NUMA nodes are listed (sysfs; a written tree in
  // tests).
  explicit MemNumaBenchmark(std::string node_root = "/sys/devices/system/node")
      : node_root_(std::move(node_root)) {}
  std::string name() const override { return "mem_numa"; }
  // FAILED_PRECONDITION with the reason on a one-node machine.
  absl::Status Probe() const override;
  std::vector<MetricInfo> metrics() const override;
  absl::Status ValidateParams(const Params& params) const override;
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const Params& params, const RunContext& context) override;

 private:
  std::string node_root_;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_MEM_NUMA_MEM_NUMA_H_
