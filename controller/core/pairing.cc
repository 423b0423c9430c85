#include "controller/core/pairing.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace fleetbench::controller {

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> PlanPairs(
    const v1::BenchmarkSpec& spec, const std::vector<std::string>& nodes) {
  std::string mode = "star";
  if (auto it = spec.params().find("pairing"); it != spec.params().end()) mode = it->second;
  std::vector<std::pair<std::string, std::string>> pairs;
  if (nodes.size() < 2) return pairs;
  if (mode == "pair") {
    pairs.emplace_back(nodes[0], nodes[1]);
  } else if (mode == "star") {
    std::string reference = nodes[0];
    if (auto it = spec.params().find("reference"); it != spec.params().end()) {
      reference = it->second;
      if (std::find(nodes.begin(), nodes.end(), reference) == nodes.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(spec.name(), ": reference node '", reference, "' is not in the run"));
      }
    }
    for (const std::string& n : nodes) {
      if (n != reference) pairs.emplace_back(reference, n);
    }
  } else if (mode == "all") {
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (size_t j = i + 1; j < nodes.size(); ++j) pairs.emplace_back(nodes[i], nodes[j]);
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        spec.name(), ": pairing '", mode, "' is not one of pair, star, all"));
  }
  return pairs;
}

PairSpecs SplitPairSpec(const v1::BenchmarkSpec& spec, const std::string& server_node,
                        const std::string& client_node) {
  PairSpecs out{spec, spec};
  for (v1::BenchmarkSpec* s : {&out.server, &out.client}) {
    s->mutable_params()->erase("pairing");
    s->mutable_params()->erase("reference");
  }
  (*out.server.mutable_params())["role"] = "server";
  (*out.server.mutable_params())["peer_node"] = client_node;
  (*out.client.mutable_params())["role"] = "client";
  (*out.client.mutable_params())["peer_node"] = server_node;
  return out;
}

}  // namespace fleetbench::controller
