// FindingsView: findings and variance, computed on demand from the store
// (read only, on the caller's thread, like RankView). The rules are pure
// (diagnosis/); this file gathers their inputs — latest facts and labels,
// each metric's runs in the window for every node, the facts history, the
// samples of the run judged — within fixed bounds, and checks the caller's
// deadline between reads.
#include "controller/core/findings_view.h"

#include <malloc.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/api_enums.h"
#include "common/stats.h"
#include "common/wire_limits.h"
#include "common/status_macros.h"
#include "controller/core/caller_deadline.h"
#include "controller/core/rank_view.h"
#include "controller/ranking/ranking.h"
#include "diagnosis/finding.h"
#include "diagnosis/fleet_rules.h"
#include "diagnosis/node_rules.h"
#include "diagnosis/time_of_day.h"

namespace fleetbench::controller {
namespace {

// Bounds on what one call reads and returns, so a large store cannot make
// a findings call unbounded.
constexpr absl::Duration kMaxWindow = absl::Hours(24 * 365);
constexpr size_t kMaxMetrics = 256;           // declared metrics judged
constexpr size_t kMaxRunsPerSeries = 2000;    // newest runs kept per node and metric
// Runs read per node and metric, from which RunSeries keeps the newest
// kMaxRunsPerSeries by time: the store's bounded read takes runs in the
// order their points were written, so a margin covers runs stored late.
constexpr int kRunsReadPerNode = kMaxRunsPerSeries + kMaxRunsPerSeries / 4;
constexpr int kMaxFactsVersions = 64;         // per node
constexpr size_t kMaxNameLength = 256;        // run ids, time zone names

// The label whose value names a node's IANA time zone (Europe/Berlin).
constexpr char kTimeZoneLabel[] = "timezone";

absl::StatusOr<absl::Duration> WindowOf(int64_t window_ms, absl::Duration fallback) {
  if (window_ms < 0) return absl::InvalidArgumentError("window_ms must not be negative");
  if (window_ms == 0) return fallback;
  const absl::Duration window = absl::Milliseconds(window_ms);
  if (window > kMaxWindow) {
    return absl::InvalidArgumentError("window_ms is longer than 365 days");
  }
  return window;
}

// One value per (node, run): the median of the run's samples of the metric,
// timed at its first sample; each node's runs oldest first, the newest
// kMaxRunsPerSeries of them.
std::map<std::string, std::vector<diagnosis::RunValue>> RunSeries(
    const storage::MetricPointTable& table) {
  // Points in (node, run) order by one sort of 64-bit keys: a map entry
  // and a vector per (node, run) cost most of a findings call over a
  // million points.
  std::vector<std::pair<uint64_t, uint32_t>> order;
  order.reserve(table.points.size());
  for (uint32_t i = 0; i < table.points.size(); ++i) {
    const storage::MetricPointTable::Point& p = table.points[i];
    order.emplace_back(uint64_t{p.node} << 32 | p.run, i);
  }
  std::sort(order.begin(), order.end());
  // Per node (run index, median, first time), strings only for the runs
  // kept: over 5M points most runs fall past kMaxRunsPerSeries.
  struct Run {
    uint32_t run;
    double value;
    int64_t time_ms;
  };
  std::vector<std::vector<Run>> per_node(table.nodes.size());
  std::vector<double> values;
  for (size_t i = 0; i < order.size();) {
    const uint64_t key = order[i].first;
    values.clear();
    absl::Time first = absl::InfiniteFuture();
    for (; i < order.size() && order[i].first == key; ++i) {
      const storage::MetricPointTable::Point& p = table.points[order[i].second];
      values.push_back(p.value);
      first = std::min(first, p.time);
    }
    per_node[key >> 32].push_back(
        {static_cast<uint32_t>(key), Median(values), absl::ToUnixMillis(first)});
  }
  std::map<std::string, std::vector<diagnosis::RunValue>> out;
  for (size_t n = 0; n < per_node.size(); ++n) {
    std::vector<Run>& runs = per_node[n];
    if (runs.empty()) continue;
    std::sort(runs.begin(), runs.end(), [&](const Run& a, const Run& b) {
      return a.time_ms != b.time_ms ? a.time_ms < b.time_ms
                                    : table.run_ids[a.run] < table.run_ids[b.run];
    });
    const size_t from = runs.size() > kMaxRunsPerSeries ? runs.size() - kMaxRunsPerSeries : 0;
    std::vector<diagnosis::RunValue>& kept = out[table.nodes[n]];
    kept.reserve(runs.size() - from);
    for (size_t r = from; r < runs.size(); ++r) {
      kept.push_back({table.run_ids[runs[r].run], runs[r].value, runs[r].time_ms});
    }
  }
  return out;
}

std::optional<absl::TimeZone> ZoneOf(const std::map<std::string, std::string>& labels,
                                     const std::string& node, std::vector<std::string>* notes) {
  auto it = labels.find(kTimeZoneLabel);
  if (it == labels.end() || it->second.empty()) return std::nullopt;
  absl::TimeZone zone;
  if (it->second.size() <= kMaxNameLength && absl::LoadTimeZone(it->second, &zone)) return zone;
  notes->push_back(absl::StrCat("node ", node, ": timezone label '",
                                it->second.substr(0, kMaxNameLength),
                                "' names no known zone; UTC used"));
  return std::nullopt;
}

void ToProto(const diagnosis::HourProfile& p, v1::HourProfile* out) {
  out->set_time_zone(p.time_zone);
  for (int h = 0; h < 24; ++h) {
    v1::HourStat* s = out->add_hours();
    s->set_hour(static_cast<uint32_t>(h));
    s->set_count(static_cast<uint32_t>(p.hours[h].count));
    s->set_median(p.hours[h].median);
  }
  out->set_day_count(static_cast<uint32_t>(p.day_count));
  out->set_night_count(static_cast<uint32_t>(p.night_count));
  out->set_day_median(p.day_median);
  out->set_night_median(p.night_median);
  out->set_noise(p.noise);
  out->set_gap_fraction(p.gap_fraction);
  out->set_enough_data(p.enough_data);
  out->set_beyond_noise(p.beyond_noise);
  out->set_day_is_slower(p.day_is_slower);
  out->set_slow_hours(p.slow_hours);
}

// Hands the memory a judging call freed back to the system when the call
// ends. The call holds every node's newest runs at once (hundreds of MB
// for 1,000 nodes x 2,500 runs) and glibc keeps such freed heap mapped:
// without this a controller's RSS stayed at the call's peak.
class ReturnFreedMemoryOnExit {
 public:
  ReturnFreedMemoryOnExit() = default;
  ReturnFreedMemoryOnExit(const ReturnFreedMemoryOnExit&) = delete;
  ReturnFreedMemoryOnExit& operator=(const ReturnFreedMemoryOnExit&) = delete;
  ~ReturnFreedMemoryOnExit() { malloc_trim(0); }
};

}  // namespace

FindingsView::FindingsView(storage::Store* store, Clock* clock, absl::Duration findings_window,
                           diagnosis::FleetRuleOptions fleet_rules)
    : store_(store),
      clock_(clock),
      findings_window_(findings_window),
      fleet_rules_(std::move(fleet_rules)) {}

absl::StatusOr<v1::ListFindingsResponse> FindingsView::ListFindings(
    const v1::ListFindingsRequest& request, absl::Time deadline) const {
  // First, so that it runs after every other local is gone.
  const ReturnFreedMemoryOnExit return_freed_memory;
  if (request.node().size() > kMaxNodeNameBytes || request.run_id().size() > kMaxNameLength) {
    return absl::InvalidArgumentError(absl::StrCat("node is longer than ", kMaxNodeNameBytes,
                                                   " bytes or run_id longer than ",
                                                   kMaxNameLength));
  }
  if (!v1::Severity_IsValid(request.min_severity())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "min_severity ", static_cast<int>(request.min_severity()),
        " is not a severity; use info, warning or critical"));
  }
  absl::StatusOr<absl::Duration> window = WindowOf(request.window_ms(), findings_window_);
  if (!window.ok()) return window.status();
  const absl::Time now = clock_->Now();

  auto records = store_->ListNodes();
  if (!records.ok()) return records.status();
  const size_t fleet_nodes = records->size();
  std::vector<std::string> notes;
  diagnosis::FleetEvidence evidence;
  evidence.options = fleet_rules_;
  std::map<std::string, const storage::NodeRecord*> by_name;
  for (const storage::NodeRecord& r : *records) {
    by_name[r.name] = &r;
    diagnosis::FleetNode& n = evidence.nodes.emplace_back();
    n.name = r.name;
    n.facts = r.facts;
    n.labels = r.labels;
    n.time_zone = ZoneOf(r.labels, r.name, &notes);
  }
  if (!request.node().empty() && !by_name.contains(request.node())) {
    return absl::NotFoundError(absl::StrCat("node ", request.node(), " not found"));
  }

  // The nodes judged, and with a run, its samples (by node).
  std::set<std::string> subjects;
  std::map<std::string, std::vector<v1::Sample>> run_samples;
  absl::Time since = now - *window;
  absl::Time judged_at = now;
  if (!request.run_id().empty()) {
    auto run = store_->GetRun(request.run_id());
    if (!run.ok()) return run.status();
    auto tasks = store_->ListTasks(request.run_id());
    if (!tasks.ok()) return tasks.status();
    for (const storage::TaskRecord& t : *tasks) subjects.insert(t.node);
    auto samples = store_->ListSamplesForRun(request.run_id());
    if (!samples.ok()) return samples.status();
    for (v1::Sample& s : *samples) run_samples[s.node()].push_back(std::move(s));
    // An old run is judged against the window before it, not before now.
    since = std::min(since, run->created - *window);
    judged_at = run->finished != absl::InfinitePast() ? run->finished : run->created;
  } else {
    for (const auto& [name, r] : by_name) subjects.insert(name);
  }
  if (!request.node().empty()) {
    const bool in_run = subjects.contains(request.node());
    subjects.clear();
    if (in_run) subjects.insert(request.node());
  }

  auto descriptors = store_->ListMetricDescriptors();
  if (!descriptors.ok()) return descriptors.status();
  if (descriptors->size() > kMaxMetrics) {
    notes.push_back(absl::StrCat("judged the first ", kMaxMetrics, " of ", descriptors->size(),
                                 " declared metrics"));
    descriptors->resize(kMaxMetrics);
  }
  // Each node's latest run with results in the window, for the node rules.
  std::map<std::string, diagnosis::RunValue> latest;
  for (const v1::MetricDescriptor& d : *descriptors) {
    if (absl::Now() >= deadline) return CallerDeadlinePassed();
    auto table = store_->MetricPointTableOfNewestRuns(d.name(), since, kRunsReadPerNode,
                                                      fleet_nodes);
    if (!table.ok()) return table.status();
    if (table->points.empty()) continue;
    evidence.metrics[d.name()] = d;
    evidence.series[d.name()] = RunSeries(*table);
    // The series view these strings; moving the vector keeps each string
    // where it is.
    evidence.run_id_tables.push_back(std::move(table->run_ids));
    for (const auto& [node, runs] : evidence.series[d.name()]) {
      diagnosis::RunValue& l = latest[node];
      if (runs.back().time_unix_ms >= l.time_unix_ms) l = runs.back();
    }
  }
  for (const std::string& node : subjects) {
    auto versions = store_->ListFactsVersions(node, kMaxFactsVersions);
    if (absl::IsNotFound(versions.status())) continue;  // a task's node since removed
    if (!versions.ok()) return versions.status();
    std::vector<diagnosis::FactsVersion>& history = evidence.facts_history[node];
    for (auto it = versions->rbegin(); it != versions->rend(); ++it) {
      history.push_back({absl::ToUnixMillis(it->seen), std::move(it->facts)});
    }
  }
  if (absl::Now() >= deadline) return CallerDeadlinePassed();

  // Without a run, the node rules read each node's latest run's samples;
  // runs shared by several nodes are read once.
  std::map<std::string, std::vector<v1::Sample>> latest_runs;
  // The node rules also read the benchmarks' outcomes (an rdma benchmark
  // skipped for want of a device is net.no_rdma); each run's tasks once.
  std::map<std::string, std::vector<storage::TaskRecord>> run_tasks;
  auto outcomes_of = [&](const std::string& run_id, const std::string& node)
      -> absl::StatusOr<std::vector<v1::BenchmarkOutcome>> {
    auto tasks = run_tasks.find(run_id);
    if (tasks == run_tasks.end()) {
      FLEETBENCH_ASSIGN_OR_RETURN(std::vector<storage::TaskRecord> listed,
                                  store_->ListTasks(run_id));
      tasks = run_tasks.emplace(run_id, std::move(listed)).first;
    }
    std::vector<v1::BenchmarkOutcome> outcomes;
    for (const storage::TaskRecord& t : tasks->second) {
      if (t.node == node) outcomes.insert(outcomes.end(), t.outcomes.begin(), t.outcomes.end());
    }
    return outcomes;
  };
  // Worked out once: each node's findings compare it with the same peers.
  const std::shared_ptr<const diagnosis::FleetIndex> fleet_index = diagnosis::IndexFleet(evidence);
  v1::ListFindingsResponse response;
  uint32_t nodes_judged = 0;
  std::vector<v1::Finding> findings;
  for (const std::string& node : subjects) {
    auto record = by_name.find(node);
    if (record == by_name.end()) continue;
    diagnosis::NodeEvidence node_evidence;
    node_evidence.node = node;
    node_evidence.facts = record->second->facts;
    node_evidence.labels = record->second->labels;
    node_evidence.run_id = request.run_id();
    node_evidence.time_unix_ms = absl::ToUnixMillis(judged_at);
    if (!request.run_id().empty()) {
      node_evidence.samples = run_samples[node];
    } else if (auto l = latest.find(node); l != latest.end()) {
      const std::string latest_run(l->second.run_id);
      auto cached = latest_runs.find(latest_run);
      if (cached == latest_runs.end()) {
        auto samples = store_->ListSamplesForRun(latest_run);
        if (!samples.ok()) return samples.status();
        cached = latest_runs.emplace(latest_run, std::move(*samples)).first;
      }
      for (const v1::Sample& s : cached->second) {
        if (s.node() == node) node_evidence.samples.push_back(s);
      }
      node_evidence.run_id = latest_run;
      node_evidence.time_unix_ms = l->second.time_unix_ms;
    }
    if (!node_evidence.run_id.empty()) {
      FLEETBENCH_ASSIGN_OR_RETURN(node_evidence.outcomes,
                                  outcomes_of(node_evidence.run_id, node));
    }
    if (absl::Now() >= deadline) return CallerDeadlinePassed();
    ++nodes_judged;
    std::vector<v1::Finding> judged = diagnosis::DiagnoseNode(node_evidence);
    for (v1::Finding& f :
         diagnosis::DiagnoseFleetNode(evidence, node, request.run_id(), fleet_index.get())) {
      judged.push_back(std::move(f));
    }
    for (v1::Finding& f : judged) {
      if (f.severity() >= request.min_severity()) findings.push_back(std::move(f));
    }
  }
  diagnosis::SortFindings(&findings);
  // Worst first, up to a page's bytes: a response any peer can read.
  size_t bytes = 0;
  size_t kept = 0;
  for (v1::Finding& f : findings) {
    bytes += f.ByteSizeLong();
    if (bytes > kPageBudgetBytes) break;
    *response.add_findings() = std::move(f);
    ++kept;
  }
  if (kept < findings.size()) {
    notes.push_back(absl::StrCat("showing the worst ", kept, " of ", findings.size(),
                                 " findings (a response's byte budget); narrow with node or "
                                 "min_severity"));
  }
  response.set_nodes_judged(nodes_judged);
  for (std::string& n : notes) response.add_notes(std::move(n));
  return response;
}

