// diagnosis/node_rules.h — the rules that judge one node from what it says
// about itself: its facts (GPU power, PCIe links, MIG, ECC, disks, NICs,
// versions, virtualisation) and the samples of one run on it, against fixed
// expectations (the SKU tables, NVML's own defaults, documented ratios).
// What a node's peers or its own history expect is fleet_rules.h.
//
// Used by `probe` (no controller, no fleet) and by the controller for every
// node of a run. Pure; see diagnosis/finding.h for the layer's contract.
#ifndef FLEETBENCH_DIAGNOSIS_NODE_RULES_H_
#define FLEETBENCH_DIAGNOSIS_NODE_RULES_H_

#include <map>
#include <string>
#include <vector>

#include "diagnosis/finding.h"
#include "fleetbench/v1/facts.pb.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench::diagnosis {

// Everything a node rule may read. `samples` may be empty (facts only).
struct NodeEvidence {
  std::string node;
  v1::NodeFacts facts;
  std::map<std::string, std::string> labels;
  std::string run_id;  // copied into each finding; empty for facts only
  std::vector<v1::Sample> samples;
  int64_t time_unix_ms = 0;  // copied into each finding
};

// The node rules' table, in the order they run.
const std::vector<RuleInfo>& NodeRuleTable();

// Every node rule over `evidence`, in display order (SortFindings).
std::vector<v1::Finding> DiagnoseNode(const NodeEvidence& evidence);

}  // namespace fleetbench::diagnosis

#endif  // FLEETBENCH_DIAGNOSIS_NODE_RULES_H_
