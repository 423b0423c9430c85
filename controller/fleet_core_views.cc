// FleetCore: read views. ListNodes and GetRun run on the actor (they merge
// live sessions, tasks and progress into what the store holds); ListRuns,
// Rank and History read only the store, from the caller's thread.
#include "controller/fleet_core.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api_enums.h"
#include "common/wire_limits.h"
#include "controller/page_tokens.h"
#include "controller/price_catalog.h"
#include "controller/rank_profiles.h"
#include "controller/ranking.h"

namespace fleetbench::controller {

absl::StatusOr<v1::ListNodesResponse> FleetCore::HandleListNodes() {
  auto records = store_->ListNodes();
  if (!records.ok()) return records.status();
  v1::ListNodesResponse response;
  for (const storage::NodeRecord& r : *records) {
    if (r.removed) continue;  // out of the fleet, kept for its results
    v1::Node* node = response.add_nodes();
    node->set_name(r.name);
    auto session = sessions_.find(r.name);
    const bool online = session != sessions_.end() && session->second.online;
    node->set_status(online ? v1::NODE_STATUS_ONLINE : v1::NODE_STATUS_OFFLINE);
    for (const auto& [k, v] : r.labels) (*node->mutable_labels())[k] = v;
    *node->mutable_facts() = r.facts;
    node->set_agent_version(r.agent_version);
    absl::Time last_seen = r.last_seen;
    if (session != sessions_.end()) {
      last_seen = std::max(last_seen, session->second.last_seen);
      for (const auto& c : session->second.capabilities) *node->add_capabilities() = c;
    }
    node->set_last_seen_unix_ms(absl::ToUnixMillis(last_seen));
  }
  if (store_failing_) {
    absl::MutexLock lock(&stats_mu_);
    response.set_store_error(stats_.store_error);
    response.set_store_failing_since_unix_ms(absl::ToUnixMillis(store_failing_since_));
    response.set_reports_held(stats_.reports_held);
  }
  return response;
}

absl::StatusOr<v1::Run> FleetCore::HandleGetRun(const v1::GetRunRequest& request) {
  auto run = store_->GetRun(request.run_id());
  if (!run.ok()) return run.status();
  auto tasks = store_->ListTasks(request.run_id());
  if (!tasks.ok()) return tasks.status();
  v1::Run out;
  out.set_run_id(run->run_id);
  out.set_state(RunStateFromName(run->state).value_or(v1::RUN_STATE_UNSPECIFIED));
  out.set_created_unix_ms(absl::ToUnixMillis(run->created));
  if (run->finished != absl::InfinitePast()) {
    out.set_finished_unix_ms(absl::ToUnixMillis(run->finished));
  }
  out.set_suite(run->suite);
  absl::StatusOr<std::optional<v1::ScheduleFiring>> firing = store_->FiringOfRun(run->run_id);
  if (!firing.ok()) return firing.status();
  if (firing->has_value()) {
    out.set_schedule((*firing)->schedule());
    *out.mutable_offline_nodes() = (*firing)->offline_nodes();
  }
  for (const auto& b : run->benchmarks) *out.add_benchmarks() = b;
  if (run->group.mode() != v1::GROUP_MODE_UNSPECIFIED) {
    // The groups, in plan order, from the newest state of their tasks.
    std::vector<storage::TaskRecord> newest = *tasks;
    for (storage::TaskRecord& t : newest) {
      if (auto live = active_tasks_.find(t.task_id); live != active_tasks_.end()) {
        t = live->second;
      } else if (auto u = unstored_ends_.find(t.task_id); u != unstored_ends_.end()) {
        t = u->second;
      }
    }
    *out.mutable_group() = run->group;
    const std::vector<v1::GroupResult> groups = GroupResults(newest);
    for (const v1::GroupResult& g : groups) *out.add_groups() = g;
    if (run->group.mode() == v1::GROUP_MODE_ISOLATE) {
      *out.mutable_isolation() = JudgeIsolation(run->group, run->group_nodes, groups);
    }
  }
  for (const storage::TaskRecord& stored : *tasks) {
    // Newest first: in flight, ended but not yet stored, stored.
    auto live = active_tasks_.find(stored.task_id);
    auto unstored = unstored_ends_.find(stored.task_id);
    const storage::TaskRecord& t = live != active_tasks_.end()       ? live->second
                                   : unstored != unstored_ends_.end() ? unstored->second
                                                                      : stored;
    v1::NodeTask* nt = out.add_tasks();
    nt->set_task_id(t.task_id);
    nt->set_node(t.node);
    nt->set_state(t.state);
    nt->set_reason(t.reason);
    nt->set_group_id(t.group_id);
    nt->set_group_rank(t.group_rank);
    for (const auto& o : t.outcomes) *nt->add_outcomes() = o;
    if (auto p = progress_.find(t.task_id); p != progress_.end()) {
      nt->set_progress_benchmark(p->second.benchmark);
      nt->set_progress_fraction(p->second.fraction);
      nt->set_progress_message(p->second.message);
    }
  }
  if (request.include_samples()) {
    // A page, by count and by bytes: a run of any size must fit the
    // messages every peer accepts (common/wire_limits.h).
    const uint32_t page_size = std::clamp<uint32_t>(
        request.samples_page_size() ? request.samples_page_size() : 10000, 1, 20000);
    std::optional<storage::RunSampleCursor> after;
    if (!request.samples_page_token().empty()) {
      auto parsed = ParseRunSamplesPageToken(request.samples_page_token(), request.run_id());
      if (!parsed.ok()) return parsed.status();
      after = *std::move(parsed);
    }
    std::vector<storage::RunSampleCursor> cursors;
    auto samples = store_->ListSamplesForRunPage(request.run_id(), static_cast<int>(page_size) + 1,
                                                 after, &cursors);
    if (!samples.ok()) return samples.status();
    size_t bytes = out.ByteSizeLong();
    size_t taken = 0;
    for (; taken < samples->size() && taken < page_size; ++taken) {
      bytes += (*samples)[taken].ByteSizeLong() + 8;  // + the field's tag and length
      if (taken > 0 && bytes > kPageBudgetBytes) break;
      *out.add_samples() = std::move((*samples)[taken]);
    }
    if (taken < samples->size()) {
      out.set_samples_next_page_token(RunSamplesPageToken(request.run_id(), cursors[taken - 1]));
    }
  }
  return out;
}

absl::StatusOr<v1::ListRunsResponse> FleetCore::ListRuns(const v1::ListRunsRequest& request,
                                                         absl::Time deadline) {
  const uint32_t page_size =
      std::clamp<uint32_t>(request.page_size() ? request.page_size() : 20, 1, 1000);
  std::string after;
  if (!request.page_token().empty()) {
    auto parsed = ParseRunsPageToken(request.page_token());
    if (!parsed.ok()) return parsed.status();
    after = *std::move(parsed);
  }
  // One more than the page: whether a next page exists, without a second
  // query and without handing out a token to an empty page.
  auto runs = store_->ListRuns(static_cast<int>(page_size) + 1, after);
  if (absl::IsNotFound(runs.status())) {
    return absl::InvalidArgumentError("page_token names a run that is no longer stored");
  }
  if (!runs.ok()) return runs.status();
  if (absl::Now() >= deadline) return CallerDeadlinePassed();
  v1::ListRunsResponse response;
  // A page ends at page_size runs or kPageBudgetBytes, whichever comes
  // first (at least one run): a page of large runs still fits a message.
  size_t bytes = 0;
  size_t taken = 0;
  for (size_t i = 0; i < runs->size() && i < page_size; ++i, ++taken) {
    if (i > 0 && bytes > kPageBudgetBytes) break;
    const storage::RunRecord& r = (*runs)[i];
    v1::Run* run = response.add_runs();
    run->set_run_id(r.run_id);
    run->set_state(RunStateFromName(r.state).value_or(v1::RUN_STATE_UNSPECIFIED));
    run->set_created_unix_ms(absl::ToUnixMillis(r.created));
    if (r.finished != absl::InfinitePast()) {
      run->set_finished_unix_ms(absl::ToUnixMillis(r.finished));
    }
    run->set_suite(r.suite);
    for (const auto& b : r.benchmarks) *run->add_benchmarks() = b;
    bytes += run->ByteSizeLong() + 8;
  }
  if (runs->size() > taken) {
    response.set_next_page_token(RunsPageToken(response.runs(response.runs_size() - 1).run_id()));
  }
  return response;
}

// NOT_FOUND for ranking a metric no agent declared, naming some that are:
// first those of the same plugin prefix (a typo), then the rest, capped.
absl::Status FleetCore::UndeclaredMetric(const std::string& metric) {
  constexpr size_t kMaxListed = 20;
  auto declared = store_->ListMetricDescriptors();
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

absl::StatusOr<std::vector<NodeSeries>> FleetCore::MetricSeries(
    const std::string& metric, absl::Time since,
    const std::vector<storage::NodeRecord>& nodes, const RankPricing& pricing) {
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

absl::StatusOr<v1::RankResponse> FleetCore::Rank(const v1::RankRequest& request,
                                                 absl::Time deadline) {
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
                                    : options_.rank_window;
  const absl::Time since = clock_->Now() - window;
  auto prices = store_->ListPrices();
  if (!prices.ok()) return prices.status();
  const PriceCatalog catalog(*prices);
  const RankPricing pricing{request.price(), &catalog};
  if (!request.profile().empty()) return RankProfile(request, pricing, since, deadline);
  // Unit and direction as the plugins declared them; checked before the
  // scan so a mistyped name costs nothing.
  absl::StatusOr<v1::MetricDescriptor> metric = store_->GetMetricDescriptor(request.metric());
  if (absl::IsNotFound(metric.status())) return UndeclaredMetric(request.metric());
  if (!metric.ok()) return metric.status();
  auto nodes = store_->ListNodes();
  if (!nodes.ok()) return nodes.status();
  auto series = MetricSeries(request.metric(), since, *nodes, pricing);
  if (!series.ok()) return series.status();
  if (absl::Now() >= deadline) return CallerDeadlinePassed();
  return RankByCostPerThroughput(*metric, request.by(), *series, pricing);
}

absl::StatusOr<v1::RankResponse> FleetCore::RankProfile(const v1::RankRequest& request,
                                                        const RankPricing& pricing,
                                                        absl::Time since, absl::Time deadline) {
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

absl::StatusOr<std::vector<storage::FactsVersion>> FleetCore::FactsHistory(
    const std::string& node, int limit, absl::Time deadline) {
  if (node.empty()) return absl::InvalidArgumentError("a node name is required");
  auto versions = store_->ListFactsVersions(node, std::clamp(limit, 1, 1000));
  if (!versions.ok()) return versions.status();
  if (absl::Now() >= deadline) return CallerDeadlinePassed();
  return versions;
}

absl::StatusOr<v1::HistoryResponse> FleetCore::History(const v1::HistoryRequest& request,
                                                       absl::Time deadline) {
  if (request.node().empty() || request.metric().empty()) {
    return absl::InvalidArgumentError("--node and --metric are required");
  }
  const uint32_t page_size =
      std::clamp<uint32_t>(request.page_size() ? request.page_size() : 100, 1, 100000);
  std::optional<storage::SampleCursor> after;
  if (!request.page_token().empty()) {
    auto parsed = ParseHistoryPageToken(request.page_token(), request.node(), request.metric());
    if (!parsed.ok()) return parsed.status();
    after = *std::move(parsed);
  }
  auto samples = store_->History(request.node(), request.metric(),
                                 static_cast<int>(page_size) + 1, after);
  if (!samples.ok()) return samples.status();
  if (absl::Now() >= deadline) return CallerDeadlinePassed();
  v1::HistoryResponse response;
  // A page ends at page_size samples or kPageBudgetBytes (at least one).
  size_t bytes = 0;
  size_t taken = 0;
  for (; taken < samples->size() && taken < page_size; ++taken) {
    bytes += (*samples)[taken].ByteSizeLong() + 8;
    if (taken > 0 && bytes > kPageBudgetBytes) break;
    *response.add_samples() = std::move((*samples)[taken]);
  }
  const bool more = samples->size() > taken;
  if (more) {
    const v1::Sample& last = response.samples(response.samples_size() - 1);
    response.set_next_page_token(HistoryPageToken(
        request.node(), request.metric(), {last.time_unix_ms(), last.id()}));
  }
  return response;
}

}  // namespace fleetbench::controller
