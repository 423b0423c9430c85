// controller/core/group_plan.h — how a run's collective benchmarks become group
// tasks (docs/collectives.md). Pure functions of the run's group
// options, its nodes (in the stable order the run chose) and, between
// passes, the results of the groups that ended; FleetCore creates one task
// per member of each planned group, dispatches a group only when all its
// members are idle, and asks for the next pass when every group of the run
// has ended.
//
//   GROUP    one group over every node
//   SCALING  one group per size N in `scaling`: the first N nodes
//   ISOLATE  round-robin pairs (the circle method: n-1 rounds of n/2
//            disjoint pairs, an idle node per round for odd n), then each
//            suspect re-paired with nodes that passed; with `bisect`, the
//            suspect set halved instead
#ifndef FLEETBENCH_CONTROLLER_CORE_GROUP_PLAN_H_
#define FLEETBENCH_CONTROLLER_CORE_GROUP_PLAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fleetbench/v1/run.pb.h"

namespace fleetbench::controller {

// One group task to run: its members in rank order.
struct GroupPlan {
  std::vector<std::string> members;
  // ISOLATE: which pass planned it (GroupResult.pass); 0 otherwise.
  int pass = 0;
};

// The first groups of a run. INVALID_ARGUMENT for options that do not fit
// the nodes (a scaling size above the node count or not ascending; isolate
// with fewer than 3 nodes; an unknown mode), with a message a user can act on.
absl::StatusOr<std::vector<GroupPlan>> PlanGroups(const v1::GroupOptions& options,
                                                  const std::vector<std::string>& nodes);

// After every group planned so far has ended (`done`, in plan order): the
// next groups to run, or none when the run is complete.
std::vector<GroupPlan> PlanNextGroups(const v1::GroupOptions& options,
                                      const std::vector<std::string>& nodes,
                                      const std::vector<v1::GroupResult>& done);

// ISOLATE: what the groups so far say (complete = false while PlanNextGroups
// would still add groups). Empty for other modes.
v1::IsolationVerdict JudgeIsolation(const v1::GroupOptions& options,
                                    const std::vector<std::string>& nodes,
                                    const std::vector<v1::GroupResult>& done);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_GROUP_PLAN_H_
