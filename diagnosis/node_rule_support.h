// diagnosis/node_rule_support.h — what the node rule files share: the rule
// row with its function, building a finding with its evidence, and reading
// samples and their params. Internal to diagnosis/ (node_rules.cc,
// gpu_node_rules.cc, host_node_rules.cc, loader_node_rules.cc); callers use
// node_rules.h.
#ifndef FLEETBENCH_DIAGNOSIS_NODE_RULE_SUPPORT_H_
#define FLEETBENCH_DIAGNOSIS_NODE_RULE_SUPPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "diagnosis/node_rules.h"

namespace fleetbench::diagnosis::node_rules {

// One rule: appends its findings (none, or one per GPU, device, ...).
using RuleFn = void (*)(const NodeEvidence& evidence, const RuleInfo& rule,
                        std::vector<v1::Finding>* out);
struct NodeRule {
  RuleInfo info;
  RuleFn run;
};

// The rows each file contributes, in the order they run.
const std::vector<NodeRule>& GpuNodeRules();
const std::vector<NodeRule>& HostNodeRules();
const std::vector<NodeRule>& LoaderNodeRules();

// A finding of `rule` for the evidence's node, run and time, at the rule's
// default severity; the caller fills summary, evidence, effect, suggestion.
v1::Finding NewFinding(const NodeEvidence& evidence, const RuleInfo& rule);
void AddEvidence(v1::Finding* finding, absl::string_view name, double measured,
                 std::optional<double> expected, absl::string_view unit,
                 absl::string_view expectation_source);

// Samples of `metric`, in the order the run produced them.
std::vector<const v1::Sample*> SamplesOf(const NodeEvidence& evidence,
                                         absl::string_view metric);
// A param's text; "" when absent.
std::string Param(const v1::Sample& sample, absl::string_view key);
// A param as a number; nullopt when absent or not a finite number.
std::optional<double> NumberParam(const v1::Sample& sample,
                                  absl::string_view key);
// The "gpu" param of a GPU plugin's sample (the CUDA index); nullopt when
// absent or malformed.
std::optional<int> GpuOfSample(const v1::Sample& sample);

// What a job in the agent's container can use: the machine's logical
// cores, fewer when a cpuset or a cgroup bandwidth limit (docker --cpus, a
// Kubernetes CPU limit) says so, and then what limits them in `limited_by`
// ("" otherwise). 0 when the facts say nothing.
double UsableCores(const v1::CpuFacts& cpu, std::string* limited_by);

// "320 W", "1.5 GBps": a number as common/units.h formats it, and its unit.
std::string WithUnit(double value, absl::string_view unit);

}  // namespace fleetbench::diagnosis::node_rules

#endif  // FLEETBENCH_DIAGNOSIS_NODE_RULE_SUPPORT_H_
