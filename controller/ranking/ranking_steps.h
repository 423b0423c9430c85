// controller/ranking/ranking_steps.h — what the two rankings (ranking.cc by a
// metric, rank_profile.cc by a profile) share: pricing a node and a group
// (ranking_prices.cc), grouping and cleaning a node's series (ranking.cc).
// Internal to the fleetbench_ranking library; callers use ranking.h.
#ifndef FLEETBENCH_CONTROLLER_RANKING_RANKING_STEPS_H_
#define FLEETBENCH_CONTROLLER_RANKING_RANKING_STEPS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "controller/ranking/ranking.h"
#include "fleetbench/v1/price.pb.h"
#include "fleetbench/v1/rank.pb.h"

namespace fleetbench::controller::ranking_steps {

// What one node costs per hour, and where that came from.
struct NodePrice {
  bool priced = false;
  double price = 0;
  std::string currency;
  bool from_label = false;
  bool from_catalog = false;
  int64_t newest_from_ms = 0;  // of the catalog rows used
  // Why it is unpriced, or what was only partly priced.
  std::string note;
};

// The node's price for `pricing` (ranking.h has the order: label, then the
// catalog row in force at each value's time).
NodePrice PriceOf(const NodeSeries& node, const RankPricing& pricing);

// The group's price: the median of its priced members' prices, when they
// share a currency. Sets the price fields of `row`; false when unpriced.
bool PriceGroup(const std::vector<std::pair<std::string, NodePrice>>& members, bool by_node,
                v1::RankRow& row);

// The group a node belongs to: its name when `label` is empty (by node),
// else that label's value, kNoLabelGroup when missing or empty.
std::string GroupOf(const NodeSeries& node, const std::string& label);

// The node itself when all its values are finite (no copy), else its finite
// values and their times, in `filtered`.
const NodeSeries& FiniteValues(const NodeSeries& node, NodeSeries& filtered);

// A node's order statistics over its finite values, sketched ones
// included: exact (common/stats.h) when it has no sketch, else the
// sketch's with the plain values added.
struct NodeStats {
  uint64_t count = 0;
  double median = 0;
  double p10 = 0;
  double p90 = 0;
};
NodeStats StatsOf(const NodeSeries& finite_node);

// INVALID_ARGUMENT for a node listed twice, or with times that do not
// match its values.
absl::Status CheckSeries(const std::vector<NodeSeries>& series);

// The price kind a response reports (UNSPECIFIED reads as ON_DEMAND).
v1::PriceKind KindOf(const RankPricing& pricing);

}  // namespace fleetbench::controller::ranking_steps

#endif  // FLEETBENCH_CONTROLLER_RANKING_RANKING_STEPS_H_
