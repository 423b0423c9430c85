#include "agent/benchmarks/gemm_math.h"

#include <algorithm>

namespace fleetbench::agent {

double GemmFlops(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) *
         static_cast<double>(k);
}

double TflopsFromSeconds(double flops, double seconds) {
  if (!(seconds > 0)) return 0;
  return flops / seconds / 1e12;
}

bool EnoughRuns(const RepetitionPolicy& policy, int runs,
                double timed_seconds) {
  if (runs >= policy.max_runs) return true;
  return runs >= std::min(kMinTimedRuns, policy.max_runs) &&
         timed_seconds >= policy.min_seconds;
}

double RepetitionFraction(const RepetitionPolicy& policy, int runs,
                          double timed_seconds) {
  if (EnoughRuns(policy, runs, timed_seconds)) return 1;
  const double by_count =
      static_cast<double>(runs) / std::max(policy.max_runs, 1);
  // The time path needs both the seconds and the minimum number of runs.
  const double by_time =
      std::min(policy.min_seconds > 0 ? timed_seconds / policy.min_seconds : 1,
               static_cast<double>(runs) /
                   std::max(std::min(kMinTimedRuns, policy.max_runs), 1));
  return std::clamp(std::max(by_count, by_time), 0.0, 1.0);
}

}  // namespace fleetbench::agent
