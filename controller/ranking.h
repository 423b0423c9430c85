// controller/ranking.h — ranking groups of nodes by cost per throughput.
//
// Pure math: no store, no clock, no RPC. The caller (FleetCore::Rank) reads
// the samples of one metric inside a time window, hands one NodeSeries per
// node and the metric as its plugin declared it (unit, direction), and gets
// back the rows of a v1::RankResponse. docs/ranking.md has the formula and
// a worked example.
//
// Summary of the rules:
//   * A node's value is the median of its values in the window; nodes with
//     no (finite) values are left out.
//   * Groups: by=NODE is one group per node; by=INSTANCE_TYPE/REGION/PROVIDER
//     groups nodes by that label (instance_type, region, provider; "(none)"
//     when missing or empty).
//   * A group's median/p10/p90 are over its nodes' medians (by=node: over the
//     node's own values), so one node with many runs cannot outvote the rest.
//   * price_per_hour (USD/h) is the median of the members' `price_per_hour`
//     labels that parse as a finite number > 0.
//   * cost_per_unit is price / median for higher-is-better metrics (USD/h per
//     unit of throughput) and price × median for lower-is-better ones (a node
//     that costs more and takes longer is worse on both counts).
//   * Rows: priced groups by cost_per_unit ascending, then unpriced groups by
//     median (better first); ties by median, then group name.
//
// Errors: INVALID_ARGUMENT for an unknown `by` (the message lists the allowed
// values), an empty metric name, a metric without a direction, or a node
// listed twice. Thread safety: none
// needed, the function only reads its arguments.
#ifndef FLEETBENCH_CONTROLLER_RANKING_H_
#define FLEETBENCH_CONTROLLER_RANKING_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fleetbench/v1/metric.pb.h"
#include "fleetbench/v1/rank.pb.h"

namespace fleetbench::controller {

// The label that carries a node's price in USD per hour.
inline constexpr char kPriceLabel[] = "price_per_hour";
// The group of nodes that lack the grouping label.
inline constexpr char kNoLabelGroup[] = "(none)";

// One node's values of one metric, one value per run, in the window.
struct NodeSeries {
  std::string node;
  std::map<std::string, std::string> labels;
  std::vector<double> values;
};

// `by` UNSPECIFIED means NODE. Non-finite values are ignored. The output
// never holds inf or NaN: a group whose median is not positive, or whose
// cost would overflow, is shown unpriced (priced false, cost_per_unit 0) and
// ranked with the unpriced groups.
// OK for the groupings above (UNSPECIFIED included), else the
// INVALID_ARGUMENT that RankByCostPerThroughput returns for it; callers use it
// to refuse a request before reading any samples.
absl::Status CheckRankGrouping(v1::RankGrouping by);

absl::StatusOr<v1::RankResponse> RankByCostPerThroughput(
    const v1::MetricDescriptor& metric, v1::RankGrouping by,
    const std::vector<NodeSeries>& series);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_RANKING_H_
