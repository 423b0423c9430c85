// Ranking by a profile: a weighted mix of metrics, each scored against its
// fleet median (ranking.h, docs/ranking.md, Profiles).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/api_enums.h"
#include "common/stats.h"
#include "controller/ranking/ranking.h"
#include "controller/ranking/ranking_steps.h"

namespace fleetbench::controller {

using ranking_steps::CheckSeries;
using ranking_steps::FiniteValues;
using ranking_steps::GroupOf;
using ranking_steps::NodeStats;
using ranking_steps::StatsOf;
using ranking_steps::KindOf;
using ranking_steps::NodePrice;
using ranking_steps::PriceGroup;
using ranking_steps::PriceOf;

absl::StatusOr<v1::RankResponse> RankByProfileCost(const std::string& profile,
                                                   const std::vector<ProfileInput>& components,
                                                   v1::RankGrouping by,
                                                   const RankPricing& pricing) {
  if (absl::Status s = CheckRankGrouping(by); !s.ok()) return s;
  if (by == v1::RANK_GROUPING_UNSPECIFIED) by = v1::RANK_GROUPING_NODE;
  if (components.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("rank: profile ", profile, " has no metrics"));
  }
  const bool by_node = by == v1::RANK_GROUPING_NODE;
  const std::string label = by_node ? "" : RankGroupingName(by);

  v1::RankResponse response;
  response.set_profile(profile);
  response.set_unit("score");
  response.set_by(by);
  response.set_higher_is_better(true);
  response.set_price(KindOf(pricing));

  // Per component: the fleet median and each group's median and members.
  struct ComponentGroup {
    double median = 0;
    uint32_t node_count = 0;
  };
  std::vector<std::map<std::string, ComponentGroup>> per_component(components.size());
  // Every node seen in any component, with all its values' times, to price
  // it once over everything it measured.
  std::map<std::string, NodeSeries> nodes;
  std::map<std::string, std::set<std::string>> members;  // group -> nodes
  std::map<std::string, uint32_t> runs;                  // group -> values
  for (size_t i = 0; i < components.size(); ++i) {
    const ProfileInput& c = components[i];
    if (!std::isfinite(c.weight) || c.weight <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("rank: profile ", profile, ": metric ",
                                                     c.metric.name(), " has weight ", c.weight,
                                                     "; weights must be above 0"));
    }
    if (absl::Status s = CheckSeries(c.series); !s.ok()) return s;
    const bool higher = c.metric.direction() == v1::METRIC_DIRECTION_HIGHER_IS_BETTER;
    v1::ProfileMetric* pm = response.add_profile_metrics();
    pm->set_metric(c.metric.name());
    pm->set_unit(c.metric.unit());
    pm->set_weight(c.weight);
    pm->set_higher_is_better(higher);
    if (c.metric.direction() == v1::METRIC_DIRECTION_UNSPECIFIED) continue;  // undeclared
    std::vector<double> node_medians;
    for (const NodeSeries& input : c.series) {
      NodeSeries filtered;
      const NodeSeries& node = FiniteValues(input, filtered);
      if (node.values.empty() && node.sketch.empty()) continue;
      const NodeStats stats = StatsOf(node);
      node_medians.push_back(stats.median);
      NodeSeries& all = nodes[node.node];
      all.node = node.node;
      all.labels = node.labels;
      all.values.insert(all.values.end(), node.values.begin(), node.values.end());
      if (node.times.empty()) {
        all.times.insert(all.times.end(), node.values.size(), absl::InfiniteFuture());
      } else {
        all.times.insert(all.times.end(), node.times.begin(), node.times.end());
      }
      // Only the times price the node: its sketch's values count by them.
      all.sketch_times.insert(all.sketch_times.end(), node.sketch_times.begin(),
                              node.sketch_times.end());
      const std::string group = GroupOf(node, label);
      members[group].insert(node.node);
      runs[group] += static_cast<uint32_t>(stats.count);
    }
    pm->set_fleet_median(Median(node_medians));
    pm->set_node_count(static_cast<uint32_t>(node_medians.size()));
    // The group medians as a plain ranking computes them.
    absl::StatusOr<v1::RankResponse> ranked = RankByCostPerThroughput(c.metric, by, c.series);
    if (!ranked.ok()) return ranked.status();
    for (const v1::RankRow& row : ranked->rows()) {
      per_component[i][row.group()] = {row.median(), row.node_count()};
    }
  }

  struct Scored {
    v1::RankRow row;
    bool complete = false;
  };
  std::vector<Scored> rows;
  for (const auto& [group, names] : members) {
    Scored& scored = rows.emplace_back();
    v1::RankRow& row = scored.row;
    row.set_group(group);
    row.set_node_count(static_cast<uint32_t>(names.size()));
    row.set_run_count(runs[group]);
    double log_sum = 0;
    double weight_sum = 0;
    std::vector<std::string> missing;
    for (size_t i = 0; i < components.size(); ++i) {
      const v1::ProfileMetric& pm = response.profile_metrics(static_cast<int>(i));
      v1::ProfileComponent* out = row.add_components();
      out->set_metric(pm.metric());
      auto it = per_component[i].find(group);
      const double fleet = pm.fleet_median();
      // A score needs positive numbers on both sides of the ratio.
      if (it == per_component[i].end() || !(it->second.median > 0) || !(fleet > 0)) {
        if (it != per_component[i].end()) {
          out->set_median(it->second.median);
          out->set_node_count(it->second.node_count);
        }
        missing.push_back(pm.metric());
        continue;
      }
      const double score =
          pm.higher_is_better() ? it->second.median / fleet : fleet / it->second.median;
      out->set_present(true);
      out->set_median(it->second.median);
      out->set_node_count(it->second.node_count);
      out->set_score(score);
      log_sum += components[i].weight * std::log(score);
      weight_sum += components[i].weight;
    }
    std::vector<std::pair<std::string, NodePrice>> prices;
    for (const std::string& name : names) {
      prices.emplace_back(name, PriceOf(nodes[name], pricing));
    }
    const bool has_price = PriceGroup(prices, by_node, row);
    if (!missing.empty()) {
      row.set_price_note(absl::StrCat("not scored, missing ", absl::StrJoin(missing, ", "),
                                      row.price_note().empty() ? "" : "; ",
                                      row.price_note()));
      continue;
    }
    const double mix = std::exp(log_sum / weight_sum);
    if (!std::isfinite(mix) || mix <= 0) continue;
    scored.complete = true;
    row.set_median(mix);
    if (!has_price) continue;
    const double cost = row.price_per_hour() / mix;
    if (!std::isfinite(cost) || cost <= 0) continue;
    row.set_cost_per_unit(cost);
    row.set_priced(true);
  }
  std::sort(rows.begin(), rows.end(), [](const Scored& a, const Scored& b) {
    if (a.complete != b.complete) return a.complete;
    if (a.row.priced() != b.row.priced()) return a.row.priced();
    if (a.row.priced() && a.row.cost_per_unit() != b.row.cost_per_unit()) {
      return a.row.cost_per_unit() < b.row.cost_per_unit();
    }
    if (a.row.median() != b.row.median()) return a.row.median() > b.row.median();
    return a.row.group() < b.row.group();
  });
  for (Scored& s : rows) *response.add_rows() = std::move(s.row);
  return response;
}

}  // namespace fleetbench::controller