absl::StatusOr<v1::VarianceResponse> FindingsView::Variance(const v1::VarianceRequest& request,
                                                            absl::Time deadline) const {
  const ReturnFreedMemoryOnExit return_freed_memory;
  if (request.metric().empty()) {
    return absl::InvalidArgumentError("--metric is required, e.g. gemm.cpu.fp32.tflops");
  }
  if (absl::Status s = CheckRankGrouping(request.by()); !s.ok()) return s;
  absl::StatusOr<absl::Duration> window = WindowOf(request.window_ms(), findings_window_);
  if (!window.ok()) return window.status();
  absl::StatusOr<v1::MetricDescriptor> metric = store_->GetMetricDescriptor(request.metric());
  if (absl::IsNotFound(metric.status())) return UndeclaredMetric(*store_, request.metric());
  if (!metric.ok()) return metric.status();
  if (metric->direction() == v1::METRIC_DIRECTION_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric ", metric->name(), " has no direction (higher or lower is better)"));
  }
  const bool higher = metric->direction() == v1::METRIC_DIRECTION_HIGHER_IS_BETTER;
  auto nodes = store_->ListNodes();
  if (!nodes.ok()) return nodes.status();
  auto table = store_->MetricPointTableOfNewestRuns(request.metric(), clock_->Now() - *window,
                                                    kRunsReadPerNode, nodes->size());
  if (!table.ok()) return table.status();
  if (absl::Now() >= deadline) return CallerDeadlinePassed();

  const v1::RankGrouping by =
      request.by() == v1::RANK_GROUPING_UNSPECIFIED ? v1::RANK_GROUPING_NODE : request.by();
  const std::string label = by == v1::RANK_GROUPING_NODE ? "" : RankGroupingName(by);
  std::map<std::string, std::map<std::string, std::string>> labels;
  for (const storage::NodeRecord& n : *nodes) labels[n.name] = n.labels;
  struct Group {
    std::set<std::string> nodes;
    std::vector<diagnosis::TimedValue> values;
    std::set<std::string> zones;  // the members' timezone labels ("" for none)
  };
  std::map<std::string, Group> groups;
  for (const auto& [node, runs] : RunSeries(*table)) {
    const std::map<std::string, std::string>& l = labels[node];
    std::string name = node;
    if (!label.empty()) {
      auto it = l.find(label);
      name = it == l.end() || it->second.empty() ? kNoLabelGroup : it->second;
    }
    Group& g = groups[name];
    g.nodes.insert(node);
    auto zone = l.find(kTimeZoneLabel);
    g.zones.insert(zone == l.end() ? "" : zone->second);
    for (const diagnosis::RunValue& r : runs) g.values.push_back({r.value, r.time_unix_ms});
  }
  v1::VarianceResponse response;
  response.set_metric(metric->name());
  response.set_unit(metric->unit());
  response.set_higher_is_better(higher);
  response.set_by(by);
  for (const auto& [name, g] : groups) {
    v1::VarianceGroup* out = response.add_groups();
    out->set_group(name);
    out->set_node_count(static_cast<uint32_t>(g.nodes.size()));
    out->set_run_count(static_cast<uint32_t>(g.values.size()));
    ToProto(diagnosis::ProfileByHour(g.values, absl::UTCTimeZone(), higher,
                                     fleet_rules_.time_of_day),
            out->add_profiles());
    absl::TimeZone local;
    if (g.zones.size() == 1 && !g.zones.begin()->empty() &&
        g.zones.begin()->size() <= kMaxNameLength &&
        absl::LoadTimeZone(*g.zones.begin(), &local)) {
      ToProto(diagnosis::ProfileByHour(g.values, local, higher, fleet_rules_.time_of_day),
              out->add_profiles());
    }
  }
  return response;
}

}  // namespace fleetbench::controller
