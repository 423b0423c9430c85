// fleetbenchd: the commands that run the fleet's own code — the
// controller, the agent and the local probe — with the storage, benchmark
// and GPU libraries they need. Users run them as `fleetbench controller`
// etc.; the client execs this binary from its own folder (cli/dispatch.h).
#include "cli/commands.h"
#include "cli/dispatch.h"

namespace {

using fleetbench::cli::Command;

constexpr Command kCommands[] = {
    {"controller", fleetbench::cli::ControllerCommand, "serve the fleet: gRPC API + SQLite history"},
    {"agent", fleetbench::cli::AgentCommand, "run on a node: dial the controller, run benchmarks"},
    {"probe", fleetbench::cli::ProbeCommand,
     "run the suite on this machine, no controller; findings and a PASS/WARN/FAIL verdict"},
};

}  // namespace

int main(int argc, char** argv) {
  fleetbench::cli::PrepareSignals();
  return fleetbench::cli::Dispatch("fleetbenchd", kCommands, argc, argv);
}
