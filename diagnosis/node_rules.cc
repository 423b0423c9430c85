#include "diagnosis/node_rules.h"

#include "diagnosis/node_rule_support.h"

namespace fleetbench::diagnosis {
namespace {

const std::vector<node_rules::NodeRule>& AllNodeRules() {
  static const std::vector<node_rules::NodeRule>* rules = [] {
    auto* all =
        new std::vector<node_rules::NodeRule>(node_rules::GpuNodeRules());
    for (const node_rules::NodeRule& r : node_rules::HostNodeRules()) {
      all->push_back(r);
    }
    for (const node_rules::NodeRule& r : node_rules::LoaderNodeRules()) {
      all->push_back(r);
    }
    return all;
  }();
  return *rules;
}

}  // namespace

const std::vector<RuleInfo>& NodeRuleTable() {
  static const std::vector<RuleInfo>* table = [] {
    auto* infos = new std::vector<RuleInfo>();
    for (const node_rules::NodeRule& r : AllNodeRules())
      infos->push_back(r.info);
    return infos;
  }();
  return *table;
}

std::vector<v1::Finding> DiagnoseNode(const NodeEvidence& evidence) {
  std::vector<v1::Finding> findings;
  for (const node_rules::NodeRule& r : AllNodeRules()) {
    r.run(evidence, r.info, &findings);
  }
  SortFindings(&findings);
  return findings;
}

}  // namespace fleetbench::diagnosis
