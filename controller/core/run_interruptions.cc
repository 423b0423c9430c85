#include "controller/core/run_interruptions.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fleetbench::controller {

std::vector<RunInterruption> CriticalFindingsOf(
    const std::vector<diagnosis::NodeEvidence>& nodes) {
  std::vector<RunInterruption> out;
  for (const diagnosis::NodeEvidence& evidence : nodes) {
    std::vector<std::string> codes;
    for (const v1::Finding& f : diagnosis::DiagnoseNode(evidence)) {
      if (f.severity() != v1::SEVERITY_CRITICAL) continue;
      // A rule reports per GPU: eight GPUs with ECC errors name it once.
      if (std::find(codes.begin(), codes.end(), f.code()) == codes.end()) {
        codes.push_back(f.code());
      }
    }
    if (codes.empty()) continue;
    out.push_back({evidence.node, v1::INTERRUPTION_KIND_CRITICAL_FINDING,
                   absl::StrCat("run ", evidence.run_id, ": ", absl::StrJoin(codes, ", "))});
  }
  return out;
}

std::vector<RunInterruption> IsolatedBy(const std::string& run_id,
                                        const v1::IsolationVerdict& verdict) {
  std::vector<RunInterruption> out;
  if (!verdict.complete()) return out;
  for (const std::string& node : verdict.bad_nodes()) {
    out.push_back({node, v1::INTERRUPTION_KIND_ISOLATED,
                   absl::StrCat("run ", run_id, ": a bad node by isolation (",
                                verdict.pair_tests(), " group tests)")});
  }
  return out;
}

}  // namespace fleetbench::controller
