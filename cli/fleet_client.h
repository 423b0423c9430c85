// cli/fleet_client.h — what the client commands outside cmd_client.cc need
// of its connection: parse the flags (with --controller and --token-file),
// connect, and call the Fleet methods they use, with the token and a
// deadline. Defined in cmd_client.cc next to the client it wraps.
//
// Also the findings output that `findings`, `results` and `nodes` share
// (cmd_findings.cc).
#ifndef FLEETBENCH_CLI_FLEET_CLIENT_H_
#define FLEETBENCH_CLI_FLEET_CLIENT_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "fleetbench/v1/finding.pb.h"
#include "fleetbench/v1/variance.pb.h"

namespace fleetbench::cli {

class FleetClient {
 public:
  virtual ~FleetClient() = default;
  virtual absl::Status ListFindings(const v1::ListFindingsRequest& request,
                                    v1::ListFindingsResponse* response) = 0;
  virtual absl::Status Variance(const v1::VarianceRequest& request,
                                v1::VarianceResponse* response) = 0;
};

struct PreparedCommand {
  Args args;
  std::unique_ptr<FleetClient> client;
};

// Parses `argv` against `flags` and the connection flags and connects; on a
// usage error or a failed connection prints one line and sets *exit_code.
// Errors after that take cli/usage.h's paths (UsageError, RemoteError).
std::optional<PreparedCommand> PrepareCommand(const std::string& command, const Argv& argv,
                                              std::vector<FlagSpec> flags, size_t positional,
                                              int* exit_code);
// Findings for people: one line each (severity, node, code, summary), then
// indented evidence, context, effect and suggestion.
std::string RenderFindings(const v1::ListFindingsResponse& findings);
// A node's worst finding for the `nodes` table ("warning fleet.outlier"),
// "-" when it has none; `findings` is sorted worst first.
std::string WorstFindingOf(const v1::ListFindingsResponse& findings, const std::string& node);

}  // namespace fleetbench::cli

#endif  // FLEETBENCH_CLI_FLEET_CLIENT_H_
