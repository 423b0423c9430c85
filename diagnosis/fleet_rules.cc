#include "diagnosis/fleet_rules.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/gpu_skus.h"
#include "common/stats.h"

namespace fleetbench::diagnosis {
namespace {

constexpr char kOutlier[] = "fleet.outlier";
constexpr char kRegression[] = "node.regression";
constexpr char kTimeOfDay[] = "node.time_of_day";

// How much worse `value` is than `expected`, as a fraction of `expected`:
// positive when worse, whichever way the metric points. 0 for an expected
// value that is not positive (nothing to measure against).
double Shortfall(double value, double expected, bool higher_is_better) {
  if (!(expected > 0)) return 0;
  return higher_is_better ? (expected - value) / expected : (value - expected) / expected;
}

// "3 significant digits" for numbers in sentences.
std::string Num(double v) { return absl::StrFormat("%.3g", v); }
std::string Percent(double fraction) { return absl::StrFormat("%.0f%%", 100 * fraction); }

std::string Utc(int64_t unix_ms) {
  return absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::FromUnixMillis(unix_ms),
                          absl::UTCTimeZone());
}

const v1::MetricDescriptor* Judged(const FleetEvidence& e, const std::string& metric) {
  auto it = e.metrics.find(metric);
  if (it == e.metrics.end() ||
      it->second.direction() == v1::METRIC_DIRECTION_UNSPECIFIED) {
    return nullptr;
  }
  return &it->second;
}

bool HigherIsBetter(const v1::MetricDescriptor& m) {
  return m.direction() == v1::METRIC_DIRECTION_HIGHER_IS_BETTER;
}

std::vector<double> ValuesOf(const std::vector<RunValue>& runs) {
  std::vector<double> out;
  out.reserve(runs.size());
  for (const RunValue& r : runs) out.push_back(r.value);
  return out;
}

// The index of the run judged: `run_id`'s, or the latest; -1 when absent.
int JudgedRun(const std::vector<RunValue>& runs, const std::string& run_id) {
  if (runs.empty()) return -1;
  if (run_id.empty()) return static_cast<int>(runs.size()) - 1;
  for (size_t i = runs.size(); i-- > 0;) {
    if (runs[i].run_id == run_id) return static_cast<int>(i);
  }
  return -1;
}

v1::Finding NewFinding(const char* code, const std::string& node, const RunValue& run,
                       double shortfall, const FleetRuleOptions& o) {
  v1::Finding f;
  f.set_code(code);
  f.set_severity(shortfall >= o.critical_relative ? v1::SEVERITY_CRITICAL
                                                  : v1::SEVERITY_WARNING);
  f.mutable_subject()->set_node(node);
  f.set_run_id(std::string(run.run_id));
  f.set_time_unix_ms(run.time_unix_ms);
  return f;
}

void AddEvidence(v1::Finding* f, const v1::MetricDescriptor& metric, double measured,
                 double expected, const std::string& source) {
  v1::Evidence* e = f->add_evidence();
  e->set_name(metric.name());
  e->set_measured(measured);
  e->set_expected(expected);
  e->set_unit(metric.unit());
  e->set_expectation_source(source);
}

std::string Worse(bool higher_is_better) { return higher_is_better ? "below" : "above"; }

// Throughput and latency vary by a factor, not by an amount: the MAD tests
// run on log values when every value is positive, so a node 99% below two
// peers that differ from each other by 2x is still far out. Linear when a
// value is 0 or negative (counts).
struct Scale {
  bool log = false;
  double operator()(double v) const { return log ? std::log(v) : v; }
  std::vector<double> operator()(const std::vector<double>& values) const {
    std::vector<double> out;
    out.reserve(values.size());
    for (double v : values) out.push_back((*this)(v));
    return out;
  }
  // A noise figure for people: "±12%" on the log scale, else "4.5 us".
  std::string Noise(double noise, const std::string& unit) const {
    return log ? absl::StrFormat("+-%.0f%%", 100 * (std::exp(noise) - 1))
               : absl::StrCat(Num(noise), " ", unit);
  }
};
bool AllPositive(const std::vector<double>& values) {
  for (double v : values) {
    if (!(v > 0)) return false;
  }
  return true;
}

// --- fleet.outlier ---------------------------------------------------------

const SkuExpectation* SkuRowFor(const FleetNode& node, const std::string& metric) {
  if (node.facts.gpus().empty()) return nullptr;
  const gpu::GpuSku* sku = gpu::FindGpuSku(node.facts.gpus(0).name());
  if (sku == nullptr) return nullptr;
  for (const SkuExpectation& row : SkuTable()) {
    if (row.metric == metric && row.sku == sku->label) return &row;
  }
  return nullptr;
}

// A peer's value to compare with `run`: its value in that run when it has
// one, else the median of its `nearest` runs closest in time.
double PeerValueNear(const std::vector<RunValue>& runs, const RunValue& run, int nearest) {
  for (const RunValue& r : runs) {
    if (r.run_id == run.run_id) return r.value;
  }
  std::vector<const RunValue*> by_distance;
  for (const RunValue& r : runs) by_distance.push_back(&r);
  auto distance = [&](const RunValue* r) {
    return r->time_unix_ms > run.time_unix_ms ? r->time_unix_ms - run.time_unix_ms
                                              : run.time_unix_ms - r->time_unix_ms;
  };
  std::stable_sort(by_distance.begin(), by_distance.end(),
                   [&](const RunValue* a, const RunValue* b) { return distance(a) < distance(b); });
  std::vector<double> values;
  for (size_t i = 0; i < by_distance.size() && static_cast<int>(i) < std::max(nearest, 1); ++i) {
    values.push_back(by_distance[i]->value);
  }
  return Median(values);
}

}  // namespace

