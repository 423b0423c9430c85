// controller/ranking/work_cost.h — how long and how much a given amount of work
// takes on each group, at the rate a ranking measured (`fleetbench cost`,
// docs/ranking.md, Cost of work).
//
// Pure: takes a RankResponse (a metric's group medians and prices) and the
// amount of work. The work is in the unit the metric's unit is a rate of:
//   tflops -> FLOP     (rate = median * 1e12 per second)
//   GBps   -> bytes    (median * 1e9)      MBps -> bytes (median * 1e6)
//   Gbps   -> bits     (median * 1e9)      iops -> I/O operations (median)
//   us     -> operations, one after another (rate = 1e6 / median per second)
//   X/s    -> X, a workload's own unit of work (samples/s -> samples)
// seconds = work / rate; cost = seconds / 3600 * price_per_hour. A
// workload's set-up time is costed apart (AddSetupCost): its rate is its
// own steady state, and the set-up is paid once per start.
//
// Errors: INVALID_ARGUMENT for work that is not finite and > 0, or a metric
// whose unit is not in the table (a count, a temperature, a ratio).
#ifndef FLEETBENCH_CONTROLLER_RANKING_WORK_COST_H_
#define FLEETBENCH_CONTROLLER_RANKING_WORK_COST_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fleetbench/v1/rank.pb.h"

namespace fleetbench::controller {

struct WorkUnit {
  std::string name;  // what W counts: FLOP, bytes, bits, I/O operations, operations
  // rate per second = median * factor, or factor / median for a latency.
  double factor = 0;
  bool latency = false;
};

// nullopt for a unit that is not a rate of work.
std::optional<WorkUnit> WorkUnitOf(absl::string_view metric_unit);

absl::StatusOr<v1::CostResponse> CostOfWork(const v1::RankResponse& rank, double work);

// For a workload's metric (workload.NAME.METRIC, METRIC not setup_s itself):
// workload.NAME.setup_s, its start-to-first-output time; "" otherwise.
std::string WorkloadSetupMetric(absl::string_view metric);

// Sets each cost row's setup_seconds to the median of its group in
// `setups` (a ranking of the setup metric, grouped as the cost was) and,
// for a priced row, setup_cost at the row's price. Rows of groups without
// a set-up median are left at 0.
void AddSetupCost(const v1::RankResponse& setups, v1::CostResponse& cost);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_RANKING_WORK_COST_H_
