#include "common/bus_bandwidth.h"

namespace fleetbench {

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

}  // namespace fleetbench
