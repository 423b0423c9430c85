// controller/ranking/job_goodput.h — a ranking, or a cost of work, for a
// job of N nodes: each group's goodput (goodput.h) from its interruption
// rate (reliability_table.h), and its cost per unit once the time
// interruptions lose is counted (docs/ranking.md, Goodput).
//
// Pure. A row's group is looked up by name among the reliability groups,
// which must be grouped as the rows are; a group without any record has
// rate 0 and enough_data false (goodput 1, optimistic); one with
// interruptions but no time online has goodput 0.
// effective_cost_per_unit = cost_per_unit / goodput; a ranking's priced
// rows are then ordered by it (cheapest first, ties as before), the
// unpriced rows staying after them.
#ifndef FLEETBENCH_CONTROLLER_RANKING_JOB_GOODPUT_H_
#define FLEETBENCH_CONTROLLER_RANKING_JOB_GOODPUT_H_

#include <vector>

#include "absl/status/statusor.h"
#include "controller/ranking/goodput.h"
#include "fleetbench/v1/rank.pb.h"
#include "fleetbench/v1/reliability.pb.h"

namespace fleetbench::controller {

// The request's job with its defaults filled (30 min checkpoints, 10 min
// restarts); INVALID_ARGUMENT as CheckJobShape says, or for nodes 0.
absl::StatusOr<JobShape> JobShapeOf(const v1::JobShape& job);
// The same, back as the response shows it (every field set).
v1::JobShape ToProto(const JobShape& job);

void AddJobGoodput(const std::vector<v1::ReliabilityGroup>& reliability, const JobShape& job,
                   v1::RankResponse& rank);
// Cost rows: effective_seconds = seconds / goodput, effective_cost =
// cost / goodput; the rows' order stays (by cost, as asked).
void AddJobGoodput(const std::vector<v1::ReliabilityGroup>& reliability, const JobShape& job,
                   v1::CostResponse& cost);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_RANKING_JOB_GOODPUT_H_
