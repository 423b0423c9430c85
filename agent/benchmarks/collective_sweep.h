// agent/benchmarks/collective_sweep.h — the parameters and size sweep every
// backend of the "allreduce" plugin shares (NCCL in gpu/, gloo in
// collective/), so both read the same keys, defaults and ranges.
//
// Parameters:
//   ops        comma list of allreduce,allgather,reducescatter; default
//              allreduce
//   min_bytes  first size, 4..16G, suffixes K/M/G         default 1M
//   max_bytes  last size (>= min_bytes)                    default 1G
//   iters      timed operations per size, 1..10000         default 20
//   warmup     untimed operations per size, 0..1000        default 5
//
// Pure functions. Errors are INVALID_ARGUMENT naming the key.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_SWEEP_H_
#define FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_SWEEP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "agent/benchmarks/benchmark.h"
#include "common/bus_bandwidth.h"

namespace fleetbench::agent {

struct CollectiveSweepConfig {
  std::vector<std::string> ops;
  uint64_t min_bytes = uint64_t{1} << 20;
  uint64_t max_bytes = uint64_t{1} << 30;
  int iters = 20;
  int warmup = 5;
};

// The keys above plus `extra_keys` (which the caller reads itself); any
// other key is refused so that a typo never runs the defaults.
absl::StatusOr<CollectiveSweepConfig> ParseCollectiveSweep(
    absl::string_view plugin, const Params& params,
    absl::Span<const absl::string_view> extra_keys = {});

// min, 2·min, 4·min, ... up to and including max (max is appended when
// the doubling skips it). Empty when min is 0 or min > max.
std::vector<uint64_t> DoublingSweep(uint64_t min_bytes, uint64_t max_bytes);

// How long a run of this sweep may take before it is stopped (the plugin's
// DefaultTimeout, and so a group's deadline): kSweepStartAllowance for
// meeting the group and making the communicator, plus every byte a rank
// sends at kSweepSlowestRate. A rank sends about 2x the size per all-reduce
// (a ring's 2(n-1)/n) and at most 1x per all-gather or reduce-scatter;
// each size runs warmup + iters operations plus one checked one. Generous
// on purpose (a 200 Mbit/s link): it catches a member that hangs, not one
// that is slow, and a small sweep gets a deadline of minutes, not the
// 30-minute default.
inline constexpr absl::Duration kSweepStartAllowance = absl::Minutes(2);
inline constexpr double kSweepSlowestRate = 25e6;  // bytes/s
absl::Duration CollectiveSweepTimeout(const CollectiveSweepConfig& config);

// "allreduce" -> FLEETBENCH_GPU_ALLREDUCE, ... (kernels/gpu_module_api.h,
// the numbers kernels/collective_pattern.h computes with); -1 if unknown.
int CollectiveOpNumber(const std::string& op);

// "allgather" -> Collective::kAllGather, ...; all-reduce for anything else.
Collective CollectiveOf(const std::string& op);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_SWEEP_H_
