// cli/args.h — command-line parsing for the fleetbench subcommands.
// Flags: --name VALUE, --name=VALUE, or --name alone for booleans. Every
// subcommand declares its flags; anything else is a usage error (exit 2).
#ifndef FLEETBENCH_TOOLS_ARGS_H_
#define FLEETBENCH_TOOLS_ARGS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fleetbench::cli {

struct FlagSpec {
  std::string name;
  bool takes_value = true;
  bool repeated = false;
  std::string help;
};

struct Args {
  std::map<std::string, std::vector<std::string>> values;
  std::vector<std::string> positional;

  bool Has(const std::string& name) const { return values.contains(name); }
  // Last value given, or `fallback`.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  const std::vector<std::string>& All(const std::string& name) const;
};

// INVALID_ARGUMENT naming the bad flag.
absl::StatusOr<Args> ParseArgs(const std::vector<std::string>& argv,
                               const std::vector<FlagSpec>& specs);
std::string FlagsHelp(const std::vector<FlagSpec>& specs);

// "a,b,,c" -> {"a","b","c"}
std::vector<std::string> SplitList(const std::string& list);
// "key=value" -> pair; INVALID_ARGUMENT if there is no '=' or the key is empty.
absl::StatusOr<std::pair<std::string, std::string>> ParseKeyValue(const std::string& kv);

// OK for HOST:PORT (a name, an IPv4 address or a bracketed IPv6 address,
// a port 1..65535, or 0 with `allow_any_port`) and for gRPC's unix:PATH;
// INVALID_ARGUMENT saying what is wrong, quoting `flag`, otherwise. Checked
// at start, so a typo is refused instead of redialled forever.
absl::Status CheckHostPort(const std::string& flag, const std::string& address,
                           bool allow_any_port = false);

// The most controller addresses one --controller may list.
inline constexpr size_t kMaxControllerAddresses = 8;

// --controller as a list: one address (CheckHostPort's forms), or a leader
// and its standbys as HOST:PORT,HOST:PORT,... (no unix: socket in a list,
// none twice, at most kMaxControllerAddresses); INVALID_ARGUMENT quoting
// `flag` otherwise.
absl::StatusOr<std::vector<std::string>> ParseControllerList(const std::string& flag,
                                                             const std::string& value);

// A ranking window: "7d" (days) or an absl duration ("24h", "90m"), > 0 and
// at most ten years; INVALID_ARGUMENT (quoting it clipped) otherwise.
absl::StatusOr<absl::Duration> ParseWindow(const std::string& window);

// The --window flag of the commands that read a span of history, with the
// default the controller applies when it is absent ("7 days").
FlagSpec WindowFlag(const std::string& default_span);
// --window as milliseconds for a request's window_ms: 0 when the flag is
// absent (the controller's default), else ParseWindow's answer.
absl::StatusOr<int64_t> WindowMillis(const Args& args);

}  // namespace fleetbench::cli

#endif  // FLEETBENCH_TOOLS_ARGS_H_
