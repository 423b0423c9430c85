// fleetbenchd: the commands that run the fleet's own code — the
// controller, the agent and the local probe — with the storage, benchmark
// and GPU libraries they need. Users run them as `fleetbench controller`
// etc.; the client execs this binary from its own folder (cli/dispatch.h).
#include "cli/commands.h"
#include "cli/dispatch.h"

namespace {

using fleetbench::cli::Command;

constexpr Command kCommands[] = {
    {"controller", fleetbench::cli::ControllerCommand, fleetbench::cli::kControllerHelp},
    {"agent", fleetbench::cli::AgentCommand, fleetbench::cli::kAgentHelp},
    {"probe", fleetbench::cli::ProbeCommand, fleetbench::cli::kProbeHelp},
    {"store", fleetbench::cli::StoreCommand, fleetbench::cli::kStoreHelp},
};

}  // namespace

int main(int argc, char** argv) {
  fleetbench::cli::PrepareSignals();
  return fleetbench::cli::Dispatch("fleetbenchd", kCommands, argc, argv);
}
