// agent/benchmarks/rdma/rdma_benchmark.h — "rdma": RDMA WRITE bandwidth and
// latency between two nodes over one RC queue pair (libibverbs), measured
// the way perftest's ib_write_bw and ib_write_lat do.
//
// Two tasks make one measurement, as for "net": the controller sends the
// listening node role=server; its Run() opens the RDMA device, listens on an
// ephemeral TCP port and calls RunContext::PublishPort(port); the controller
// then sends the other node role=client, peer=<address>:<port>,
// peer_node=<name>. The TCP connection carries only the queue-pair exchange
// and the goodbye (rdma_exchange.h); the data moves by RDMA WRITE. The
// client returns every sample; the server returns none. Method, exchange
// and limits: docs/rdma.md.
//
// Metrics (client only):
//   rdma.write.Gbps        `iterations` writes of `size` bytes, at most
//                          qp_depth outstanding; bytes / (first post to last
//                          completion), 10^9 bit/s
//   rdma.write_lat.p50_us  one-way latency (round trip / 2) of 2-byte
//   rdma.write_lat.p99_us  writes ping-ponged by polling the last byte
//
// Parameters (all strings; ValidateParams explains any bad one):
//   role                server | client                        required
//   peer                host:port or [v6]:port                 client: required
//   peer_node           free text, echoed into samples         default ""
//   device              RDMA device name (e.g. mlx5_0)         default: first
//   port                IB port of the device, 1..255          default 1
//   gid_index           GID table entry, 0..1023 (RoCE needs   default 0
//                       one backed by an IP address)
//   size                bandwidth write bytes, 1..2^30         default 65536
//   iterations          timed bandwidth writes, 1..10^7        default 5000
//   warmup              untimed writes / round trips before    default 100
//                       each test, 0..10^6
//   qp_depth            send queue depth = write window,       default 128
//                       1..16384
//   latency_iterations  timed round trips, 0..10^7 (0: off)    default 1000
//   bind                server TCP listen address              default 0.0.0.0
//   accept_timeout_s    server waits for the client, 1..3600   default 60
// Each role ignores the other role's parameters but still checks them, so
// the controller may pass the user's parameters to both nodes.
//
// Errors: Probe() is FAILED_PRECONDITION "no RDMA device (...)" on a node
// without one (the runner reports the task skipped, with the reason).
// Run(): INVALID_ARGUMENT for parameters and malformed exchange records;
// the rest as rdma_session.h and rdma_verbs.h.
//
// Thread safety: as Benchmark; Run() uses the calling thread only.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_RDMA_RDMA_BENCHMARK_H_
#define FLEETBENCH_AGENT_BENCHMARKS_RDMA_RDMA_BENCHMARK_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/pairwise/tcp_socket.h"
#include "agent/benchmarks/rdma/rdma_session.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench::agent {

enum class RdmaRole { kServer, kClient };

// The parsed, range-checked form of the "rdma" parameters.
struct RdmaConfig {
  RdmaRole role = RdmaRole::kClient;
  std::string peer;  // as given; client only
  pairwise::HostPort peer_address;
  std::string peer_node;
  std::string device;  // "" = first
  int port = 1;
  int gid_index = 0;
  size_t size = 65536;
  int64_t iterations = 5000;
  int64_t warmup = 100;
  int qp_depth = 128;
  int latency_iterations = 1000;
  std::string bind = "0.0.0.0";
  double accept_timeout_s = 60;
};

// Fills defaults for absent keys; INVALID_ARGUMENT naming the parameter and
// the offending text for anything else, unknown keys included.
absl::StatusOr<RdmaConfig> ParseRdmaParams(const Params& params);

// The client's samples: rdma.write.Gbps, then (when measured) the latency
// p50 and p99.
std::vector<v1::Sample> RdmaSamples(const RdmaConfig& config,
                                    const rdma::ClientReport& report);

class RdmaBenchmark final : public Benchmark {
 public:
  // Uses libibverbs.
  RdmaBenchmark();
  // Tests: any endpoint (a fake one runs the whole exchange without RDMA
  // hardware). Probe() still asks libibverbs.
  explicit RdmaBenchmark(rdma::EndpointFactory factory);

  std::string name() const override { return "rdma"; }
  bool pairwise() const override { return true; }
  // OK when libibverbs lists at least one device; FAILED_PRECONDITION "no
  // RDMA device (...)" with the library's reason otherwise.
  absl::Status Probe() const override;
  std::vector<MetricInfo> metrics() const override;
  absl::Status ValidateParams(const Params& params) const override;
  // role=server: opens the device, listens, PublishPort(port), serves one
  // client, returns no samples. role=client: RdmaSamples() against `peer`.
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const Params& params, const RunContext& context) override;

 private:
  rdma::EndpointFactory factory_;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_RDMA_RDMA_BENCHMARK_H_