class FleetIndex {
 public:
  struct NodeRuns {
    // The first value of each run id; the ids are the evidence's own.
    absl::flat_hash_map<absl::string_view, double> by_run;
    bool all_positive = false;
    // Run-to-run noise (ScaledMad about the median) on each scale; set with
    // 3 runs or more (log only when every value is positive).
    std::optional<double> mad_linear;
    std::optional<double> mad_log;
  };
  // metric -> node -> its runs.
  std::map<std::string, absl::flat_hash_map<std::string, NodeRuns>> metrics;
  // peer group -> its members, in evidence.nodes order.
  std::map<std::string, std::vector<const FleetNode*>> groups;

  const NodeRuns* Runs(const std::string& metric, const std::string& node) const {
    auto m = metrics.find(metric);
    if (m == metrics.end()) return nullptr;
    auto n = m->second.find(node);
    return n == m->second.end() ? nullptr : &n->second;
  }
};

namespace {

// One run of a node against its peers.
struct PeerCheck {
  std::vector<std::string> peers;
  std::vector<double> values;  // each peer's vote, as `peers`
  Baseline base;               // of the votes
  Scale scale;
  double noise = 0;     // on `scale`
  double shortfall = 0;
  double distance = 0;  // on `scale`
  bool outlier = false;
};

// nullopt when the group (the node included) has fewer than min_group
// nodes with values.
std::optional<PeerCheck> ComparePeers(const FleetEvidence& e, const FleetIndex& index,
                                      const FleetNode& node,
                                      const v1::MetricDescriptor& metric,
                                      const std::map<std::string, std::vector<RunValue>>& by_node,
                                      const std::string& group, const RunValue& run) {
  const FleetRuleOptions& o = e.options;
  if (group.empty()) return std::nullopt;
  auto members = index.groups.find(group);
  if (members == index.groups.end()) return std::nullopt;
  // Peers: the other members of the group with values in the window. Each
  // votes once, with its value in the same run when it has one, else the
  // median of its runs nearest in time to the judged one: a change the whole
  // group saw since (a busy shared host) moves the peers too. Their noise is
  // each one's run-to-run spread over the window.
  PeerCheck c;
  std::vector<const FleetIndex::NodeRuns*> histories;
  bool positive = run.value > 0;
  for (const FleetNode* other : members->second) {
    if (other->name == node.name) continue;
    auto it = by_node.find(other->name);
    if (it == by_node.end() || it->second.empty()) continue;
    const FleetIndex::NodeRuns* runs = index.Runs(metric.name(), other->name);
    if (runs == nullptr) continue;  // an index of other evidence
    c.peers.push_back(other->name);
    auto same_run = runs->by_run.find(run.run_id);
    c.values.push_back(same_run != runs->by_run.end()
                           ? same_run->second
                           : PeerValueNear(it->second, run, o.peer_nearest_runs));
    histories.push_back(runs);
    positive = positive && runs->all_positive && c.values.back() > 0;
  }
  if (static_cast<int>(c.peers.size()) + 1 < o.min_group) return std::nullopt;
  c.scale = Scale{positive};
  std::optional<Baseline> base = RobustBaseline(c.values, o.baseline);
  std::optional<Baseline> scaled = RobustBaseline(c.scale(c.values), o.baseline);
  if (!base || !scaled) return std::nullopt;
  c.base = *base;
  // The noise a single run is judged against: how far the peers are from
  // each other, or how much one peer varies from run to run, the larger.
  std::vector<double> run_to_run;
  for (const FleetIndex::NodeRuns* h : histories) {
    const std::optional<double>& mad = c.scale.log ? h->mad_log : h->mad_linear;
    if (mad) run_to_run.push_back(*mad);
  }
  c.noise = std::max(scaled->mad, run_to_run.empty() ? 0.0 : Median(run_to_run));
  const bool higher = HigherIsBetter(metric);
  c.shortfall = Shortfall(run.value, base->median, higher);
  c.distance = std::fabs(c.scale(run.value) - scaled->median);
  c.outlier = c.shortfall > o.outlier_relative && c.distance > o.outlier_mads * c.noise;
  return c;
}

// An outlier in one run is a hint (info: re-run to confirm); in the run
// before as well it is a finding at the severity its shortfall says. A
// node measured while something else briefly held its CPU or disk is slow
// in that run only; a node with a cap is slow every time.
void Confirm(v1::Finding* f, bool before_too) {
  if (before_too) {
    f->add_context("the node's run before was an outlier as well");
    return;
  }
  f->set_severity(v1::SEVERITY_INFO);
  f->add_context("in this run only (not in the node's run before, or there is none): re-run "
                 "to confirm");
}

void OutlierForMetric(const FleetEvidence& e, const FleetIndex& index, const FleetNode& node,
                      const v1::MetricDescriptor& metric,
                      const std::map<std::string, std::vector<RunValue>>& by_node,
                      const std::string& run_id, std::vector<v1::Finding>* out) {
  const FleetRuleOptions& o = e.options;
  auto own = by_node.find(node.name);
  if (own == by_node.end()) return;
  const int at = JudgedRun(own->second, run_id);
  if (at < 0) return;
  const RunValue& run = own->second[at];
  const bool higher = HigherIsBetter(metric);
  const std::string group = PeerGroupOf(node);

  std::optional<PeerCheck> c = ComparePeers(e, index, node, metric, by_node, group, run);
  if (c) {
    if (!c->outlier) return;
    std::optional<PeerCheck> before;
    if (at > 0) {
      before = ComparePeers(e, index, node, metric, by_node, group, own->second[at - 1]);
    }
    v1::Finding f = NewFinding(kOutlier, node.name, run, c->shortfall, o);
    f.set_summary(absl::StrCat(metric.name(), " ", Num(run.value), " ", metric.unit(), " is ",
                               Percent(c->shortfall), " ", Worse(higher), " its ", c->peers.size(),
                               " peers (median ", Num(c->base.median), ", ", group, ")"));
    AddEvidence(&f, metric, run.value, c->base.median,
                absl::StrCat("fleet peers: ", c->peers.size(), " nodes with ", group,
                             " (median of their values near this run, noise ",
                             c->scale.Noise(c->noise, metric.unit()),
                             c->base.dropped
                                 ? absl::StrCat(", ", c->base.dropped, " outliers dropped")
                                 : "",
                             ")"));
    std::vector<std::string> listed;
    for (size_t i = 0; i < c->peers.size(); ++i) {
      listed.push_back(absl::StrCat(c->peers[i], " ", Num(c->values[i])));
    }
    f.add_context(absl::StrCat("peers (", c->peers.size(), ", ", group,
                               "): ", absl::StrJoin(listed, ", ")));
    f.add_context(absl::StrCat("threshold: ", Percent(o.outlier_relative), " and ",
                               Num(o.outlier_mads), " MADs ", Worse(higher), " the peers; this is ",
                               c->noise > 0 ? Num(c->distance / c->noise) : std::string("inf"),
                               " MADs", c->scale.log ? " (of log values)" : ""));
    Confirm(&f, before && before->outlier);
    f.set_effect(absl::StrCat("Work bound by ", metric.name(), " runs about ",
                              Percent(c->shortfall), " slower here than on the same hardware "
                              "elsewhere in the fleet."));
    f.set_suggestion(
        "Compare this node's facts with its peers' (fleetbench nodes --json); look for a "
        "CPU quota, a throttled or shared disk, a busy neighbour or a lower power limit, and "
        "re-run to rule out a one-off.");
    out->push_back(std::move(f));
    return;
  }
  // Too few peers to learn from: the SKU table, where it knows the metric.
  const SkuExpectation* row = SkuRowFor(node, metric.name());
  if (row == nullptr) return;
  const double shortfall = Shortfall(run.value, row->expected, higher);
  if (shortfall <= o.sku_relative) return;
  const bool before_too =
      at > 0 && Shortfall(own->second[at - 1].value, row->expected, higher) > o.sku_relative;
  int group_size = 1;
  for (const FleetNode& other : e.nodes) {
    if (other.name != node.name && !group.empty() && PeerGroupOf(other) == group &&
        by_node.contains(other.name)) {
      ++group_size;
    }
  }
  v1::Finding f = NewFinding(kOutlier, node.name, run, shortfall, o);
  f.set_summary(absl::StrCat(metric.name(), " ", Num(run.value), " ", metric.unit(), " is ",
                             Percent(shortfall), " ", Worse(higher), " the SKU table's ",
                             Num(row->expected), " for ", row->sku));
  AddEvidence(&f, metric, run.value, row->expected,
              absl::StrCat("SKU table: ", row->sku, ", ", row->source));
  f.add_context(absl::StrCat("fleet peers: only ", group_size, " node(s) in ",
                             group.empty() ? "its group" : group, ", fewer than ", o.min_group,
                             "; used the SKU table"));
  Confirm(&f, before_too);
  f.set_effect(absl::StrCat("Work bound by ", metric.name(), " runs about ", Percent(shortfall),
                            " slower than this GPU model usually reaches."));
  f.set_suggestion(
      "Check the GPU's power limit, clocks and PCIe link (fleetbench nodes --json), and add "
      "nodes of the same type so the fleet can judge it against peers.");
  out->push_back(std::move(f));
}

// --- node.regression -------------------------------------------------------

std::vector<std::string> ChangesBetween(const std::vector<FactsVersion>& history,
                                        int64_t after_ms, int64_t until_ms) {
  std::vector<std::string> lines;
  for (size_t i = 1; i < history.size(); ++i) {
    const FactsVersion& v = history[i];
    if (v.seen_unix_ms <= after_ms || v.seen_unix_ms > until_ms) continue;
    for (const std::string& change : FactChanges(history[i - 1].facts, v.facts)) {
      lines.push_back(absl::StrCat(Utc(v.seen_unix_ms), " ", change));
    }
  }
  return lines;
}

// How the node's peers moved between the node's baseline runs [from, step)
// and its low runs [step, at]: the median over peers of the ratio of their
// medians after and before. Peers are matched by run (the same runs measured
// them), else by time (their runs in the same spans). 1 with no peer.
struct PeerShift {
  double ratio = 1;
  double log_ratio_mad = 0;  // how much the peers disagree about it
  int peers = 0;
};
PeerShift PeersMoved(const FleetEvidence& e, const FleetNode& node,
                     const std::map<std::string, std::vector<RunValue>>& by_node,
                     const std::vector<RunValue>& runs, int from, int step, int at) {
  PeerShift shift;
  const std::string group = PeerGroupOf(node);
  if (group.empty() || step <= from) return shift;
  std::set<absl::string_view> before_ids;
  std::set<absl::string_view> after_ids;
  for (int i = from; i < step; ++i) before_ids.insert(runs[i].run_id);
  for (int i = step; i <= at; ++i) after_ids.insert(runs[i].run_id);
  std::vector<double> ratios;
  for (const FleetNode& other : e.nodes) {
    if (other.name == node.name || PeerGroupOf(other) != group) continue;
    auto it = by_node.find(other.name);
    if (it == by_node.end()) continue;
    std::vector<double> before;
    std::vector<double> after;
    for (const RunValue& r : it->second) {
      if (before_ids.contains(r.run_id)) before.push_back(r.value);
      if (after_ids.contains(r.run_id)) after.push_back(r.value);
    }
    if (before.empty() || after.empty()) {
      before.clear();
      after.clear();
      for (const RunValue& r : it->second) {
        if (r.time_unix_ms >= runs[from].time_unix_ms && r.time_unix_ms < runs[step].time_unix_ms) {
          before.push_back(r.value);
        } else if (r.time_unix_ms >= runs[step].time_unix_ms &&
                   r.time_unix_ms <= runs[at].time_unix_ms) {
          after.push_back(r.value);
        }
      }
    }
    if (before.empty() || after.empty()) continue;
    const double b = Median(before);
    if (!(b > 0)) continue;
    const double a = Median(after);
    if (!(a > 0)) continue;
    ratios.push_back(a / b);
  }
  if (ratios.empty()) return shift;
  shift.ratio = Median(ratios);
  std::vector<double> logs;
  for (double r : ratios) logs.push_back(std::log(r));
  shift.log_ratio_mad = ScaledMad(logs, std::log(shift.ratio));
  shift.peers = static_cast<int>(ratios.size());
  return shift;
}

void RegressionForMetric(const FleetEvidence& e, const FleetNode& node,
                         const v1::MetricDescriptor& metric,
                         const std::map<std::string, std::vector<RunValue>>& by_node,
                         const std::vector<RunValue>& runs, const std::string& run_id,
                         std::vector<v1::Finding>* out) {
  const FleetRuleOptions& o = e.options;
  const int at = JudgedRun(runs, run_id);
  if (at < o.min_history_runs) return;
  const int from = std::max(0, at - o.history_runs);
  std::vector<double> history;
  for (int i = from; i < at; ++i) history.push_back(runs[i].value);
  const RunValue& run = runs[at];
  const Scale scale{AllPositive(history) && run.value > 0};
  std::optional<Baseline> base = RobustBaseline(history, o.baseline);
  std::optional<Baseline> scaled = RobustBaseline(scale(history), o.baseline);
  if (!base || !scaled) return;
  const bool higher = HigherIsBetter(metric);
  auto worse_by = [&](double v, double noise) {
    return Shortfall(v, base->median, higher) > o.regression_relative &&
           (!(v > 0) && scale.log ? true
                                  : std::fabs(scale(v) - scaled->median) > o.regression_mads * noise);
  };
  auto low = [&](double v) { return worse_by(v, scaled->mad); };
  if (!low(run.value)) return;
  // Where the step down began: the first of the low runs that end at this
  // one. One slow run is not a regression (a re-run tells); a level shift
  // is at least `min_low_runs` of them.
  int step = at;
  while (step > from && low(runs[step - 1].value)) --step;
  if (at - step + 1 < o.min_low_runs) return;
  // A change the whole group saw over the same runs (the shared storage, a
  // new benchmark build, the host's load) is not this node's: judge the
  // node's value relative to how its peers moved. Their disagreement about
  // how far they moved is noise as well.
  const PeerShift peers = PeersMoved(e, node, by_node, runs, from, step, at);
  const double adjusted = run.value / peers.ratio;
  const double shift_noise = scale.log ? peers.log_ratio_mad : peers.log_ratio_mad * base->median;
  if (!worse_by(adjusted, std::max(scaled->mad, shift_noise))) return;
  const double shortfall = Shortfall(adjusted, base->median, higher);
  const int64_t last_good_ms = step > 0 ? runs[step - 1].time_unix_ms : INT64_MIN;
  v1::Finding f = NewFinding(kRegression, node.name, run, shortfall, o);
  f.set_summary(absl::StrCat(metric.name(), " ", Num(run.value), " ", metric.unit(), " is ",
                             Percent(Shortfall(run.value, base->median, higher)), " ",
                             Worse(higher), " this node's own median of ", Num(base->median),
                             " over its last ", history.size(), " runs"));
  AddEvidence(&f, metric, run.value, base->median,
              absl::StrCat("own history: median of the last ", history.size(), " runs (",
                           Utc(runs[from].time_unix_ms), " to ", Utc(runs[at - 1].time_unix_ms),
                           ", noise ", scale.Noise(scaled->mad, metric.unit()), ")"));
  f.add_context(absl::StrCat("low since ", Utc(runs[step].time_unix_ms), " (", at - step + 1,
                             " run(s))"));
  if (peers.peers > 0) {
    f.add_context(absl::StrCat("peers over the same runs: ", peers.peers, " moved by ",
                               absl::StrFormat("%+.0f%%", 100 * (peers.ratio - 1)),
                               " (noise +-", Percent(std::exp(peers.log_ratio_mad) - 1), "); this node ", Percent(shortfall),
                               " worse than that"));
  }
  auto facts = e.facts_history.find(node.name);
  std::vector<std::string> changes;
  if (facts != e.facts_history.end()) {
    changes = ChangesBetween(facts->second, last_good_ms, run.time_unix_ms);
  }
  for (const std::string& c : changes) f.add_context(absl::StrCat("facts changed: ", c));
  if (changes.empty()) f.add_context("no change of facts stored between the last good run and this one");
  f.set_effect(absl::StrCat("Work bound by ", metric.name(), " now runs about ",
                            Percent(shortfall), " slower on this node than it used to."));
  f.set_suggestion(changes.empty()
                       ? "Re-run to confirm; look for a new neighbour, a thermal or power "
                         "limit, or a change the facts do not record (BIOS, firmware)."
                       : "The change listed beside it is the first suspect: undo it on one "
                         "node and re-run to confirm.");
  out->push_back(std::move(f));
}

// --- node.time_of_day ------------------------------------------------------

void TimeOfDayForMetric(const FleetEvidence& e, const FleetNode& node,
                        const v1::MetricDescriptor& metric, const std::vector<RunValue>& runs,
                        const std::string& run_id, std::vector<v1::Finding>* out) {
  const FleetRuleOptions& o = e.options;
  const int at = JudgedRun(runs, run_id);
  if (at < 0) return;
  std::vector<TimedValue> values;
  for (int i = 0; i <= at; ++i) values.push_back({runs[i].value, runs[i].time_unix_ms});
  const bool higher = HigherIsBetter(metric);
  // Day and night are the node's local ones when its zone is known.
  const absl::TimeZone zone = node.time_zone.value_or(absl::UTCTimeZone());
  const HourProfile local = ProfileByHour(values, zone, higher, o.time_of_day);
  if (!local.beyond_noise) return;
  const double slower = local.day_is_slower ? local.day_median : local.night_median;
  const double faster = local.day_is_slower ? local.night_median : local.day_median;
  v1::Finding f = NewFinding(kTimeOfDay, node.name, runs[at], local.gap_fraction, o);
  const std::string when = local.day_is_slower ? "by day" : "by night";
  f.set_summary(absl::StrCat(metric.name(), " is ", Percent(local.gap_fraction), " worse ", when,
                             " (", Num(slower), " vs ", Num(faster), " ", metric.unit(),
                             "); slow hours ", local.slow_hours, " ", local.time_zone));
  AddEvidence(&f, metric, slower, faster,
              absl::StrCat("own history by hour: median of the ",
                           local.day_is_slower ? local.night_count : local.day_count, " ",
                           local.day_is_slower ? "night" : "day", " runs (",
                           local.time_zone, ", day ", o.time_of_day.day_start_hour, ":00-",
                           o.time_of_day.day_end_hour, ":00, noise ", Num(local.noise), ")"));
  f.add_context(absl::StrCat("slow hours (", local.time_zone, "): ", local.slow_hours));
  if (node.time_zone) {
    const HourProfile utc = ProfileByHour(values, absl::UTCTimeZone(), higher, o.time_of_day);
    f.add_context(absl::StrCat("slow hours (UTC): ", utc.slow_hours));
  }
  f.add_context(absl::StrCat("runs: ", local.day_count, " by day, ", local.night_count,
                             " by night"));
  f.set_effect(absl::StrCat("A job here runs about ", Percent(local.gap_fraction),
                            " slower ", when, ": likely contention from other tenants or "
                            "shared storage and network at those hours."));
  f.set_suggestion(absl::StrCat("Schedule long jobs outside ", local.slow_hours, " ",
                                local.time_zone,
                                ", or price the slow hours in when comparing offers."));
  out->push_back(std::move(f));
}

// "kernel a -> b" when they differ.
void Changed(std::vector<std::string>* out, const std::string& what, const std::string& a,
             const std::string& b) {
  if (a != b) {
    out->push_back(absl::StrCat(what, " ", a.empty() ? "(none)" : a, " -> ",
                                b.empty() ? "(none)" : b));
  }
}

std::string Watts(const v1::GpuFacts& g) {
  return g.has_power_enforced_limit_w() ? absl::StrCat(Num(g.power_enforced_limit_w()), " W")
                                        : "";
}

}  // namespace

