// kernels/collective_pattern.h — the known values the "allreduce" plugin's
// collectives move, and what each rank must hold afterwards. Header-only,
// pure and free of CUDA so the module checks results with the same
// arithmetic the unit tests check (collective_pattern_test.cc, built with or
// without CUDA).
//
// Rank r's send element i is (r+1)·((i mod 13)+1): small integers, so float
// sums over up to 1024 ranks are exact and any wrong, missing or doubled
// contribution shows. The device fill kernel (FillCollectivePattern in
// device_patterns.cu) writes the same formula.
#ifndef FLEETBENCH_KERNELS_COLLECTIVE_PATTERN_H_
#define FLEETBENCH_KERNELS_COLLECTIVE_PATTERN_H_

#include <cstdint>

#include "kernels/gpu_module_api.h"

namespace fleetbench::kernels {

inline constexpr uint64_t kPatternPeriod = 13;

// Send element `index` of `rank`.
inline double PatternValue(int rank, uint64_t index) {
  return static_cast<double>(rank + 1) *
         static_cast<double>(index % kPatternPeriod + 1);
}

// Element `index` of `rank`'s receive buffer after `op`, where each rank
// sent `send_count` elements: allreduce -> sum over ranks of element index;
// allgather -> rank (index / send_count)'s element index % send_count;
// reducescatter -> sum over ranks of element rank·recv_count + index, with
// recv_count = send_count / ranks.
inline double ExpectedAfter(int op, int ranks, int rank, uint64_t send_count,
                            uint64_t index) {
  // sum_{q<ranks} (q+1) = ranks(ranks+1)/2
  const double rank_sum = static_cast<double>(ranks) * (ranks + 1) / 2.0;
  switch (op) {
    case FLEETBENCH_GPU_ALLGATHER:
      return PatternValue(static_cast<int>(index / send_count),
                          index % send_count);
    case FLEETBENCH_GPU_REDUCESCATTER: {
      const uint64_t recv_count = send_count / static_cast<uint64_t>(ranks);
      return rank_sum *
             static_cast<double>((static_cast<uint64_t>(rank) * recv_count +
                                  index) % kPatternPeriod + 1);
    }
    default:  // allreduce
      return rank_sum * static_cast<double>(index % kPatternPeriod + 1);
  }
}

}  // namespace fleetbench::kernels

#endif  // FLEETBENCH_KERNELS_COLLECTIVE_PATTERN_H_
