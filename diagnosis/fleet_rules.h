// diagnosis/fleet_rules.h — the rules whose expectation is learned from the
// fleet rather than fixed: a node against its peers (fleet.outlier), against
// its own history (node.regression), and against itself at other hours
// (node.time_of_day). What a node's facts alone say is node_rules.h.
//
// The controller gathers the inputs (FleetEvidence) from the store and asks
// for one node's findings; docs/findings.md ("Fleet rules") has each rule's
// threshold and where its defaults come from. Pure; see diagnosis/finding.h.
//
// Peer groups (PeerGroupOf): nodes with the same `instance_type` label; else
// the same GPUs (count and NVML name of every GPU); else, for CPU nodes, the
// same CPU model and logical core count. A group of fewer than
// `min_group` nodes (the node included) is too small to learn from: the SKU
// table (SkuTable) is used instead where it has the node's GPU and the
// metric, and nothing is said otherwise.
//
// One run is one measurement: a fleet.outlier seen in the judged run only is
// info ("re-run to confirm"), a warning or critical when the node's run
// before was an outlier too; a node.regression needs two low runs in a row.
//
// Direction: every rule reads the metric's declared direction; for a
// lower-is-better metric (latency) "below" means "above", and the shortfall
// is (value - expected) / expected.
#ifndef FLEETBENCH_DIAGNOSIS_FLEET_RULES_H_
#define FLEETBENCH_DIAGNOSIS_FLEET_RULES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "diagnosis/baseline.h"
#include "diagnosis/finding.h"
#include "diagnosis/time_of_day.h"
#include "fleetbench/v1/facts.pb.h"
#include "fleetbench/v1/metric.pb.h"

namespace fleetbench::diagnosis {

// One run's value of one metric on one node: the median of the run's
// samples of that metric (a run may measure it at several sizes).
// The run id is a view: a fleet's evidence holds millions of these (1,000
// nodes x 2,000 runs) over a few thousand distinct runs, so the strings live
// once, with whoever filled the evidence (the controller keeps them in
// FleetEvidence::run_id_tables) and must outlive it.
struct RunValue {
  absl::string_view run_id;
  double value = 0;
  int64_t time_unix_ms = 0;
};

struct FleetNode {
  std::string name;
  v1::NodeFacts facts;  // the latest
  std::map<std::string, std::string> labels;
  // The zone of the `timezone` label, loaded by the caller; nullopt when the
  // label is absent or names no zone.
  std::optional<absl::TimeZone> time_zone;
};

// A stored version of a node's facts and when it was first seen.
struct FactsVersion {
  int64_t seen_unix_ms = 0;
  v1::NodeFacts facts;
};

struct FleetRuleOptions {
  // The MAD multiples are 5, not the textbook 3: every declared metric of
  // every node is judged at each call, so at 3 the chance misses of noisy
  // single runs add up (docs/findings.md has the measurement).
  //
  // fleet.outlier: worse than the peers' baseline by more than `relative`
  // of it AND by more than `mads` times the noise (the larger of the MAD
  // between peers and a peer's typical run-to-run MAD).
  double outlier_relative = 0.10;
  double outlier_mads = 5.0;
  int min_group = 3;
  // A peer without a value in the judged run votes with the median of its
  // runs nearest in time to it.
  int peer_nearest_runs = 3;
  // SKU-table fallback: worse than the table's expectation by this much.
  double sku_relative = 0.15;
  // node.regression: the node's run worse than the median of its previous
  // `history_runs` runs (at least `min_history_runs` of them) by more than
  // `regression_relative` and `regression_mads` MADs of that history; in at
  // least `min_low_runs` consecutive runs ending with the one judged (one
  // slow run is for a re-run to tell, not a regression); and still so after
  // dividing out how the node's peers (same group) moved over the same runs
  // (a change the whole group saw is not the node's).
  double regression_relative = 0.10;
  double regression_mads = 5.0;
  int history_runs = 10;
  int min_history_runs = 8;
  int min_low_runs = 2;
  // A shortfall of this much or more is critical rather than a warning.
  double critical_relative = 0.50;
  TimeOfDayOptions time_of_day;
  BaselineOptions baseline;
};

struct FleetEvidence {
  std::vector<FleetNode> nodes;
  // The declared metrics by name; a metric without a descriptor (or without
  // a direction) is not judged: which way is worse is unknown.
  std::map<std::string, v1::MetricDescriptor> metrics;
  // metric -> node -> the node's runs in the window, oldest first.
  std::map<std::string, std::map<std::string, std::vector<RunValue>>> series;
  // node -> its facts versions, oldest first.
  std::map<std::string, std::vector<FactsVersion>> facts_history;
  // Storage for the run ids that `series` views, for callers that have no
  // longer-lived copy (each metric's read moves its run table here).
  std::vector<std::vector<std::string>> run_id_tables;
  FleetRuleOptions options;
};

// A peer group: the key nodes are grouped by ("instance_type=g5.xlarge",
// "gpu=8x NVIDIA H100 80GB HBM3", "cpu=AMD EPYC 7B13 x 32 threads"); empty
// when the node has none of the three.
std::string PeerGroupOf(const FleetNode& node);

// One row of the SKU fallback table: what a GPU model is expected to reach
// on one metric, from its datasheet and a stated achievable fraction.
struct SkuExpectation {
  std::string sku;     // the SKU table's label (common/gpu_skus.h): "H100 SXM"
  std::string metric;
  double expected;     // per GPU, in the metric's unit
  std::string source;  // datasheet figure and the fraction used
};
// Built from the datasheet table in common/gpu_skus.h, so the figures are
// written once.
const std::vector<SkuExpectation>& SkuTable();

// The fleet rules' table, in the order they run.
const std::vector<RuleInfo>& FleetRuleTable();

// What the peer comparison reads of every node, worked out once per
// evidence instead of once per judged node (each node's runs by id and its
// run-to-run noise, the peer groups' members): judging a fleet of n nodes
// is then O(n x peers) rather than O(n x peers x runs). Read-only once
// built; it must come from the same evidence it is used with.
class FleetIndex;
std::shared_ptr<const FleetIndex> IndexFleet(const FleetEvidence& evidence);

// The fleet rules' findings for `node` (which must be in evidence.nodes;
// nothing otherwise). With `run_id`, each metric's value is that run's (a
// metric the run lacks is not judged); without, each metric's latest run.
// In display order (SortFindings). Judging many nodes of one evidence: pass
// its IndexFleet; without one, it is built for the call.
std::vector<v1::Finding> DiagnoseFleetNode(const FleetEvidence& evidence,
                                           const std::string& node,
                                           const std::string& run_id = "",
                                           const FleetIndex* index = nullptr);

// What changed between two facts versions, one line each ("kernel 6.8 ->
// 6.9", "GPU 0 driver 550.54 -> 560.28", "GPU 0 power limit 450 W ->
// 320 W", "PCIe 0000:3b:00.0 width x16 -> x8", "disk nvme0n1 model A -> B").
// Readings (clocks, temperature, the link as trained at idle) are not facts
// and never count.
std::vector<std::string> FactChanges(const v1::NodeFacts& before, const v1::NodeFacts& after);

}  // namespace fleetbench::diagnosis

#endif  // FLEETBENCH_DIAGNOSIS_FLEET_RULES_H_
