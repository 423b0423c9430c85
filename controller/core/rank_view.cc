// RankView: ranking by a metric or a profile from the store's day summaries
// and raw points (docs/ranking.md, Summaries), and the cost of work on top
// of a ranking. Reads only the store, on the caller's thread.
#include "controller/core/rank_view.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/core/caller_deadline.h"
#include "controller/ranking/price_catalog.h"
#include "controller/ranking/rank_profiles.h"
#include "controller/ranking/work_cost.h"

namespace fleetbench::controller {

RankView::RankView(storage::Store* store, Clock* clock, absl::Duration rank_window)
    : store_(store), clock_(clock), rank_window_(rank_window) {}

// NOT_FOUND for ranking a metric no agent declared, naming some that are:
// first those of the same plugin prefix (a typo), then the rest, capped.
absl::Status UndeclaredMetric(storage::Store& store, const std::string& metric) {
  constexpr size_t kMaxListed = 20;
  auto declared = store.ListMetricDescriptors();
  if (!declared.ok()) return declared.status();
  const std::string prefix = metric.substr(0, metric.find('.')) + ".";
  std::vector<std::string> names;
  for (bool same_prefix : {true, false}) {
    for (const v1::MetricDescriptor& d : *declared) {
      if (absl::StartsWith(d.name(), prefix) == same_prefix) names.push_back(d.name());
    }
  }
  if (names.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "metric ", metric,
        " is not declared by any agent's plugins; no agent has declared any metric yet "
        "(agents declare their plugins' metrics when they connect)"));
  }
  const auto listed = static_cast<std::ptrdiff_t>(std::min(names.size(), kMaxListed));
  std::string known = absl::StrJoin(names.begin(), names.begin() + listed, ", ");
  if (names.size() > kMaxListed) {
    absl::StrAppend(&known, ", ... (", names.size() - kMaxListed, " more)");
  }
  return absl::NotFoundError(absl::StrCat(
      "metric ", metric, " is not declared by any agent's plugins; known: ", known));
}

namespace {

// When a catalog row for the node's offer takes effect: the times inside
// a day summary at which its values stop sharing one price. Empty for a
// node its price label prices (labels override the catalog).
std::vector<absl::Time> PriceChangesOf(const std::map<std::string, std::string>& labels,
                                       const RankPricing& pricing) {
  std::vector<absl::Time> out;
  if (pricing.catalog == nullptr || pricing.catalog->empty()) return out;
  const char* label = pricing.kind == v1::PRICE_KIND_SPOT ? kSpotPriceLabel : kPriceLabel;
  if (labels.contains(label)) return out;
  auto get = [&](const char* key) {
    auto it = labels.find(key);
    return it == labels.end() ? std::string() : it->second;
  };
  const std::vector<v1::CatalogPrice>* rows =
      pricing.catalog->OfferRows(get("provider"), get("region"), get("instance_type"));
  if (rows == nullptr) return out;
  for (const v1::CatalogPrice& row : *rows) {
    out.push_back(absl::FromUnixMillis(row.effective_from_unix_ms()));
  }
  return out;
}

bool SplitsDay(const std::vector<absl::Time>& changes, const storage::DaySummary& day) {
  return std::any_of(changes.begin(), changes.end(),
                     [&](absl::Time t) { return day.first < t && t <= day.last; });
}

}  // namespace

