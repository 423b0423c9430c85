// agent/benchmarks/net/net_benchmark.h — "net": TCP throughput, retransmits
// and round-trip latency between two nodes.
//
// Two tasks make one measurement. The controller pairs two agents: it sends
// the listening node role=server; that node's Run() listens on bind:0 and
// calls RunContext::PublishPort(port) once it can accept; the controller
// then sends the other node role=client, peer=<address>:<port>,
// peer_node=<name>. The client drives the tests over a control connection
// and returns every sample; the server returns none. The engine and the
// method are in tcp_engine.h and docs/network.md.
//
// Metrics (client only):
//   net.tcp.Gbps           forward (client -> server), receiver-side bytes
//   net.tcp.reverse.Gbps   reverse (server -> client), receiver-side bytes
//   net.tcp.retransmits.count    forward, sending sockets' tcpi_total_retrans
//                          delta over the window (unit "count")
//   net.tcp.rtt_p50_us     ping-pong round trip, median
//   net.tcp.rtt_p99_us     ping-pong round trip, 99th percentile
//
// Parameters (all strings; ValidateParams explains any bad one):
//   role              server | client                  required
//   peer              host:port or [v6]:port           client: required
//   peer_node         free text, echoed into samples   default ""
//   streams           parallel connections, 1..64      default 4
//   duration_s        measured window, 0.1..600        default 10
//   warmup_s          not counted (slow start), 0..60  default 2
//   reverse           0/1: also server -> client       default 1
//   latency_count     round trips, 0..1000000 (0: off) default 2000
//   message_bytes     ping-pong size, 1..1048576       default 64
//   mode              all | throughput | latency       default all
//                     (latency: the ping-pong only)
//   write_bytes       send()/recv() size, 1..16M       default 128K
//                     (iperf3 -l; K/M/G suffixes)
//   socket_buffer_bytes  SO_SNDBUF+SO_RCVBUF, 0 (kernel default 0
//                     autotuning) or 4K..1G (iperf3 -w)
//   congestion        TCP congestion control, e.g.     default: the node's
//                     cubic, bbr, reno (iperf3 -C)
//   rate_Mbps         target rate, all streams         default 0 (no cap)
//                     together, 0..1000000 (iperf3 -b is per stream)
//   bind              server listen address            default 0.0.0.0
//   accept_timeout_s  server waits for the client,     default 60
//                     1..3600
// Each role ignores the other role's parameters but still checks them, so
// the controller may pass the user's parameters to both nodes.
//
// Errors: INVALID_ARGUMENT for parameters; UNAVAILABLE (refused, reset,
// unreachable) and DEADLINE_EXCEEDED (no client within accept_timeout_s,
// no answer) with the address in the message; ABORTED when the peer gave
// up (its reason is in the message); CANCELLED on cancel, within ~0.2 s.
//
// Thread safety: as Benchmark; Run() starts one thread per stream and joins
// them all before it returns.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_NET_NET_BENCHMARK_H_
#define FLEETBENCH_AGENT_BENCHMARKS_NET_NET_BENCHMARK_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/net/tcp_engine.h"
#include "agent/benchmarks/pairwise/tcp_socket.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench::agent {

enum class NetRole { kServer, kClient };
// Which tests the client runs: throughput both ways (as `reverse` says) and
// the ping-pong, or one kind only.
enum class NetMode { kAll, kThroughput, kLatency };

// The parsed, range-checked form of the "net" parameters.
struct NetConfig {
  NetRole role = NetRole::kClient;
  std::string peer;  // as given; client only
  pairwise::HostPort peer_address;
  std::string peer_node;
  int streams = 4;
  double duration_s = 10;
  double warmup_s = 2;
  bool reverse = true;
  int latency_count = 2000;
  int message_bytes = 64;
  NetMode mode = NetMode::kAll;
  net::StreamSettings settings;  // write_bytes, buffers, congestion, rate
  std::string bind = "0.0.0.0";
  double accept_timeout_s = 60;
};

// Fills defaults for absent keys; INVALID_ARGUMENT naming the parameter and
// the offending text for anything else, unknown keys included.
absl::StatusOr<NetConfig> ParseNetParams(const Params& params);

// The client's samples, in the order forward Gbps, retransmits, reverse
// Gbps, rtt p50, rtt p99 (those that were measured).
std::vector<v1::Sample> NetSamples(const NetConfig& config,
                                   const net::TcpClientReport& report);

class TcpNetBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "net"; }
  // Runs between two nodes: the controller pairs a listener and a client.
  bool pairwise() const override { return true; }
  // Always OK: every node has TCP.
  absl::Status Probe() const override;
  std::vector<MetricInfo> metrics() const override;
  absl::Status ValidateParams(const Params& params) const override;
  // role=server: listens, PublishPort(port), serves one client, returns no
  // samples. role=client: NetSamples() of the tests against `peer`.
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const Params& params, const RunContext& context) override;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_NET_NET_BENCHMARK_H_
