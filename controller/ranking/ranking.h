// controller/ranking/ranking.h — ranking groups of nodes by cost per throughput.
//
// Pure math: no store, no clock, no RPC. The caller (FleetCore::Rank) reads
// the samples of one metric inside a time window, hands one NodeSeries per
// node and the metric as its plugin declared it (unit, direction), and gets
// back the rows of a v1::RankResponse. docs/ranking.md has the formula and
// a worked example.
//
// Summary of the rules:
//   * A node's value is the median of its values in the window; nodes with
//     no (finite) values are left out. Values a node carries as a sketch
//     (NodeSeries::sketch) count like the others, their percentiles within
//     the sketch's documented bound.
//   * Groups: by=NODE is one group per node; by=INSTANCE_TYPE/REGION/PROVIDER
//     groups nodes by that label (instance_type, region, provider; "(none)"
//     when missing or empty).
//   * A group's median/p10/p90 are over its nodes' medians (by=node: over the
//     node's own values), so one node with many runs cannot outvote the rest.
//   * A node's price (RankPricing: on demand or spot) comes from its label
//     (price_per_hour / spot_price_per_hour, in the `currency` label's
//     currency, USD without one) when it has one; else from the price
//     catalog, for its provider/region/instance_type labels, at the row in
//     force when each of its values was measured (the median of those
//     prices). A group's price is the median of its priced members' prices;
//     members priced in different currencies leave the group unpriced.
//   * cost_per_unit is price / median for higher-is-better metrics (USD/h per
//     unit of throughput) and price × median for lower-is-better ones (a node
//     that costs more and takes longer is worse on both counts).
//   * Rows: priced groups by cost_per_unit ascending, then unpriced groups by
//     median (better first); ties by median, then group name.
//
// Errors: INVALID_ARGUMENT for an unknown `by` (the message lists the allowed
// values), an empty metric name, a metric without a direction, a node
// listed twice, or a node whose times do not match its values. Thread
// safety: none needed, the functions only read their arguments.
//
// Files: ranking.cc (by a metric), rank_profile.cc (by a profile),
// ranking_prices.cc (a node's and a group's price), ranking_steps.h (what
// they share).
#ifndef FLEETBENCH_CONTROLLER_RANKING_RANKING_H_
#define FLEETBENCH_CONTROLLER_RANKING_RANKING_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/value_sketch.h"
#include "controller/ranking/price_catalog.h"
#include "fleetbench/v1/metric.pb.h"
#include "fleetbench/v1/price.pb.h"
#include "fleetbench/v1/rank.pb.h"

namespace fleetbench::controller {

// The labels that carry a node's price per hour, on demand and spot, and
// its currency (USD when absent). They override the catalog.
inline constexpr char kPriceLabel[] = "price_per_hour";
inline constexpr char kSpotPriceLabel[] = "spot_price_per_hour";
inline constexpr char kCurrencyLabel[] = "currency";
inline constexpr char kDefaultCurrency[] = "USD";
// RankRow.price_source values.
inline constexpr char kPriceFromLabel[] = "label";
inline constexpr char kPriceFromCatalog[] = "catalog";
inline constexpr char kPriceFromBoth[] = "label+catalog";
// The group of nodes that lack the grouping label.
inline constexpr char kNoLabelGroup[] = "(none)";

// One node's values of one metric, one value per run, in the window.
struct NodeSeries {
  std::string node;
  std::map<std::string, std::string> labels;
  std::vector<double> values;
  // When each value was measured, parallel to `values`; empty means now
  // (the catalog's newest rows).
  std::vector<absl::Time> times;
  // More of the node's values, summarised (the history's day summaries):
  // when not empty, the node's median/p10/p90 are the sketch's with
  // `values` added, within ValueSketch::kRelativeAccuracy of the exact ones
  // (docs/ranking.md, Summaries).
  ValueSketch sketch;
  // When the sketch's values were measured, for the catalog: each entry
  // prices that many of them at the row in force at that time.
  std::vector<std::pair<absl::Time, uint64_t>> sketch_times;
};

// Which price a ranking uses, and the catalog behind the labels.
struct RankPricing {
  v1::PriceKind kind = v1::PRICE_KIND_ON_DEMAND;  // UNSPECIFIED reads as this
  const PriceCatalog* catalog = nullptr;          // null: labels only
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
    const std::vector<NodeSeries>& series, const RankPricing& pricing = {});

// One metric of a profile, with its declaration (direction UNSPECIFIED when
// no agent declared it: no node then has it) and every node's values of it.
struct ProfileInput {
  v1::MetricDescriptor metric;
  double weight = 0;  // > 0
  std::vector<NodeSeries> series;
};

// Ranks groups by cost per unit of a weighted mix of metrics
// (docs/ranking.md, Profiles): each metric's group median is scored against
// the fleet median of that metric (node medians over every node), the
// scores are combined by a weighted geometric mean, and cost_per_unit is
// price / score. A group lacking a metric is not scored: its row says which
// are missing (components[].present) and comes after every scored row.
// INVALID_ARGUMENT for an empty profile, a weight that is not finite and
// > 0, or a bad grouping.
absl::StatusOr<v1::RankResponse> RankByProfileCost(const std::string& profile,
                                                   const std::vector<ProfileInput>& components,
                                                   v1::RankGrouping by,
                                                   const RankPricing& pricing = {});

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_RANKING_RANKING_H_
