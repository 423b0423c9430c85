// controller/ranking/reliability_table.h — interruptions per node-hour for
// groups of nodes, and the nodes far worse than their peers
// (docs/reliability.md, `fleetbench reliability`).
//
// Pure: the caller (ReliabilityView) reads each node's time online and
// interruptions over a window and hands them here.
//   * A group (by node, or the instance_type / region / provider label,
//     "(none)" when missing) sums its members' node-hours and
//     interruptions; its rate per 1,000 node-hours has the exact Poisson
//     interval of interruption_rate.h at `confidence`.
//   * A group observed for fewer than `min_node_hours` has enough_data
//     false: its rate is shown but not believed, whatever it is.
//   * A lemon is a member with at least 2 interruptions whose count would
//     happen with probability below `lemon_tail` if it failed at its
//     peers' rate (the upper end of their interval, so only a clear outlier
//     qualifies). Peers are the other members of its group; by node, the
//     rest of the fleet.
//   * Groups with enough data first, most interruptions per node-hour
//     first, then by name; then the others by name.
//
// Errors: INVALID_ARGUMENT for a bad grouping, confidence outside (0, 1),
// a negative or non-finite min_node_hours, or a node listed twice.
#ifndef FLEETBENCH_CONTROLLER_RANKING_RELIABILITY_TABLE_H_
#define FLEETBENCH_CONTROLLER_RANKING_RELIABILITY_TABLE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fleetbench/v1/rank.pb.h"
#include "fleetbench/v1/reliability.pb.h"

namespace fleetbench::controller {

struct NodeReliability {
  std::string node;
  std::map<std::string, std::string> labels;
  double node_hours = 0;
  std::map<v1::InterruptionKind, int64_t> interruptions;
};

struct ReliabilityOptions {
  double confidence = 0.9;
  double min_node_hours = 24;
  double lemon_tail = 0.01;
};

// The group `node` belongs to: its name by node, else its label's value
// ("(none)" when missing or empty).
std::string ReliabilityGroupOf(const NodeReliability& node, v1::RankGrouping by);

absl::StatusOr<std::vector<v1::ReliabilityGroup>> GroupReliability(
    const std::vector<NodeReliability>& nodes, v1::RankGrouping by,
    const ReliabilityOptions& options);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_RANKING_RELIABILITY_TABLE_H_
