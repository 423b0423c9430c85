// diagnosis/finding.h — the diagnosis layer's contract, and the few things
// every user of a v1::Finding needs: the worst of a list, the verdict, the
// order findings are shown in.
//
// The diagnosis layer turns what fleetbench knows about a node (its facts,
// the samples of a run, its own history, its peers' results, prices) into
// v1::Finding messages (proto/fleetbench/v1/finding.proto). It is pure: no
// I/O, no clock, no store, no RPC. Callers (the probe in cli/, the controller)
// gather the inputs and pass them in, so every rule is unit-tested on
// fixtures and the probe and the controller judge alike.
//
// Rules are data plus small pure functions: each rule is one row of the rule
// table (code, default severity, where its threshold comes from, the
// threshold in words), and docs/findings.md lists the same rows; a test keeps
// the two in step. Codes are stable and dotted (gpu.power_capped,
// fleet.outlier): scripts key on them, so a code is never renamed.
//
// A rule that lacks an input (an unreadable fact, too few peers) says
// nothing rather than guess, and every finding names where its expectation
// came from (Evidence.expectation_source).
//
// Layering: diagnosis/ includes only itself, common/ and the generated
// protos (tools/check_layers.py); the controller and cli/ include it.
#ifndef FLEETBENCH_DIAGNOSIS_FINDING_H_
#define FLEETBENCH_DIAGNOSIS_FINDING_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fleetbench/v1/finding.pb.h"

namespace fleetbench::diagnosis {

// "info", "warning", "critical"; "unspecified".
std::string SeverityName(v1::Severity severity);
// A node's worst finding as the `nodes` table and the dashboard show it
// ("warning fleet.outlier (+2)"), "-" when it has none; `findings` sorted
// worst first, as ListFindings answers.
std::string WorstFindingOf(const v1::ListFindingsResponse& findings, const std::string& node);
// The inverse; INVALID_ARGUMENT naming the allowed words otherwise.
absl::StatusOr<v1::Severity> ParseSeverity(absl::string_view name);

// One row of a rule table. Each rules file (node_rules.cc, fleet_rules.cc,
// ...) exports its table; docs/findings.md has one row per code, and
// diagnosis_test checks both ways that the tables and the doc agree.
struct RuleInfo {
  absl::string_view code;       // stable, dotted
  v1::Severity severity;        // the default; a rule may raise or lower it
                                // in a case its threshold text names
  absl::string_view source;     // where the threshold comes from
  absl::string_view threshold;  // the threshold in words, as the doc says
};

// SEVERITY_UNSPECIFIED for an empty list.
v1::Severity WorstSeverity(const std::vector<v1::Finding>& findings);

// What `probe` prints last and scripts act on: FAIL for any critical
// finding, WARN for any warning, PASS otherwise (info findings included).
enum class Verdict { kPass, kWarn, kFail };
Verdict VerdictOf(const std::vector<v1::Finding>& findings);
std::string VerdictName(Verdict verdict);  // "PASS", "WARN", "FAIL"

// The order findings are shown in: worst first, then by node, code, GPU
// index, device and link, so the same findings always print the same way.
void SortFindings(std::vector<v1::Finding>* findings);

}  // namespace fleetbench::diagnosis

#endif  // FLEETBENCH_DIAGNOSIS_FINDING_H_
