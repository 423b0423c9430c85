#include "cli/usage.h"

#include <iostream>

#include "absl/strings/str_replace.h"
#include "cli/commands.h"
#include "common/reason.h"

namespace fleetbench::cli {
namespace {

std::string OneLine(absl::string_view message) {
  return TruncateReason(absl::StrReplaceAll(message, {{"\n", " "}}), kMaxErrorLineLength);
}

}  // namespace

int UsageError(const std::string& command, const std::string& error,
               const std::vector<FlagSpec>& flags) {
  if (error == "help") {
    std::cout << "usage: fleetbench " << command << " [flags]\nflags:\n" << FlagsHelp(flags);
    return kExitOk;
  }
  std::cerr << "fleetbench " << command << ": " << OneLine(error) << "\n"
            << "see `fleetbench " << command << " --help` for its flags\n";
  return kExitUsage;
}

int RemoteError(const std::string& command, const absl::Status& status) {
  std::cerr << "fleetbench " << command << ": " << OneLine(status.message()) << "\n";
  if (absl::IsInvalidArgument(status) || absl::IsNotFound(status)) return kExitUsage;
  return kExitFailure;
}

}  // namespace fleetbench::cli
