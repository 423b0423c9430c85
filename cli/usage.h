// cli/usage.h — how a command ends when it cannot do what was asked, one
// shared path for every command:
// - a usage error found here (a bad flag, a bad value): one line, then a
//   hint to `fleetbench CMD --help`; exit 2. --help itself prints the flags
//   to stdout (exit 0).
// - an error from the controller: INVALID_ARGUMENT and NOT_FOUND are the
//   user's request refused (an unknown benchmark, node, run or grouping), so
//   a usage error too, exit 2; anything else is a failure, exit 1.
// Messages are one line; a user's input quoted in them is clipped
// (common/reason.h ClipInput), and a controller's message is cut to
// kMaxErrorLineLength, so a huge input never comes back as a huge error.
#ifndef FLEETBENCH_CLI_USAGE_H_
#define FLEETBENCH_CLI_USAGE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cli/args.h"

namespace fleetbench::cli {

inline constexpr size_t kMaxErrorLineLength = 1024;

// `error` is ParseArgs' message, "help" for --help (which prints `flags`).
int UsageError(const std::string& command, const std::string& error,
               const std::vector<FlagSpec>& flags);
// The exit code for a failed call to the controller, after printing it.
int RemoteError(const std::string& command, const absl::Status& status);

}  // namespace fleetbench::cli

#endif  // FLEETBENCH_CLI_USAGE_H_
