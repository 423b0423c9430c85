#include "controller/ranking.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api_enums.h"
#include "common/stats.h"

namespace fleetbench::controller {
namespace {

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

bool IsCurrency(const std::string& c) {
  return c.size() == 3 && std::all_of(c.begin(), c.end(), [](char ch) {
           return ch >= 'A' && ch <= 'Z';
         });
}

std::string Label(const NodeSeries& node, const char* key) {
  auto it = node.labels.find(key);
  return it == node.labels.end() ? "" : it->second;
}

std::string DateOf(int64_t unix_ms) {
  return absl::FormatTime("%Y-%m-%d", absl::FromUnixMillis(unix_ms), absl::UTCTimeZone());
}

// Labels first (they override the catalog), then the catalog row in force
// at each value's time.
NodePrice PriceOf(const NodeSeries& node, const RankPricing& pricing) {
  const bool spot = pricing.kind == v1::PRICE_KIND_SPOT;
  const char* label = spot ? kSpotPriceLabel : kPriceLabel;
  NodePrice out;
  if (auto it = node.labels.find(label); it != node.labels.end()) {
    double price = 0;
    if (!absl::SimpleAtod(it->second, &price) || !std::isfinite(price) || price <= 0) {
      out.note = absl::StrCat("label ", label, "='", it->second.substr(0, 40),
                              "' is not a price above 0");
      return out;
    }
    std::string currency = Label(node, kCurrencyLabel);
    if (currency.empty()) currency = kDefaultCurrency;
    if (!IsCurrency(currency)) {
      out.note = absl::StrCat("label ", kCurrencyLabel, "='", currency.substr(0, 40),
                              "' is not 3 capital letters");
      return out;
    }
    out.priced = true;
    out.price = price;
    out.currency = currency;
    out.from_label = true;
    return out;
  }
  const std::string provider = Label(node, "provider");
  const std::string region = Label(node, "region");
  const std::string type = Label(node, "instance_type");
  if (pricing.catalog == nullptr || pricing.catalog->empty()) {
    out.note = absl::StrCat("no ", label, " label and no price catalog");
    return out;
  }
  if (provider.empty() || region.empty() || type.empty()) {
    out.note = absl::StrCat("no ", label,
                            " label, and no provider, region and instance_type labels to "
                            "find it in the catalog");
    return out;
  }
  const std::string offer = absl::StrCat(provider, "/", region, "/", type);
  const std::vector<v1::CatalogPrice>* rows = pricing.catalog->OfferRows(provider, region, type);
  if (rows == nullptr || rows->empty()) {
    out.note = absl::StrCat("no ", label, " label and no catalog row for ", offer);
    return out;
  }
  std::vector<double> prices;
  std::set<std::string> currencies;
  size_t before_first = 0;
  size_t no_spot = 0;
  const size_t count = node.times.empty() ? 1 : node.times.size();
  for (size_t i = 0; i < count; ++i) {
    const absl::Time when = node.times.empty() ? absl::InfiniteFuture() : node.times[i];
    const v1::CatalogPrice* row = PriceCatalog::InForceIn(*rows, when);
    if (row == nullptr) {
      ++before_first;
      continue;
    }
    if (spot && !row->has_spot_price_per_hour()) {
      ++no_spot;
      continue;
    }
    prices.push_back(spot ? row->spot_price_per_hour() : row->price_per_hour());
    currencies.insert(row->currency());
    out.newest_from_ms = std::max(out.newest_from_ms, row->effective_from_unix_ms());
  }
  std::vector<std::string> unpriced;
  if (before_first > 0) {
    unpriced.push_back(absl::StrCat(before_first, " measured before the catalog's first row for ",
                                    offer, " (", DateOf(rows->front().effective_from_unix_ms()),
                                    ")"));
  }
  if (no_spot > 0) {
    unpriced.push_back(
        absl::StrCat(no_spot, " measured while the catalog had no spot price for ", offer));
  }
  if (prices.empty()) {
    out.note = absl::StrCat("no ", label, " label; catalog: ", absl::StrJoin(unpriced, "; "));
    return out;
  }
  if (currencies.size() > 1) {
    out.note = absl::StrCat("catalog rows for ", offer, " in several currencies (",
                            absl::StrJoin(currencies, ", "), ") within the window");
    return out;
  }
  out.priced = true;
  out.price = Median(prices);
  out.currency = *currencies.begin();
  out.from_catalog = true;
  if (!unpriced.empty()) {
    out.note = absl::StrCat("priced by ", prices.size(), " of ", count, " results; ",
                            absl::StrJoin(unpriced, "; "));
  }
  return out;
}

// The group's price: the median of its priced members' prices, when they
// share a currency. Sets the price fields of `row`; false when unpriced.
bool PriceGroup(const std::vector<std::pair<std::string, NodePrice>>& members, bool by_node,
                v1::RankRow& row) {
  std::vector<double> prices;
  std::set<std::string> currencies;
  bool label = false;
  bool catalog = false;
  int64_t newest_from = 0;
  std::vector<std::string> notes;
  size_t unpriced = 0;
  for (const auto& [node, p] : members) {
    if (!p.note.empty()) notes.push_back(by_node ? p.note : absl::StrCat(node, ": ", p.note));
    if (!p.priced) {
      ++unpriced;
      continue;
    }
    prices.push_back(p.price);
    currencies.insert(p.currency);
    label |= p.from_label;
    catalog |= p.from_catalog;
    newest_from = std::max(newest_from, p.newest_from_ms);
  }
  // A few members' reasons say enough; the rest are counted.
  constexpr size_t kNotesShown = 3;
  std::string note;
  if (!by_node && unpriced > 0) {
    note = absl::StrCat(unpriced, " of ", members.size(), " nodes unpriced");
  }
  const size_t shown = std::min(notes.size(), kNotesShown);
  if (shown > 0) {
    absl::StrAppend(&note, note.empty() ? "" : ": ",
                    absl::StrJoin(notes.begin(), notes.begin() + static_cast<long>(shown), "; "));
    if (notes.size() > shown) absl::StrAppend(&note, "; ... (", notes.size() - shown, " more)");
  }
  if (prices.empty()) {
    row.set_price_note(note);
    return false;
  }
  if (currencies.size() > 1) {
    row.set_price_note(absl::StrCat("members priced in several currencies (",
                                    absl::StrJoin(currencies, ", "), "); not compared"));
    return false;
  }
  row.set_price_per_hour(Median(prices));
  row.set_currency(*currencies.begin());
  row.set_price_source(label && catalog ? kPriceFromBoth : label ? kPriceFromLabel
                                                                  : kPriceFromCatalog);
  row.set_price_effective_from_unix_ms(newest_from);
  row.set_price_note(note);
  return true;
}

// `label` is empty when grouping by node.
std::string GroupOf(const NodeSeries& node, const std::string& label) {
  if (label.empty()) return node.node;
  auto it = node.labels.find(label);
  return it == node.labels.end() || it->second.empty() ? kNoLabelGroup
                                                       : it->second;
}

struct Group {
  uint32_t node_count = 0;
  uint32_t run_count = 0;
  // What median/p10/p90 are taken over: the node's own values for by=node,
  // the member nodes' medians otherwise.
  std::vector<double> points;
  std::vector<std::pair<std::string, NodePrice>> prices;
};

bool Better(double a, double b, bool higher_is_better) {
  return higher_is_better ? a > b : a < b;
}

// The finite values of a node, with their times when it has them. Points
// to `node` itself when all are finite (the common case: no copy), else
// fills `filtered`.
const NodeSeries& FiniteValues(const NodeSeries& node, NodeSeries& filtered) {
  if (std::all_of(node.values.begin(), node.values.end(),
                  [](double v) { return std::isfinite(v); })) {
    return node;
  }
  NodeSeries& out = filtered;
  out = NodeSeries{node.node, node.labels, {}, {}};
  for (size_t i = 0; i < node.values.size(); ++i) {
    if (!std::isfinite(node.values[i])) continue;
    out.values.push_back(node.values[i]);
    if (!node.times.empty()) out.times.push_back(node.times[i]);
  }
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
    if (node.values.empty()) continue;

    Group& group = groups[GroupOf(node, label)];
    ++group.node_count;
    group.run_count += static_cast<uint32_t>(node.values.size());
    if (by_node) {
      group.points = node.values;
    } else {
      group.points.push_back(Median(node.values));
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
    const Summary summary = Summarize(group.points);
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
      if (node.values.empty()) continue;
      node_medians.push_back(Median(node.values));
      NodeSeries& all = nodes[node.node];
      all.node = node.node;
      all.labels = node.labels;
      all.values.insert(all.values.end(), node.values.begin(), node.values.end());
      if (node.times.empty()) {
        all.times.insert(all.times.end(), node.values.size(), absl::InfiniteFuture());
      } else {
        all.times.insert(all.times.end(), node.times.begin(), node.times.end());
      }
      const std::string group = GroupOf(node, label);
      members[group].insert(node.node);
      runs[group] += static_cast<uint32_t>(node.values.size());
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
