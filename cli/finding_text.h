// cli/finding_text.h — findings as the CLI prints them: one line with the
// severity, code and summary, then the evidence, context, effect and
// suggestion indented beneath. Used by `probe`; any command that shows
// findings as text can share it.
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
std::string FormatFinding(const v1::Finding& finding);

}  // namespace fleetbench::cli

#endif  // FLEETBENCH_CLI_FINDING_TEXT_H_
