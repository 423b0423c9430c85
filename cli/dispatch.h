// cli/dispatch.h — the two programs that serve fleetbench's subcommands,
// and how a command name finds its code.
//
// `fleetbench` (fleetbench_main.cc) is the client: every command that talks
// to a controller runs in it. Each CLI call is a fresh process, and loading
// was most of a short one (docs/results-log.md, "The client binary"),
// so it links none of the benchmark, storage, HTTP or GPU code and takes
// OpenSSL and the C++ runtime statically.
//
// `fleetbenchd` (fleetbenchd_main.cc) holds the commands that run the
// fleet's own code: controller, agent and probe. `fleetbench controller
// ...` replaces itself with `fleetbenchd controller ...` from the folder
// the fleetbench binary is in: same process id, arguments, environment and
// signal mask, so systemd units, Kubernetes manifests and Slurm scripts
// keep naming `fleetbench`. The two are installed side by side.
//
// Exit codes: the command's own (cli/commands.h); 2 for an unknown command;
// kExitNoDaemon when fleetbenchd cannot be started.
#ifndef FLEETBENCH_CLI_DISPATCH_H_
#define FLEETBENCH_CLI_DISPATCH_H_

#include <span>

#include "cli/commands.h"

namespace fleetbench::cli {

// What a shell answers for a command it cannot start.
inline constexpr int kExitNoDaemon = 127;

struct Command {
  const char* name;
  int (*run)(const Argv&);
  const char* help;
};

// The daemon commands' lines in both programs' usage.
inline constexpr const char* kControllerHelp = "serve the fleet: gRPC API + SQLite history";
inline constexpr const char* kAgentHelp = "run on a node: dial the controller, run benchmarks";
inline constexpr const char* kStoreHelp =
    "move a SQLite history into PostgreSQL (copy), the controller stopped";
inline constexpr const char* kProbeHelp =
    "run the suite on this machine, no controller; findings and a PASS/WARN/FAIL verdict";

// Signals as every fleetbench process wants them, set before any thread
// exists: SIGINT and SIGTERM blocked, for a daemon to take with sigwait on
// a thread of its choosing (an exec keeps the mask); SIGPIPE ignored, so a
// client killed mid-write cannot take the process down.
void PrepareSignals();

// Runs the command argv[1] names, with the arguments after it; answers
// --help (alone or after a command) on stdout. `program` names the binary
// in messages.
int Dispatch(const char* program, std::span<const Command> commands, int argc, char** argv);

// Replaces this process with `fleetbenchd command args...` from this
// binary's folder. Returns only when that fails, with kExitNoDaemon after
// one line on stderr saying where fleetbenchd was looked for.
int ExecFleetbenchd(const char* command, const Argv& args);

}  // namespace fleetbench::cli

#endif  // FLEETBENCH_CLI_DISPATCH_H_
