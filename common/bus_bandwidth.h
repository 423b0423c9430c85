// common/bus_bandwidth.h — nccl-tests' bus bandwidth, shared by every
// collective backend (the NCCL and gloo backends of "allreduce") and by
// whatever compares their results.
//
// busbw is the per-link rate a collective needs, so that results for
// different rank counts compare to a link's rate: busbw = algbw · factor(n),
// all-reduce 2(n-1)/n; all-gather, reduce-scatter and all-to-all (n-1)/n;
// broadcast and reduce 1. One rank moves nothing between ranks, so the
// first four give 0 for n = 1 (and for n < 1). Pure functions.
#ifndef FLEETBENCH_COMMON_BUS_BANDWIDTH_H_
#define FLEETBENCH_COMMON_BUS_BANDWIDTH_H_

namespace fleetbench {

enum class Collective {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kReduce
};
double BusBandwidthFactor(Collective collective, int ranks);
double BusBandwidth(Collective collective, int ranks, double algbw_GBps);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_BUS_BANDWIDTH_H_
