#include "agent/benchmarks/gpu/gpu_math.h"

#include <algorithm>

namespace fleetbench::gpu {

double PercentOfPeak(double measured, double peak) {
  if (!(peak > 0)) return 0;
  return 100.0 * measured / peak;
}

double PcieTheoreticalGBps(int generation, int width) {
  // Per lane, one direction, in GB/s: transfer rate × encoding efficiency / 8.
  double per_lane = 0;
  switch (generation) {
    case 1: per_lane = 2.5 * 8 / 10 / 8; break;        // 0.25
    case 2: per_lane = 5.0 * 8 / 10 / 8; break;        // 0.5
    case 3: per_lane = 8.0 * 128 / 130 / 8; break;     // 0.985
    case 4: per_lane = 16.0 * 128 / 130 / 8; break;    // 1.969
    case 5: per_lane = 32.0 * 128 / 130 / 8; break;    // 3.938
    case 6: per_lane = 64.0 * 242 / 256 / 8; break;    // 7.563
    default: return 0;
  }
  if (width <= 0) return 0;
  return per_lane * width;
}

double BusBandwidthFactor(Collective collective, int ranks) {
  switch (collective) {
    case Collective::kBroadcast:
    case Collective::kReduce:
      return 1;
    default:
      break;
  }
  if (ranks < 1) return 0;
  const double n = ranks;
  switch (collective) {
    case Collective::kAllReduce:
      return 2 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
      return (n - 1) / n;
    default:
      return 1;
  }
}

double BusBandwidth(Collective collective, int ranks, double algbw_GBps) {
  return algbw_GBps * BusBandwidthFactor(collective, ranks);
}

double ThrottleFraction(const std::vector<uint64_t>& samples, uint64_t mask) {
  if (samples.empty()) return 0;
  const auto hits = std::count_if(samples.begin(), samples.end(),
                                  [mask](uint64_t s) { return (s & mask) != 0; });
  return static_cast<double>(hits) / static_cast<double>(samples.size());
}

}  // namespace fleetbench::gpu
