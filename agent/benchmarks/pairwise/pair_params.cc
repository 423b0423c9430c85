#include "agent/benchmarks/pairwise/pair_params.h"

#include "absl/strings/str_cat.h"

namespace fleetbench::agent::pairwise {
namespace {

absl::Status BadParam(absl::string_view plugin, absl::string_view key, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(plugin, ": ", key, ": ", what));
}

std::string Get(const Params& params, const std::string& key, const std::string& fallback) {
  auto it = params.find(key);
  return it == params.end() ? fallback : it->second;
}

}  // namespace

absl::StatusOr<PairSide> ParsePairSide(const Params& params, absl::string_view plugin,
                                       absl::string_view published) {
  PairSide side;
  const std::string role = Get(params, "role", "");
  if (role == "server") {
    side.server = true;
  } else if (role == "client") {
    side.server = false;
  } else if (role.empty()) {
    return BadParam(plugin, "role",
                    absl::StrCat("missing; \"", plugin,
                                 "\" runs between two nodes: role=server on "
                                 "the listening node, role=client peer=<host>:<port> on "
                                 "the other (the controller sets both when it pairs "
                                 "nodes)"));
  } else {
    return BadParam(plugin, "role", absl::StrCat("'", role, "' is not one of server, client"));
  }

  side.peer = Get(params, "peer", "");
  if (!side.server) {
    if (side.peer.empty()) {
      return BadParam(plugin, "peer",
                      absl::StrCat("missing; role=client needs peer=<host>:<port> of the "
                                   "server-role node (",
                                   published, ")"));
    }
    absl::StatusOr<HostPort> peer = ParseHostPort(side.peer);
    if (!peer.ok()) return BadParam(plugin, "peer", peer.status().message());
    side.peer_address = *peer;
  }
  side.peer_node = Get(params, "peer_node", "");
  return side;
}

void AddPeerParams(const std::string& peer, const HostPort& peer_address,
                   const std::string& peer_node,
                   google::protobuf::Map<std::string, std::string>& params) {
  if (!peer_address.host.empty()) {
    params["peer"] = peer_address.host;
    params["peer_port"] = absl::StrCat(peer_address.port);
  } else {
    params["peer"] = peer;
  }
  params["peer_node"] = peer_node;
}

absl::StatusOr<std::string> ParseBindAddress(const Params& params, absl::string_view plugin) {
  const std::string bind = Get(params, "bind", "0.0.0.0");
  if (bind.empty() || bind.find_first_of(" \t[]") != std::string::npos) {
    return BadParam(plugin, "bind",
                    absl::StrCat("'", bind,
                                 "' is not an address to listen on "
                                 "(e.g. 0.0.0.0, :: or 10.0.0.5)"));
  }
  return bind;
}

}  // namespace fleetbench::agent::pairwise
