// agent/benchmarks/pairwise/pair_params.h — the parameters every two-node
// (pairwise) benchmark shares: which side it is, whom to reach, and where
// the listening side binds. The controller sets role, peer and peer_node
// when it pairs two agents (docs/protocol.md); `net` and `rdma` use this.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_PAIRWISE_PAIR_PARAMS_H_
#define FLEETBENCH_AGENT_BENCHMARKS_PAIRWISE_PAIR_PARAMS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/pairwise/tcp_socket.h"
#include "google/protobuf/map.h"

namespace fleetbench::agent::pairwise {

struct PairSide {
  bool server = false;
  std::string peer;  // as given; client only
  HostPort peer_address;
  std::string peer_node;
};

// Reads role, peer and peer_node. Errors are INVALID_ARGUMENT
// "<plugin>: <key>: <what>"; `published` says what the server published
// (e.g. "the port it published") in the message for a client without peer.
absl::StatusOr<PairSide> ParsePairSide(const Params& params, absl::string_view plugin,
                                       absl::string_view published);

// A sample's peer params: `peer` the server's host and `peer_port` its
// port, apart, since the port is new in every pairing and as a number the
// store keeps it with the sample (storage/sample_params.h), so the rest of
// the params repeat; `peer` as given when it was not parsed (the server
// side); `peer_node` as given.
void AddPeerParams(const std::string& peer, const HostPort& peer_address,
                   const std::string& peer_node,
                   google::protobuf::Map<std::string, std::string>& params);

// The server's listen address, "0.0.0.0" when absent; INVALID_ARGUMENT as
// above when it cannot be an address.
absl::StatusOr<std::string> ParseBindAddress(const Params& params, absl::string_view plugin);

}  // namespace fleetbench::agent::pairwise

#endif  // FLEETBENCH_AGENT_BENCHMARKS_PAIRWISE_PAIR_PARAMS_H_
