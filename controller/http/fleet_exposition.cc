#include "controller/http/fleet_exposition.h"

#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/api_enums.h"
#include "diagnosis/finding.h"

namespace fleetbench::controller {
namespace {

namespace prom = prometheus;

// The node's labels every fleet series carries: who measured it, and where.
prom::Labels NodeLabels(const v1::Node& node) {
  prom::Labels labels{{"node", node.name()}};
  for (const char* key : {"provider", "region", "instance_type"}) {
    auto it = node.labels().find(key);
    if (it != node.labels().end() && !it->second.empty()) labels[key] = it->second;
  }
  if (node.facts().gpus_size() > 0 && !node.facts().gpus(0).name().empty()) {
    labels["gpu"] = node.facts().gpus(0).name();
  }
  return labels;
}

std::string Snake(std::string_view text) {
  std::string out = prom::SanitizeLabelName(absl::AsciiStrToLower(absl::string_view(text.data(), text.size())));
  // Runs of '_' (from "a..b" or "a._b") read as one.
  std::string squeezed;
  for (char c : out) {
    if (c == '_' && !squeezed.empty() && squeezed.back() == '_') continue;
    squeezed.push_back(c);
  }
  while (squeezed.size() > 1 && squeezed.back() == '_') squeezed.pop_back();
  return squeezed;
}

}  // namespace

BaseUnit BaseUnitOf(std::string_view unit) {
  // Decimal prefixes throughout (docs/metrics.md, Units); bits become bytes.
  static const auto* const kTable = new std::map<std::string, BaseUnit, std::less<>>{
      {"tflops", {"flop_per_second", 1e12}},
      {"gflops", {"flop_per_second", 1e9}},
      {"flops", {"flop_per_second", 1}},
      {"GBps", {"bytes_per_second", 1e9}},
      {"MBps", {"bytes_per_second", 1e6}},
      {"KBps", {"bytes_per_second", 1e3}},
      {"Bps", {"bytes_per_second", 1}},
      {"Gbps", {"bytes_per_second", 1e9 / 8}},
      {"Mbps", {"bytes_per_second", 1e6 / 8}},
      {"s", {"seconds", 1}},
      {"seconds", {"seconds", 1}},
      {"ms", {"seconds", 1e-3}},
      {"us", {"seconds", 1e-6}},
      {"ns", {"seconds", 1e-9}},
      {"iops", {"ops_per_second", 1}},
      {"ratio", {"ratio", 1}},
      {"pct", {"ratio", 0.01}},
      {"count", {"events", 1}},
      {"C", {"celsius", 1}},
      {"W", {"watts", 1}},
  };
  auto it = kTable->find(unit);
  if (it != kTable->end()) return it->second;
  return {Snake(unit.empty() ? "value" : unit), 1};
}

std::string FamilyNameOf(std::string_view metric, std::string_view unit) {
  std::string_view stem = metric;
  // The name ends with its unit (docs/metrics.md): ".tflops" or "_us" of
  // "p99_us"; the base unit's suffix takes its place.
  if (!unit.empty() && stem.size() > unit.size() && absl::EndsWith(absl::string_view(stem.data(), stem.size()),
                                 absl::string_view(unit.data(), unit.size()))) {
    const char before = stem[stem.size() - unit.size() - 1];
    if (before == '.' || before == '_') stem.remove_suffix(unit.size() + 1);
  }
  return absl::StrCat("fleetbench_", Snake(stem), "_", BaseUnitOf(unit).suffix);
}

const std::map<std::string, std::string>& SeriesParamLabels() {
  static const auto* const kParams = new std::map<std::string, std::string>{
      {"dtype", "dtype"},           {"size", "size"},
      {"layout", "layout"},         {"kernel", "kernel"},
      {"workload", "workload"},     {"block_bytes", "block_bytes"},
      {"iodepth", "iodepth"},       {"direction", "direction"},
      {"streams", "streams"},       {"peer_node", "peer_node"},
      {"gpu", "gpu_index"},         {"pinned", "pinned"},
      {"collective", "collective"}, {"bytes", "bytes"},
  };
  return *kParams;
}

void AddFleetFamilies(const FleetSnapshot& snapshot, prom::Exposition* out) {
  std::map<std::string, const v1::Node*> nodes;
  for (const v1::Node& node : snapshot.nodes.nodes()) nodes[node.name()] = &node;

  prom::Family& online = out->Add("fleetbench_node_online", prom::MetricType::kGauge,
                                  "1 while the node's agent is connected and heard from "
                                  "within the heartbeat timeout, else 0.");
  prom::Family& last_seen =
      out->Add("fleetbench_node_last_seen_timestamp_seconds", prom::MetricType::kGauge,
               "When the controller last heard from the node's agent (Unix time).");
  for (const auto& [name, node] : nodes) {
    online.Add(NodeLabels(*node), node->status() == v1::NODE_STATUS_ONLINE ? 1 : 0);
    last_seen.Add(NodeLabels(*node), static_cast<double>(node->last_seen_unix_ms()) / 1e3);
  }

  // Measurements: one family per metric (two metrics whose names differ
  // only in unit share one, told apart by the `metric` label).
  std::map<std::string, const v1::MetricDescriptor*> descriptors;
  for (const v1::MetricDescriptor& d : snapshot.latest.metrics) descriptors[d.name()] = &d;
  for (const auto& [name, d] : descriptors) {
    out->Add(FamilyNameOf(name, d->unit()), prom::MetricType::kGauge,
             absl::StrCat(d->description().empty() ? name : d->description(), " (", name,
                          ", latest run per node; declared in ", d->unit(),
                          ", shown in base units)"));
  }
  for (const v1::Sample& sample : snapshot.latest.samples) {
    auto d = descriptors.find(sample.metric());
    auto node = nodes.find(sample.node());
    if (d == descriptors.end() || node == nodes.end()) continue;
    // The declared unit, not the sample's: the family's name says it.
    const std::string& unit = d->second->unit();
    prom::Labels labels = NodeLabels(*node->second);
    labels["metric"] = sample.metric();
    for (const auto& [param, label] : SeriesParamLabels()) {
      auto it = sample.params().find(param);
      if (it != sample.params().end()) labels[label] = it->second;
    }
    out->Add(FamilyNameOf(sample.metric(), unit), prom::MetricType::kGauge, "")
        .Add(std::move(labels), sample.value() * BaseUnitOf(unit).factor);
  }

  prom::Family& rank = out->Add(
      "fleetbench_node_rank", prom::MetricType::kGauge,
      "The node's place in `fleetbench rank --metric METRIC --by node` (1 is best), over "
      "the rank window.");
  for (const auto& [metric, response] : snapshot.ranks) {
    for (int i = 0; i < response.rows_size(); ++i) {
      auto node = nodes.find(response.rows(i).group());
      prom::Labels labels = node != nodes.end() ? NodeLabels(*node->second)
                                                : prom::Labels{{"node", response.rows(i).group()}};
      labels["metric"] = metric;
      rank.Add(std::move(labels), i + 1);
    }
  }
}

void AddHealthFamilies(const FleetSnapshot& snapshot, prom::Exposition* out) {
  int online = 0;
  for (const v1::Node& node : snapshot.nodes.nodes()) {
    online += node.status() == v1::NODE_STATUS_ONLINE;
  }
  out->Add("fleetbench_agents_connected", prom::MetricType::kGauge,
           "Agents connected and heard from within the heartbeat timeout.")
      .Add({}, online);
  out->Add("fleetbench_nodes", prom::MetricType::kGauge,
           "Nodes in the fleet, online or not (removed ones left out).")
      .Add({}, snapshot.nodes.nodes_size());

  prom::Family& runs = out->Add("fleetbench_runs", prom::MetricType::kGauge,
                                "Stored runs by state.");
  std::map<std::string, int64_t> states;
  for (v1::RunState s : {v1::RUN_STATE_QUEUED, v1::RUN_STATE_RUNNING, v1::RUN_STATE_SUCCEEDED,
                         v1::RUN_STATE_FAILED, v1::RUN_STATE_CANCELLED}) {
    states[RunStateName(s)] = 0;
  }
  for (const auto& [state, count] : snapshot.runs_by_state) states[state] += count;
  if (!snapshot.runs_by_state.empty() || snapshot.errors.empty()) {
    for (const auto& [state, count] : states) runs.Add({{"state", state}}, count);
  }

  const FleetCore::Stats& stats = snapshot.stats;
  out->Add("fleetbench_samples_ingested_total", prom::MetricType::kCounter,
           "Samples stored since the controller started (resends not counted).")
      .Add({}, stats.samples_stored);
  out->Add("fleetbench_samples_duplicate_total", prom::MetricType::kCounter,
           "Samples received again (a resend) and not stored twice, since start.")
      .Add({}, stats.samples_duplicate);
  out->Add("fleetbench_reports_committed_total", prom::MetricType::kCounter,
           "Agent reports committed to the store since start.")
      .Add({}, stats.reports_committed);
  const LatencyHistogram& latency = stats.ingest_commit_latency;
  out->Add("fleetbench_ingest_batch_duration_seconds", prom::MetricType::kHistogram,
           "How long each group commit of agent reports took in the store.")
      .AddHistogram({}, {latency.upper_bounds(), latency.cumulative(), latency.count(),
                         latency.sum_seconds()});
  if (snapshot.store_bytes.has_value()) {
    out->Add("fleetbench_store_size_bytes", prom::MetricType::kGauge,
             "Size of the SQLite history file and its write-ahead log.")
        .Add({}, static_cast<double>(*snapshot.store_bytes));
  }
  out->Add("fleetbench_store_failures_total", prom::MetricType::kCounter,
           "Store writes that failed (a full disk, say) since start; each is retried.")
      .Add({}, stats.store_failures);
  out->Add("fleetbench_store_failing", prom::MetricType::kGauge,
           "1 while store writes fail and reports wait in memory, else 0.")
      .Add({}, stats.store_error.empty() ? 0 : 1);
  out->Add("fleetbench_reports_held", prom::MetricType::kGauge,
           "Agent reports held unacknowledged until the store takes them.")
      .Add({}, stats.reports_held);

  prom::Family& firings = out->Add("fleetbench_schedule_firings_total", prom::MetricType::kCounter,
                                   "Schedule firings by schedule and outcome, since start.");
  for (const auto& [labels, count] : snapshot.schedule_firings) firings.Add(labels, count);

  prom::Family& findings = out->Add(
      "fleetbench_findings_open", prom::MetricType::kGauge,
      "Findings on each node's latest results and facts, by node, code and severity "
      "(`fleetbench findings`).");
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> counts;
  for (const v1::Finding& f : snapshot.findings) {
    ++counts[{f.subject().node(), f.code(), diagnosis::SeverityName(f.severity())}];
  }
  for (const auto& [key, count] : counts) {
    findings.Add({{"node", std::get<0>(key)},
                  {"code", std::get<1>(key)},
                  {"severity", std::get<2>(key)}},
                 count);
  }

  // The nodes' reliability (docs/reliability.md): gauges over the last 30
  // days, not counters, since the window's start moves.
  prom::Family& online_time = out->Add(
      "fleetbench_node_online_seconds", prom::MetricType::kGauge,
      "Time each node was online in the last 30 days (`fleetbench reliability`).");
  prom::Family& interruptions = out->Add(
      "fleetbench_node_interruptions", prom::MetricType::kGauge,
      "Interruptions of each node in the last 30 days, by kind (offline, agent_restart, "
      "preempted, revoked).");
  for (const v1::ReliabilityGroup& g : snapshot.reliability.groups()) {
    online_time.Add({{"node", g.group()}}, g.node_hours() * 3600);
    for (const v1::InterruptionCount& c : g.by_kind()) {
      interruptions.Add({{"node", g.group()}, {"kind", InterruptionKindName(c.kind())}},
                        static_cast<double>(c.count()));
    }
  }

  prom::Family& errors = out->Add(
      "fleetbench_exposition_errors", prom::MetricType::kGauge,
      "1 for each part of this page that could not be read (its families are left out).");
  for (const std::string& part : snapshot.errors) errors.Add({{"part", part}}, 1);
}

}  // namespace fleetbench::controller
