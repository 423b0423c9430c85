// controller/core/pairing.h — how a pairwise benchmark (one listening "server"
// node, one connecting "client" node) becomes pairs of tasks. Pure
// functions of the spec and the node list; FleetCore schedules the pairs.
#ifndef FLEETBENCH_CONTROLLER_CORE_PAIRING_H_
#define FLEETBENCH_CONTROLLER_CORE_PAIRING_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench::controller {

// The (server, client) node pairs of a pairwise benchmark, from its
// "pairing" parameter: "star" (default; every node against "reference",
// default the first node), "pair" (the first two nodes), "all" (every pair,
// run in rounds since a node takes one task at a time). INVALID_ARGUMENT for
// an unknown mode or a reference outside `nodes`; no pairs under two nodes.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> PlanPairs(
    const v1::BenchmarkSpec& spec, const std::vector<std::string>& nodes);

// What each half of one pair runs.
struct PairSpecs {
  v1::BenchmarkSpec server;
  v1::BenchmarkSpec client;
};
// The pairing parameters ("pairing", "reference") are the controller's, so
// they are dropped; each half gets its "role" and its "peer_node" instead.
PairSpecs SplitPairSpec(const v1::BenchmarkSpec& spec, const std::string& server_node,
                        const std::string& client_node);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_PAIRING_H_