std::string PeerGroupOf(const FleetNode& node) {
  if (auto it = node.labels.find("instance_type"); it != node.labels.end() && !it->second.empty()) {
    return absl::StrCat("instance_type=", it->second);
  }
  if (!node.facts.gpus().empty()) {
    std::map<std::string, int> names;
    for (const v1::GpuFacts& g : node.facts.gpus()) ++names[g.name()];
    std::vector<std::string> parts;
    for (const auto& [name, count] : names) parts.push_back(absl::StrCat(count, "x ", name));
    return absl::StrCat("gpu=", absl::StrJoin(parts, " + "));
  }
  const v1::CpuFacts& cpu = node.facts.cpu();
  if (!cpu.model().empty() && cpu.logical_cores() > 0) {
    return absl::StrCat("cpu=", cpu.model(), " x ", cpu.logical_cores(), " threads");
  }
  return "";
}

const std::vector<SkuExpectation>& SkuTable() {
  // The datasheet figures (common/gpu_skus.h) times the fraction a healthy
  // board reaches in these plugins' measurements: an assumption, not a
  // measurement on this project's machines (docs/findings.md).
  constexpr double kGemmFraction = 0.6;  // bf16 dense reached by cuBLASLt
  constexpr double kCopyFraction = 0.8;  // device copy, read + write counted
  static const std::vector<SkuExpectation>* table = [&] {
    auto* rows = new std::vector<SkuExpectation>();
    for (const gpu::GpuSku& sku : gpu::KnownGpuSkus()) {
      if (sku.bf16_tflops > 0) {
        rows->push_back({sku.label, "gemm.gpu.bf16.tflops", sku.bf16_tflops * kGemmFraction,
                         absl::StrCat("datasheet ", Num(sku.bf16_tflops),
                                      " TFLOP/s bf16 dense x ", Num(kGemmFraction),
                                      " reached by cuBLASLt")});
      }
      if (sku.memory_GBps > 0) {
        rows->push_back({sku.label, "gpu.mem.GBps", sku.memory_GBps * kCopyFraction,
                         absl::StrCat("datasheet ", Num(sku.memory_GBps), " GB/s x ",
                                      Num(kCopyFraction),
                                      " for a device copy (read + write counted)")});
      }
    }
    return rows;
  }();
  return *table;
}