absl::StatusOr<std::vector<NodeSeries>> RankView::MetricSeries(
    const std::string& metric, absl::Time since,
    const std::vector<storage::NodeRecord>& nodes, const RankPricing& pricing) const {
  std::map<std::string, NodeSeries> series;
  std::map<std::string, std::vector<absl::Time>> price_changes;
  for (const storage::NodeRecord& n : nodes) {
    series[n.name].node = n.name;
    series[n.name].labels = n.labels;
    price_changes[n.name] = PriceChangesOf(n.labels, pricing);
  }
  auto add_raw = [&](const storage::MetricPointTable& table, auto keep) {
    for (const storage::MetricPointTable::Point& p : table.points) {
      const std::string& name = table.nodes[p.node];
      if (!keep(name, p.time)) continue;
      NodeSeries& s = series[name];
      s.node = name;
      s.values.push_back(p.value);
      // The time prices the value: the catalog row in force then.
      s.times.push_back(p.time);
    }
  };
  const int64_t since_ms =
      since == absl::InfinitePast() ? std::numeric_limits<int64_t>::min() / 2 : absl::ToUnixMillis(since);
  const int64_t first_day = storage::UtcDayOf(since_ms);
  const int64_t whole_days_from =
      since_ms == first_day * storage::kMillisPerDay ? first_day : first_day + 1;
  auto days = store_->DaySummariesSince(metric, whole_days_from);
  if (!days.ok()) return days.status();
  // Days a price change splits, read raw below: (node, day) -> its summary.
  std::map<std::pair<std::string, int64_t>, const storage::DaySummary*> split;
  std::set<int64_t> split_days;
  for (const storage::DaySummary& d : days->days) {
    const std::string& name = days->nodes[d.node];
    if (SplitsDay(price_changes[name], d)) {
      split[{name, d.day}] = &d;
      split_days.insert(d.day);
      continue;
    }
    NodeSeries& s = series[name];
    s.node = name;
    s.sketch.Merge(d.values);
    s.sketch_times.emplace_back(d.last, d.values.count());
  }
  if (whole_days_from != first_day) {
    auto edge = store_->MetricPointTableBetween(
        metric, since, absl::FromUnixMillis(whole_days_from * storage::kMillisPerDay));
    if (!edge.ok()) return edge.status();
    add_raw(*edge, [](const std::string&, absl::Time) { return true; });
  }
  for (int64_t day : split_days) {
    auto raw = store_->MetricPointTableBetween(metric,
                                               absl::FromUnixMillis(day * storage::kMillisPerDay),
                                               absl::FromUnixMillis((day + 1) * storage::kMillisPerDay));
    if (!raw.ok()) return raw.status();
    // A split day whose samples retention has removed (fewer raw values
    // than the summary counts) keeps its summary, priced at its last value.
    std::map<std::string, uint64_t> finite;
    for (const storage::MetricPointTable::Point& p : raw->points) {
      if (std::isfinite(p.value) && split.contains({raw->nodes[p.node], day})) {
        ++finite[raw->nodes[p.node]];
      }
    }
    for (auto it = split.begin(); it != split.end();) {
      const auto& [key, summary] = *it;
      if (key.second != day || finite[key.first] == summary->values.count()) {
        ++it;
        continue;
      }
      NodeSeries& s = series[key.first];
      s.node = key.first;
      s.sketch.Merge(summary->values);
      s.sketch_times.emplace_back(summary->last, summary->values.count());
      it = split.erase(it);
    }
    add_raw(*raw, [&](const std::string& name, absl::Time) {
      return split.contains({name, day});
    });
  }
  std::vector<NodeSeries> list;
  for (auto& [name, s] : series) {
    if (!s.values.empty() || !s.sketch.empty()) list.push_back(std::move(s));
  }
  return list;
}

