#include "controller/core/group_plan.h"

#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "diagnosis/isolation.h"

namespace fleetbench::controller {
namespace {

// SCALING: sizes strictly ascending, each 1..the node count.
absl::Status CheckScaling(const v1::GroupOptions& options, size_t node_count) {
  if (options.scaling().empty()) {
    return absl::InvalidArgumentError("scaling needs at least one group size, e.g. 1,2,4,8");
  }
  uint32_t previous = 0;
  for (uint32_t size : options.scaling()) {
    if (size < 1 || size > node_count) {
      return absl::InvalidArgumentError(absl::StrCat("scaling size ", size, " is outside 1..",
                                                     node_count, " (the nodes selected)"));
    }
    if (size <= previous) {
      return absl::InvalidArgumentError(absl::StrCat(
          "scaling sizes must be strictly ascending; ", size, " follows ", previous));
    }
    previous = size;
  }
  return absl::OkStatus();
}

// Round-robin tests every pair: 128 nodes are 8128 pairs in 127 rounds,
// already hours of collectives; past that, bisection.
constexpr size_t kMaxRoundRobinNodes = 128;

absl::Status CheckIsolate(const v1::GroupOptions& options, size_t node_count) {
  if (!options.bisect() && node_count > kMaxRoundRobinNodes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "isolate tests every pair, too many for ", node_count, " nodes (at most ",
        kMaxRoundRobinNodes, "); add --bisect to halve the suspect set instead"));
  }
  const size_t least = options.bisect() ? 4 : 3;
  if (node_count < least) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.bisect() ? "isolate --bisect" : "isolate", " needs at least ", least,
                     " nodes to tell a bad node from a bad partner; ", node_count, " selected"));
  }
  if (!std::isfinite(options.threshold()) || options.threshold() < 0 ||
      options.threshold() >= 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("threshold ", options.threshold(),
                     " is outside [0, 1): a pair fails below (1 - threshold) x the expectation"));
  }
  if (!std::isfinite(options.expect_busbw_gbps()) || options.expect_busbw_gbps() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected busbw ", options.expect_busbw_gbps(), " GBps must be >= 0"));
  }
  return absl::OkStatus();
}

std::vector<GroupPlan> ToPlans(const diagnosis::IsolationPass& pass) {
  std::vector<GroupPlan> plans;
  for (const auto& members : pass.groups) plans.push_back(GroupPlan{members, pass.pass});
  return plans;
}

}  // namespace

absl::StatusOr<std::vector<GroupPlan>> PlanGroups(const v1::GroupOptions& options,
                                                  const std::vector<std::string>& nodes) {
  // A node twice would be its own partner (and two ranks of one agent).
  if (std::set<std::string>(nodes.begin(), nodes.end()).size() != nodes.size()) {
    return absl::InvalidArgumentError("a group run names a node twice");
  }
  switch (options.mode()) {
    case v1::GROUP_MODE_GROUP:
      if (nodes.size() < 2) {
        return absl::InvalidArgumentError(
            absl::StrCat("a group needs at least two nodes; ", nodes.size(), " selected"));
      }
      return std::vector<GroupPlan>{GroupPlan{nodes, 0}};
    case v1::GROUP_MODE_SCALING: {
      if (absl::Status s = CheckScaling(options, nodes.size()); !s.ok()) return s;
      std::vector<GroupPlan> plans;
      for (uint32_t size : options.scaling()) {
        plans.push_back(GroupPlan{{nodes.begin(), nodes.begin() + size}, 0});
      }
      return plans;
    }
    case v1::GROUP_MODE_ISOLATE:
      if (absl::Status s = CheckIsolate(options, nodes.size()); !s.ok()) return s;
      return ToPlans(diagnosis::NextIsolationPass(options, nodes, {}));
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown group mode ", static_cast<int>(options.mode())));
  }
}

std::vector<GroupPlan> PlanNextGroups(const v1::GroupOptions& options,
                                      const std::vector<std::string>& nodes,
                                      const std::vector<v1::GroupResult>& done) {
  // GROUP and SCALING plan everything up front.
  if (options.mode() != v1::GROUP_MODE_ISOLATE) return {};
  return ToPlans(diagnosis::NextIsolationPass(options, nodes, done));
}

v1::IsolationVerdict JudgeIsolation(const v1::GroupOptions& options,
                                    const std::vector<std::string>& nodes,
                                    const std::vector<v1::GroupResult>& done) {
  if (options.mode() != v1::GROUP_MODE_ISOLATE) return {};
  return diagnosis::JudgeIsolationResults(options, nodes, done);
}

}  // namespace fleetbench::controller
