#include "controller/ranking/ranking.h"

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
#include "common/api_enums.h"
#include "common/stats.h"
#include "controller/ranking/ranking_steps.h"

namespace fleetbench::controller {
namespace ranking_steps {

std::string GroupOf(const NodeSeries& node, const std::string& label) {
  if (label.empty()) return node.node;
  auto it = node.labels.find(label);
  return it == node.labels.end() || it->second.empty() ? kNoLabelGroup
                                                       : it->second;
}

const NodeSeries& FiniteValues(const NodeSeries& node, NodeSeries& filtered) {
  if (std::all_of(node.values.begin(), node.values.end(),
                  [](double v) { return std::isfinite(v); })) {
    return node;
  }
  NodeSeries& out = filtered;
  out = NodeSeries{node.node, node.labels, {}, {}, node.sketch, node.sketch_times};
  for (size_t i = 0; i < node.values.size(); ++i) {
    if (!std::isfinite(node.values[i])) continue;
    out.values.push_back(node.values[i]);
    if (!node.times.empty()) out.times.push_back(node.times[i]);
  }
  return out;
}

NodeStats StatsOf(const NodeSeries& node) {
  NodeStats out;
  if (node.sketch.empty()) {
    const Summary s = Summarize(node.values);
    out.count = node.values.size();
    out.median = s.median;
    out.p10 = s.p10;
    out.p90 = s.p90;
    return out;
  }
  ValueSketch all = node.sketch;
  for (double v : node.values) all.Add(v);
  out.count = all.count();
  out.median = all.Percentile(0.5);
  out.p10 = all.Percentile(0.1);
  out.p90 = all.Percentile(0.9);
  return out;
}

absl::Status CheckSeries(const std::vector<NodeSeries>& series) {
  std::set<std::string> seen;
  for (const NodeSeries& node : series) {
    if (!seen.insert(node.node).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("rank: node '", node.node, "' is listed twice"));
    }
    if (!node.times.empty() && node.times.size() != node.values.size()) {
      return absl::InvalidArgumentError(absl::StrCat("rank: node '", node.node, "' has ",
                                                     node.values.size(), " values and ",
                                                     node.times.size(), " times"));
    }
  }
  return absl::OkStatus();
}

v1::PriceKind KindOf(const RankPricing& pricing) {
  return pricing.kind == v1::PRICE_KIND_UNSPECIFIED ? v1::PRICE_KIND_ON_DEMAND : pricing.kind;
}

}  // namespace ranking_steps

namespace {

using ranking_steps::CheckSeries;
using ranking_steps::FiniteValues;
using ranking_steps::GroupOf;
using ranking_steps::KindOf;
using ranking_steps::NodePrice;
using ranking_steps::NodeStats;
using ranking_steps::StatsOf;
using ranking_steps::PriceGroup;
using ranking_steps::PriceOf;

struct Group {
  uint32_t node_count = 0;
  uint32_t run_count = 0;
  // by=node: the node's own statistics. Otherwise median/p10/p90 are taken
  // over the member nodes' medians.
  NodeStats node;
  std::vector<double> points;
  std::vector<std::pair<std::string, NodePrice>> prices;
};

bool Better(double a, double b, bool higher_is_better) {
  return higher_is_better ? a > b : a < b;
}

}  // namespace

absl::Status CheckRankGrouping(v1::RankGrouping by) {
  if (v1::RankGrouping_IsValid(by)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "rank: cannot group by grouping ", static_cast<int>(by),
      "; use one of node, instance_type, region, provider"));
}

absl::StatusOr<v1::RankResponse> RankByCostPerThroughput(
    const v1::MetricDescriptor& metric, v1::RankGrouping by,
    const std::vector<NodeSeries>& series, const RankPricing& pricing) {
  if (absl::Status s = CheckRankGrouping(by); !s.ok()) return s;
  if (by == v1::RANK_GROUPING_UNSPECIFIED) by = v1::RANK_GROUPING_NODE;
  if (metric.name().empty()) {
    return absl::InvalidArgumentError(
        "rank: metric is empty; give one, e.g. gemm.cpu.fp32.tflops");
  }
  if (metric.direction() == v1::METRIC_DIRECTION_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rank: metric ", metric.name(), " has no direction (higher or lower is better)"));
  }
  if (absl::Status s = CheckSeries(series); !s.ok()) return s;
  const bool higher_is_better =
      metric.direction() == v1::METRIC_DIRECTION_HIGHER_IS_BETTER;
  // The label a grouping reads is its own name (instance_type, ...).
  const bool by_node = by == v1::RANK_GROUPING_NODE;
  const std::string label = by_node ? "" : RankGroupingName(by);
  std::map<std::string, Group> groups;  // ordered: output is deterministic
  for (const NodeSeries& input : series) {
    NodeSeries filtered;
    const NodeSeries& node = FiniteValues(input, filtered);
    if (node.values.empty() && node.sketch.empty()) continue;

    Group& group = groups[GroupOf(node, label)];
    const NodeStats stats = StatsOf(node);
    ++group.node_count;
    group.run_count += static_cast<uint32_t>(stats.count);
    if (by_node) {
      group.node = stats;
    } else {
      group.points.push_back(stats.median);
    }
    group.prices.emplace_back(node.node, PriceOf(node, pricing));
  }

  std::vector<v1::RankRow> rows;
  rows.reserve(groups.size());
  for (const auto& [name, group] : groups) {
    v1::RankRow& row = rows.emplace_back();
    row.set_group(name);
    row.set_node_count(group.node_count);
    row.set_run_count(group.run_count);
    Summary summary;
    if (by_node) {
      summary.median = group.node.median;
      summary.p10 = group.node.p10;
      summary.p90 = group.node.p90;
    } else {
      summary = Summarize(group.points);
    }
    row.set_median(summary.median);
    row.set_p10(summary.p10);
    row.set_p90(summary.p90);
    if (!PriceGroup(group.prices, by_node, row)) continue;
    const double price = row.price_per_hour();
    // Cost needs a positive median: dividing by zero (or a negative
    // throughput) means nothing, and a zero latency is a failed measurement
    // that must not come out as "free".
    if (!(summary.median > 0)) continue;
    const double cost =
        higher_is_better ? price / summary.median : price * summary.median;
    if (!std::isfinite(cost) || cost <= 0) continue;
    row.set_cost_per_unit(cost);
    row.set_priced(true);
  }

  std::sort(rows.begin(), rows.end(),
            [higher_is_better](const v1::RankRow& a, const v1::RankRow& b) {
              if (a.priced() != b.priced()) return a.priced();
              if (a.priced() && a.cost_per_unit() != b.cost_per_unit()) {
                return a.cost_per_unit() < b.cost_per_unit();
              }
              if (a.median() != b.median()) {
                return Better(a.median(), b.median(), higher_is_better);
              }
              return a.group() < b.group();
            });

  v1::RankResponse response;
  response.set_metric(metric.name());
  response.set_unit(metric.unit());
  response.set_by(by);
  response.set_higher_is_better(higher_is_better);
  response.set_price(KindOf(pricing));
  for (v1::RankRow& row : rows) *response.add_rows() = std::move(row);
  return response;
}

}  // namespace fleetbench::controller