const std::vector<RuleInfo>& FleetRuleTable() {
  static const std::vector<RuleInfo>* table = new std::vector<RuleInfo>{
      {kOutlier, v1::SEVERITY_WARNING,
       "fleet peers: median and MAD of the peer group's values in the same run (else their "
       "3 runs nearest in time), noise at least their run-to-run MAD; SKU table when the "
       "group has fewer than 3 nodes",
       "worse than the peers by more than 10% and 5 MADs (of log values) (SKU table: by more "
       "than 15%) in this run and the node's run before; in this run only: info; critical "
       "from 50%"},
      {kRegression, v1::SEVERITY_WARNING,
       "own history: median and MAD of the node's previous 10 runs (at least 8), relative to "
       "how its peers moved over the same runs",
       "worse than its own median by more than 10% and 5 MADs (of log values) in the last 2 runs or more; "
       "critical from 50%"},
      {kTimeOfDay, v1::SEVERITY_WARNING,
       "own history by hour of day (local time with a timezone label, else UTC): day "
       "08:00-20:00 against night",
       "the halves' medians differ by more than 10% and 3 MADs of the within-half noise, "
       "at least 4 runs on 2 days in each half; critical from 50%"},
  };
  return *table;
}

std::vector<std::string> FactChanges(const v1::NodeFacts& before, const v1::NodeFacts& after) {
  std::vector<std::string> out;
  Changed(&out, "kernel", before.kernel(), after.kernel());
  Changed(&out, "os", before.os(), after.os());
  Changed(&out, "CPU", before.cpu().model(), after.cpu().model());
  if (before.cpu().logical_cores() != after.cpu().logical_cores()) {
    out.push_back(absl::StrCat("CPU threads ", before.cpu().logical_cores(), " -> ",
                               after.cpu().logical_cores()));
  }
  if (before.memory_total_bytes() != after.memory_total_bytes()) {
    out.push_back(absl::StrCat("memory ", Num(before.memory_total_bytes() / 1073741824.0),
                               " GiB -> ", Num(after.memory_total_bytes() / 1073741824.0),
                               " GiB"));
  }
  std::map<uint32_t, const v1::GpuFacts*> gpus_before;
  for (const v1::GpuFacts& g : before.gpus()) gpus_before[g.index()] = &g;
  for (const v1::GpuFacts& g : after.gpus()) {
    auto it = gpus_before.find(g.index());
    const std::string gpu = absl::StrCat("GPU ", g.index());
    if (it == gpus_before.end()) {
      out.push_back(absl::StrCat(gpu, " appeared: ", g.name()));
      continue;
    }
    const v1::GpuFacts& b = *it->second;
    Changed(&out, gpu, b.name(), g.name());
    Changed(&out, gpu + " driver", b.driver_version(), g.driver_version());
    Changed(&out, gpu + " CUDA driver", b.cuda_driver_version(), g.cuda_driver_version());
    Changed(&out, gpu + " power limit", Watts(b), Watts(g));
    if (b.pcie_width_max() != g.pcie_width_max() || b.pcie_gen_max() != g.pcie_gen_max()) {
      out.push_back(absl::StrCat(gpu, " PCIe max gen", b.pcie_gen_max(), " x",
                                 b.pcie_width_max(), " -> gen", g.pcie_gen_max(), " x",
                                 g.pcie_width_max()));
    }
    if (b.mig_enabled() != g.mig_enabled()) {
      out.push_back(absl::StrCat(gpu, " MIG ", b.mig_enabled() ? "on" : "off", " -> ",
                                 g.mig_enabled() ? "on" : "off"));
    }
    gpus_before.erase(it);
  }
  for (const auto& [index, g] : gpus_before) {
    out.push_back(absl::StrCat("GPU ", index, " gone: ", g->name()));
  }
  std::map<std::string, const v1::PcieDeviceFacts*> pcie_before;
  for (const v1::PcieDeviceFacts& p : before.pcie_devices()) pcie_before[p.address()] = &p;
  for (const v1::PcieDeviceFacts& p : after.pcie_devices()) {
    auto it = pcie_before.find(p.address());
    if (it == pcie_before.end()) continue;
    const std::string dev = absl::StrCat("PCIe ", p.address());
    if (it->second->current_link_width() != p.current_link_width()) {
      out.push_back(absl::StrCat(dev, " width x", it->second->current_link_width(), " -> x",
                                 p.current_link_width()));
    }
    Changed(&out, dev + " speed", it->second->current_link_speed(), p.current_link_speed());
  }
  std::map<std::string, const v1::BlockDeviceFacts*> disks_before;
  for (const v1::BlockDeviceFacts& d : before.block_devices()) disks_before[d.name()] = &d;
  for (const v1::BlockDeviceFacts& d : after.block_devices()) {
    auto it = disks_before.find(d.name());
    if (it == disks_before.end()) {
      out.push_back(absl::StrCat("disk ", d.name(), " appeared: ", d.model()));
      continue;
    }
    Changed(&out, absl::StrCat("disk ", d.name(), " model"), it->second->model(), d.model());
    disks_before.erase(it);
  }
  for (const auto& [name, d] : disks_before) {
    out.push_back(absl::StrCat("disk ", name, " gone: ", d->model()));
  }
  Changed(&out, "scratch filesystem", before.scratch_filesystem(), after.scratch_filesystem());
  return out;
}

