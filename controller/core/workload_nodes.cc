// Which nodes a run of declared workloads goes to.
#include "controller/core/workload_nodes.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/reason.h"
#include "common/workload_params.h"

namespace fleetbench::controller {
namespace {

// The workloads the node's hello declared.
std::vector<const v1::WorkloadDeclaration*> DeclaredBy(const NodeSessions::Session& session) {
  std::vector<const v1::WorkloadDeclaration*> declared;
  for (const v1::Capability& c : session.capabilities) {
    if (c.benchmark() != kWorkloadBenchmark) continue;
    for (const v1::WorkloadDeclaration& w : c.workloads()) declared.push_back(&w);
  }
  return declared;
}

// The node's declaration of workload `name`, or nullptr.
const v1::WorkloadDeclaration* Declared(const NodeSessions::Session& session,
                                        const std::string& name) {
  for (const v1::WorkloadDeclaration* w : DeclaredBy(session)) {
    if (w->name() == name) return w;
  }
  return nullptr;
}

// "a, b" of every workload the nodes declare, for an error that helps.
std::string AllDeclared(const NodeSessions& sessions, const std::vector<std::string>& nodes) {
  std::set<std::string> names;
  for (const std::string& node : nodes) {
    const NodeSessions::Session* s = sessions.Find(node);
    if (s == nullptr) continue;
    for (const v1::WorkloadDeclaration* w : DeclaredBy(*s)) names.insert(w->name());
  }
  return names.empty() ? "none (agent --workload-dir)" : absl::StrJoin(names, ", ");
}

}  // namespace

absl::Status SelectWorkloadNodes(const v1::StartRunRequest& request, const NodeSessions& sessions,
                                 bool nodes_named, std::vector<std::string>* nodes) {
  for (const v1::BenchmarkSpec& spec : request.benchmarks()) {
    if (spec.name() != kWorkloadBenchmark) continue;
    auto name = spec.params().find(kWorkloadNameParam);
    if (absl::Status s =
            CheckNamedWorkload(name == spec.params().end() ? nullptr : &name->second);
        !s.ok()) {
      return s;
    }
    const std::string workload = name->second;
    std::vector<std::string> declaring;
    for (const std::string& node : *nodes) {
      const NodeSessions::Session* session = sessions.Find(node);
      if (session != nullptr && Declared(*session, workload) != nullptr) {
        declaring.push_back(node);
      } else if (nodes_named) {
        return absl::InvalidArgumentError(absl::StrCat(
            "node ", node, " does not declare workload '", workload, "' (it declares ",
            AllDeclared(sessions, {node}), ")"));
      }
    }
    if (declaring.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no selected node declares workload '", ClipInput(workload), "'; they declare ",
          AllDeclared(sessions, *nodes)));
    }
    const std::map<std::string, std::string> given(spec.params().begin(), spec.params().end());
    for (const std::string& node : declaring) {
      absl::Status valid =
          ResolveWorkloadParams(*Declared(*sessions.Find(node), workload), given).status();
      if (!valid.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(valid.message(), " (on node ", node, ")"));
      }
    }
    *nodes = std::move(declaring);
  }
  return absl::OkStatus();
}

}  // namespace fleetbench::controller