absl::StatusOr<v1::RankResponse> RankView::Rank(const v1::RankRequest& request,
                                                absl::Time deadline) const {
  if (request.metric().empty() == request.profile().empty()) {
    return absl::InvalidArgumentError(
        "give --metric (e.g. gemm.cpu.fp32.tflops) or --profile (e.g. cpu), not both");
  }
  if (absl::Status s = CheckRankGrouping(request.by()); !s.ok()) return s;
  if (!v1::PriceKind_IsValid(request.price())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rank: price kind ", static_cast<int>(request.price()), "; use on_demand or spot"));
  }
  const absl::Duration window = request.window_ms() > 0
                                    ? absl::Milliseconds(request.window_ms())
                                    : rank_window_;
  const absl::Time since = clock_->Now() - window;
  auto prices = store_->ListPrices();
  if (!prices.ok()) return prices.status();
  const PriceCatalog catalog(*prices);
  const RankPricing pricing{request.price(), &catalog};
  if (!request.profile().empty()) return RankProfile(request, pricing, since, deadline);
  // Unit and direction as the plugins declared them; checked before the
  // scan so a mistyped name costs nothing.
  absl::StatusOr<v1::MetricDescriptor> metric = store_->GetMetricDescriptor(request.metric());
  if (absl::IsNotFound(metric.status())) return UndeclaredMetric(*store_, request.metric());
  if (!metric.ok()) return metric.status();
  auto nodes = store_->ListNodes();
  if (!nodes.ok()) return nodes.status();
  auto series = MetricSeries(request.metric(), since, *nodes, pricing);
  if (!series.ok()) return series.status();
  if (absl::Now() >= deadline) return CallerDeadlinePassed();
  return RankByCostPerThroughput(*metric, request.by(), *series, pricing);
}

absl::StatusOr<v1::RankResponse> RankView::RankProfile(const v1::RankRequest& request,
                                                       const RankPricing& pricing,
                                                       absl::Time since,
                                                       absl::Time deadline) const {
  absl::StatusOr<const controller::RankProfile*> profile = FindRankProfile(request.profile());
  if (!profile.ok()) return profile.status();
  auto nodes = store_->ListNodes();
  if (!nodes.ok()) return nodes.status();
  std::vector<ProfileInput> inputs;
  for (const ProfileWeight& w : (*profile)->metrics) {
    ProfileInput& input = inputs.emplace_back();
    input.weight = w.weight;
    absl::StatusOr<v1::MetricDescriptor> metric = store_->GetMetricDescriptor(w.metric);
    if (absl::IsNotFound(metric.status())) {
      // No agent declared it (no GPU in this fleet, say): every group
      // lacks it, and the response says so.
      input.metric.set_name(w.metric);
      continue;
    }
    if (!metric.ok()) return metric.status();
    input.metric = *std::move(metric);
    auto series = MetricSeries(w.metric, since, *nodes, pricing);
    if (!series.ok()) return series.status();
    input.series = *std::move(series);
    if (absl::Now() >= deadline) return CallerDeadlinePassed();
  }
  return RankByProfileCost((*profile)->name, inputs, request.by(), pricing);
}

absl::StatusOr<v1::CostResponse> RankView::Cost(const v1::CostRequest& request,
                                                absl::Time deadline) const {
  if (request.metric().empty()) {
    return absl::InvalidArgumentError("--metric is required, e.g. gemm.cpu.fp32.tflops");
  }
  if (!std::isfinite(request.work()) || request.work() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--work must be a number above 0 (e.g. 1e18 FLOP for a tflops metric); got ",
        request.work()));
  }
  v1::RankRequest rank;
  rank.set_metric(request.metric());
  rank.set_by(request.by());
  rank.set_price(request.price());
  rank.set_window_ms(request.window_ms());
  absl::StatusOr<v1::RankResponse> ranked = Rank(rank, deadline);
  if (!ranked.ok()) return ranked.status();
  absl::StatusOr<v1::CostResponse> cost = CostOfWork(*ranked, request.work());
  if (!cost.ok()) return cost;
  // A workload's rate leaves out its set-up (imports, data loading): shown
  // beside the cost, from its own samples, when there are any.
  if (const std::string setup = WorkloadSetupMetric(request.metric()); !setup.empty()) {
    rank.set_metric(setup);
    absl::StatusOr<v1::RankResponse> setups = Rank(rank, deadline);
    if (setups.ok()) AddSetupCost(*setups, *cost);
  }
  return cost;
}

}  // namespace fleetbench::controller