std::shared_ptr<const FleetIndex> IndexFleet(const FleetEvidence& evidence) {
  auto index = std::make_shared<FleetIndex>();
  for (const FleetNode& n : evidence.nodes) {
    const std::string group = PeerGroupOf(n);
    if (!group.empty()) index->groups[group].push_back(&n);
  }
  for (const auto& [metric, by_node] : evidence.series) {
    auto& nodes = index->metrics[metric];
    for (const auto& [name, runs] : by_node) {
      FleetIndex::NodeRuns& r = nodes[name];
      for (const RunValue& run : runs) r.by_run.try_emplace(run.run_id, run.value);
      const std::vector<double> values = ValuesOf(runs);
      r.all_positive = AllPositive(values);
      if (values.size() < 3) continue;
      r.mad_linear = ScaledMad(values, Median(values));
      if (r.all_positive) {
        const std::vector<double> logs = Scale{true}(values);
        r.mad_log = ScaledMad(logs, Median(logs));
      }
    }
  }
  return index;
}

std::vector<v1::Finding> DiagnoseFleetNode(const FleetEvidence& evidence,
                                           const std::string& node,
                                           const std::string& run_id,
                                           const FleetIndex* index) {
  std::shared_ptr<const FleetIndex> own_index;
  if (index == nullptr) {
    own_index = IndexFleet(evidence);
    index = own_index.get();
  }
  std::vector<v1::Finding> out;
  const FleetNode* subject = nullptr;
  for (const FleetNode& n : evidence.nodes) {
    if (n.name == node) subject = &n;
  }
  if (subject == nullptr) return out;
  for (const auto& [name, by_node] : evidence.series) {
    const v1::MetricDescriptor* metric = Judged(evidence, name);
    if (metric == nullptr) continue;
    auto own = by_node.find(node);
    if (own == by_node.end() || own->second.empty()) continue;
    OutlierForMetric(evidence, *index, *subject, *metric, by_node, run_id, &out);
    RegressionForMetric(evidence, *subject, *metric, by_node, own->second, run_id, &out);
    TimeOfDayForMetric(evidence, *subject, *metric, own->second, run_id, &out);
  }
  SortFindings(&out);
  return out;
}

}  // namespace fleetbench::diagnosis
