// agent/benchmarks/rdma/rdma_session.h — one "rdma" measurement between two
// nodes: the TCP side (listen, connect, exchange queue-pair records, the
// final goodbye) around an RdmaEndpoint that does the verbs work.
//
// The endpoint is an interface so that the whole sequence runs in tests
// without RDMA hardware (a fake endpoint over loopback TCP); the verbs one is
// in rdma_verbs.h. The sequence (docs/rdma.md, "Exchange"):
//   server: open endpoint, listen, announce port, accept; both: send own
//   kQueuePairInfo, read the peer's, connect the QP (INIT -> RTR -> RTS);
//   server: kReady; client: bandwidth test, kLatencyPlan, ping-pong (both
//   sides), kDone. Either side sends kDone with its error when it fails
//   after the TCP connection is up, so the other ends ABORTED with the
//   reason instead of waiting. The server drops connections that send
//   nothing or no record magic within 5 s (scanners, health checks) and
//   keeps accepting; a peer that sends the magic but a bad record (another
//   exchange version) is told why and the server fails INVALID_ARGUMENT.
//
// Errors: CANCELLED when `cancelled` returned true (noticed within ~0.1 s
// on TCP waits); DEADLINE_EXCEEDED when no client came within
// accept_timeout_s or the peer went silent; UNAVAILABLE when the TCP peer
// refused, reset or closed; INVALID_ARGUMENT when the peer's record is
// malformed; FAILED_PRECONDITION when the peer's buffer is too small for
// `size`; ABORTED when the peer sent its failure; endpoint errors as they
// come.
//
// Thread safety: each call is independent and owns what it opens; an
// endpoint is used by one call only.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_RDMA_RDMA_SESSION_H_
#define FLEETBENCH_AGENT_BENCHMARKS_RDMA_RDMA_SESSION_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/pairwise/tcp_socket.h"
#include "agent/benchmarks/rdma/rdma_exchange.h"

namespace fleetbench::agent::rdma {

using CancelFn = pairwise::CancelFn;
using ProgressFn =
    std::function<void(double fraction, const std::string& message)>;
using ListeningFn = std::function<absl::Status(int port)>;

// perftest's ib_write_lat default message size.
inline constexpr uint32_t kLatencyWriteBytes = 2;

// What an endpoint is opened with.
struct EndpointOptions {
  std::string device;   // "" = the first device ibv_get_device_list returns
  int port = 1;         // IB port number on the device
  int gid_index = 0;    // RoCE: the GID table entry to source packets from
  size_t size = 65536;  // bandwidth write size; the target region is
                        // kLatencySlotBytes + size
  int qp_depth = 128;   // send queue depth = outstanding-write window
};

struct BandwidthPlan {
  size_t size = 0;
  int64_t warmup = 0;      // untimed writes first
  int64_t iterations = 0;  // timed writes
  int window = 0;          // outstanding writes at most (qp_depth)
};

struct BandwidthResult {
  uint64_t bytes = 0;  // timed writes only
  double seconds = 0;  // first timed post to last completion
};

// What the client learns about its own side, for the samples' params.
struct EndpointFacts {
  std::string device;
  int port = 0;
  std::string link_layer;  // "InfiniBand" or "Ethernet"
};

// One RC queue pair with a registered buffer. Made by an EndpointFactory;
// destroyed by its owner, which releases every verbs object.
class RdmaEndpoint {
 public:
  virtual ~RdmaEndpoint() = default;

  virtual EndpointFacts facts() const = 0;
  // This side's record for the peer.
  virtual QueuePairInfo local_info() const = 0;
  // INIT -> RTR -> RTS against the peer's queue pair; the path MTU is the
  // smaller of the two ports' active MTUs.
  virtual absl::Status Connect(const QueuePairInfo& remote) = 0;
  // Client: RDMA WRITEs into the peer's bandwidth target.
  virtual absl::StatusOr<BandwidthResult> WriteBandwidth(
      const BandwidthPlan& plan, const CancelFn& cancelled) = 0;
  // Both sides: the latency ping-pong. The initiator (client) writes first
  // and returns one round-trip time in microseconds per timed iteration;
  // the responder answers each write and returns nothing.
  virtual absl::StatusOr<std::vector<double>> WritePingPong(
      const LatencyPlan& plan, bool initiator, const CancelFn& cancelled) = 0;
};

using EndpointFactory =
    std::function<absl::StatusOr<std::unique_ptr<RdmaEndpoint>>(
        const EndpointOptions&)>;

struct ServerOptions {
  EndpointOptions endpoint;
  std::string bind = "0.0.0.0";
  double accept_timeout_s = 60;
};

struct ClientOptions {
  EndpointOptions endpoint;
  pairwise::HostPort peer;
  int64_t iterations = 5000;
  int64_t warmup = 100;
  int latency_iterations = 1000;  // 0: no latency test
  double connect_timeout_s = 30;
};

struct LatencySummary {
  int iterations = 0;
  uint32_t bytes = 0;
  // One-way latency = round trip / 2, as perftest's ib_write_lat reports.
  double p50_us = 0;
  double p99_us = 0;
  double min_us = 0;
  double mean_us = 0;
  double max_us = 0;
};

struct ClientReport {
  EndpointFacts facts;
  uint32_t path_mtu = 0;  // bytes
  BandwidthResult bandwidth;
  double gbps = 0;
  std::optional<LatencySummary> latency;
};

// Serves one client, then returns; OK when the client said a clean goodbye.
absl::Status RunRdmaServer(const ServerOptions& options,
                           const EndpointFactory& factory,
                           const ListeningFn& on_listening,
                           const CancelFn& cancelled,
                           const ProgressFn& progress);

absl::StatusOr<ClientReport> RunRdmaClient(const ClientOptions& options,
                                           const EndpointFactory& factory,
                                           const CancelFn& cancelled,
                                           const ProgressFn& progress);

// One-way latencies (round trip / 2) from round-trip times in microseconds;
// percentiles as common/stats.h (linear interpolation).
LatencySummary SummarizeRoundTrips(const std::vector<double>& round_trip_us,
                                   uint32_t bytes);

}  // namespace fleetbench::agent::rdma

#endif  // FLEETBENCH_AGENT_BENCHMARKS_RDMA_RDMA_SESSION_H_
