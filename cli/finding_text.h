// cli/finding_text.h — findings as the CLI prints them: one line with the
// severity, code and summary, then the evidence, context, effect and
// suggestion indented beneath. Shared by `probe`, `findings`, `results` and
// `nodes`.
#ifndef FLEETBENCH_CLI_FINDING_TEXT_H_
#define FLEETBENCH_CLI_FINDING_TEXT_H_

#include <string>

#include "fleetbench/v1/finding.pb.h"

namespace fleetbench::cli {

// "gpu.power_enforced_limit_w: 320 W (expected 450 W: NVML default power
// limit)" for one evidence; a unit of "flag" reads "yes" or "no".
std::string FormatEvidence(const v1::Evidence& evidence);

// The finding's lines, each ending in '\n':
//   warning   gpu.power_capped  GPU 0 power capped at 320 W of 450 W default
//       gpu.power_enforced_limit_w: 320 W (expected 450 W: NVML default ...)
//       effect: ...
//       suggestion: ...
// With `with_subject` the line names the node (and GPU, device or link)
// after the severity, and the run closes the block: for the fleet-wide
// commands, where findings of many nodes are listed together.
std::string FormatFinding(const v1::Finding& finding, bool with_subject = false);

// Every finding of a ListFindings answer (with subjects), then its notes.
std::string RenderFindings(const v1::ListFindingsResponse& findings);

}  // namespace fleetbench::cli

#endif  // FLEETBENCH_CLI_FINDING_TEXT_H_
