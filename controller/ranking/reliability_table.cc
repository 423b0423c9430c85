#include "controller/ranking/reliability_table.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/api_enums.h"
#include "controller/ranking/interruption_rate.h"
#include "controller/ranking/ranking.h"

namespace fleetbench::controller {
namespace {

int64_t TotalOf(const NodeReliability& node) {
  int64_t total = 0;
  for (const auto& [kind, count] : node.interruptions) total += count;
  return total;
}

}  // namespace

std::string ReliabilityGroupOf(const NodeReliability& node, v1::RankGrouping by) {
  if (by == v1::RANK_GROUPING_NODE || by == v1::RANK_GROUPING_UNSPECIFIED) return node.node;
  auto it = node.labels.find(RankGroupingName(by));
  return it == node.labels.end() || it->second.empty() ? kNoLabelGroup : it->second;
}

namespace {

// The member's entry when it is a lemon against peers that together were
// online `peer_hours` with `peer_events` interruptions.
bool IsLemon(const NodeReliability& node, double peer_hours, int64_t peer_events,
             const ReliabilityOptions& options, v1::LemonNode* lemon) {
  const int64_t events = TotalOf(node);
  if (events < 2 || peer_hours <= 0 || node.node_hours <= 0) return false;
  const double peer_rate =
      PoissonRateInterval(peer_events, peer_hours, options.confidence).upper;
  const double expected = peer_rate * node.node_hours;
  const double tail = PoissonUpperTail(events, expected);
  if (tail >= options.lemon_tail) return false;
  lemon->set_node(node.node);
  lemon->set_interruptions(static_cast<uint64_t>(events));
  lemon->set_node_hours(node.node_hours);
  lemon->set_expected(expected);
  lemon->set_tail_probability(tail);
  return true;
}

}  // namespace

absl::StatusOr<std::vector<v1::ReliabilityGroup>> GroupReliability(
    const std::vector<NodeReliability>& nodes, v1::RankGrouping by,
    const ReliabilityOptions& options) {
  if (absl::Status s = CheckRankGrouping(by); !s.ok()) return s;
  if (by == v1::RANK_GROUPING_UNSPECIFIED) by = v1::RANK_GROUPING_NODE;
  if (!(options.confidence > 0 && options.confidence < 1)) {
    return absl::InvalidArgumentError("reliability: the confidence must be in (0, 1)");
  }
  if (!std::isfinite(options.min_node_hours) || options.min_node_hours < 0) {
    return absl::InvalidArgumentError(
        "reliability: the minimum node-hours must be a number of 0 or more");
  }
  std::set<std::string> seen;
  for (const NodeReliability& n : nodes) {
    if (!seen.insert(n.node).second) {
      return absl::InvalidArgumentError(absl::StrCat("reliability: node ", n.node, " twice"));
    }
  }

  std::map<std::string, std::vector<const NodeReliability*>> members;
  double fleet_hours = 0;
  int64_t fleet_events = 0;
  for (const NodeReliability& n : nodes) {
    members[ReliabilityGroupOf(n, by)].push_back(&n);
    fleet_hours += n.node_hours;
    fleet_events += TotalOf(n);
  }

  std::vector<v1::ReliabilityGroup> out;
  for (const auto& [name, group_nodes] : members) {
    v1::ReliabilityGroup& g = out.emplace_back();
    g.set_group(name);
    g.set_node_count(static_cast<uint32_t>(group_nodes.size()));
    double hours = 0;
    int64_t events = 0;
    std::map<v1::InterruptionKind, int64_t> by_kind;
    for (const NodeReliability* n : group_nodes) {
      hours += n->node_hours;
      events += TotalOf(*n);
      for (const auto& [kind, count] : n->interruptions) by_kind[kind] += count;
    }
    g.set_node_hours(hours);
    g.set_interruptions(static_cast<uint64_t>(events));
    for (const auto& [kind, count] : by_kind) {
      if (count == 0) continue;
      v1::InterruptionCount* c = g.add_by_kind();
      c->set_kind(kind);
      c->set_count(static_cast<uint64_t>(count));
    }
    g.set_enough_data(hours > 0 && hours >= options.min_node_hours);
    if (hours > 0) {
      const RateInterval rate = PoissonRateInterval(events, hours, options.confidence);
      g.set_per_1000_node_hours(rate.rate * 1000);
      g.set_per_1000_node_hours_lower(rate.lower * 1000);
      g.set_per_1000_node_hours_upper(rate.upper * 1000);
      if (events > 0) g.set_mtbf_hours(hours / static_cast<double>(events));
    }
    // Peers: the group's other members, or by node the rest of the fleet.
    for (const NodeReliability* n : group_nodes) {
      const bool alone = by == v1::RANK_GROUPING_NODE;
      const double peer_hours = (alone ? fleet_hours : hours) - n->node_hours;
      const int64_t peer_events = (alone ? fleet_events : events) - TotalOf(*n);
      v1::LemonNode lemon;
      if (IsLemon(*n, peer_hours, peer_events, options, &lemon)) *g.add_lemons() = lemon;
    }
  }
  std::sort(out.begin(), out.end(),
            [](const v1::ReliabilityGroup& a, const v1::ReliabilityGroup& b) {
              if (a.enough_data() != b.enough_data()) return a.enough_data();
              if (a.enough_data() && a.per_1000_node_hours() != b.per_1000_node_hours()) {
                return a.per_1000_node_hours() > b.per_1000_node_hours();
              }
              return a.group() < b.group();
            });
  return out;
}

}  // namespace fleetbench::controller
