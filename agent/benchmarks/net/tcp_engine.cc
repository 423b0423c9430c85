// The engine's result math; the roles are in tcp_server.cc and
// tcp_client.cc.
#include "agent/benchmarks/net/tcp_engine.h"

#include <algorithm>

#include "common/stats.h"

namespace fleetbench::agent::net {

LatencyResult SummarizeRoundTrips(const std::vector<double>& rtt_us,
                                  int message_bytes) {
  LatencyResult r;
  r.count = static_cast<int>(rtt_us.size());
  r.message_bytes = message_bytes;
  if (rtt_us.empty()) return r;
  r.p50_us = Percentile(rtt_us, 0.5);
  r.p99_us = Percentile(rtt_us, 0.99);
  const auto [mn, mx] = std::minmax_element(rtt_us.begin(), rtt_us.end());
  r.min_us = *mn;
  r.max_us = *mx;
  double sum = 0;
  for (double v : rtt_us) sum += v;
  r.mean_us = sum / static_cast<double>(rtt_us.size());
  return r;
}

}  // namespace fleetbench::agent::net
