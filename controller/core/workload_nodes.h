// controller/core/workload_nodes.h — which nodes a run of declared
// workloads goes to (docs/workloads.md), decided before the run is stored.
//
// A `workload` spec names a workload (param "name") that nodes' operators
// declared (Capability.workloads in their hellos). With nodes named in the
// request, each must declare it; with none named, the run goes to the
// selected nodes that declare every workload it asks for. The values the
// spec gives must be ones each such node's declaration takes
// (common/workload_params.h). Anything else is INVALID_ARGUMENT naming the
// workload and the node, and no run is stored: a user learns at `run`, not
// from a failed task.
//
// Pure: reads the sessions it is given.
#ifndef FLEETBENCH_CONTROLLER_CORE_WORKLOAD_NODES_H_
#define FLEETBENCH_CONTROLLER_CORE_WORKLOAD_NODES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "controller/core/node_sessions.h"
#include "fleetbench/v1/run.pb.h"

namespace fleetbench::controller {

// Narrows `nodes` (the selection, sorted) for the request's workload specs;
// no change when it has none. `nodes_named`: the request named its nodes.
absl::Status SelectWorkloadNodes(const v1::StartRunRequest& request, const NodeSessions& sessions,
                                 bool nodes_named, std::vector<std::string>* nodes);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_WORKLOAD_NODES_H_
