#include "agent/benchmarks/gpu/gpu_math.h"

#include <algorithm>

namespace fleetbench::gpu {

double PercentOfPeak(double measured, double peak) {
  if (!(peak > 0)) return 0;
  return 100.0 * measured / peak;
}

double ThrottleFraction(const std::vector<uint64_t>& samples, uint64_t mask) {
  if (samples.empty()) return 0;
  const auto hits = std::count_if(samples.begin(), samples.end(),
                                  [mask](uint64_t s) { return (s & mask) != 0; });
  return static_cast<double>(hits) / static_cast<double>(samples.size());
}

}  // namespace fleetbench::gpu
