// agent/benchmarks/mem/mem_stream.h — "mem": host memory bandwidth, the
// STREAM way (John McCalpin's stream.c, kernels and counting unchanged).
//
// What it measures: the four STREAM kernels over three arrays of doubles,
//   copy  c = a          scale b = s·c
//   add   c = a + b      triad a = b + s·c      (s = 3)
// with one std::thread per CPU the process may run on, each pinned to its
// CPU and owning one contiguous slice of every array. The owning thread
// writes its slice first, so on a NUMA machine the pages land on its node.
// Each array is at least 4× the total last-level cache (sum over every LLC
// instance in /sys/devices/system/cpu/cpu*/cache), and at least 64 MiB.
// A repetition runs the four kernels in order; the first repetition is not
// counted. As in STREAM, the reported value is the BEST (highest) rate over
// the timed repetitions; median, min and spread go into the sample's params.
// Bytes are counted as STREAM does (2 arrays × 8 B × n for copy and scale,
// 3 for add and triad, write-allocate traffic not counted); GB = 10^9 B.
// After the last repetition every element is compared with the value the
// kernels must have produced (STREAM's checkSTREAMresults); a mismatch
// fails the run (INTERNAL) instead of reporting a rate.
//
// Metrics: mem.copy.GBps, mem.scale.GBps, mem.add.GBps, mem.triad.GBps.
//
// Parameters (all strings; ValidateParams explains any bad one):
//   array_mib    MiB per array, 1..1048576   default max(4×LLC, 64 MiB)
//   repetitions  2..200, the first untimed   default 10
//   threads      1..4096                     default CPUs in the affinity mask
//
// Thread safety: one Run() at a time. Cancellation is checked between
// repetitions (one repetition over default arrays takes well under a second).
// RESOURCE_EXHAUSTED before anything runs when the three arrays would take
// more than 80% of physical memory.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_MEM_MEM_STREAM_H_
#define FLEETBENCH_AGENT_BENCHMARKS_MEM_MEM_STREAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench::agent {

// The parsed, range-checked form of the "mem" parameters.
struct MemStreamConfig {
  int64_t array_mib = 0;  // 0: the default, max(4×LLC, 64 MiB)
  int repetitions = 10;
  int threads = 1;
};

// Fills defaults for absent keys; INVALID_ARGUMENT naming the parameter and
// the offending text for anything else, unknown keys included.
absl::StatusOr<MemStreamConfig> ParseMemStreamParams(const Params& params);

class MemStreamBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "mem"; }
  // Always OK: every node has memory.
  absl::Status Probe() const override;
  std::vector<MetricInfo> metrics() const override;
  absl::Status ValidateParams(const Params& params) const override;
  // Four samples, one per kernel, in STREAM's order.
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const Params& params, const RunContext& context) override;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_MEM_MEM_STREAM_H_
