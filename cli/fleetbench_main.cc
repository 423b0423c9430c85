// fleetbench: one command, subcommands like `consul agent` / `nomad server`.
// The client commands run here; controller, agent and probe run in
// fleetbenchd, which this binary execs (cli/dispatch.h says why).
#include "cli/commands.h"
#include "cli/dispatch.h"

namespace {

using fleetbench::cli::Argv;
using fleetbench::cli::Command;
using fleetbench::cli::ExecFleetbenchd;

constexpr Command kCommands[] = {
    {"controller", [](const Argv& a) { return ExecFleetbenchd("controller", a); },
     fleetbench::cli::kControllerHelp},
    {"agent", [](const Argv& a) { return ExecFleetbenchd("agent", a); },
     fleetbench::cli::kAgentHelp},
    {"nodes", fleetbench::cli::NodesCommand, "list nodes, their status, labels and facts"},
    {"run", fleetbench::cli::RunCommand, "start a benchmark run (--wait to follow it)"},
    {"results", fleetbench::cli::ResultsCommand, "show a run's state and samples"},
    {"runs", fleetbench::cli::RunsCommand, "list recent runs"},
    {"cancel", fleetbench::cli::CancelCommand, "cancel a run"},
    {"rank", fleetbench::cli::RankCommand, "rank nodes or groups by cost per unit of throughput"},
    {"history", fleetbench::cli::HistoryCommand, "a node's results for one metric over time"},
    {"prices", fleetbench::cli::PricesCommand, "import or list the price catalog (CSV)"},
    {"cost", fleetbench::cli::CostCommand, "how long and how much W units of work take per offer"},
    {"probe", [](const Argv& a) { return ExecFleetbenchd("probe", a); },
     fleetbench::cli::kProbeHelp},
    {"findings", fleetbench::cli::FindingsCommand, "what the controller concludes about the nodes"},
    {"variance", fleetbench::cli::VarianceCommand, "a metric's 24-hour profile and day/night gap"},
    {"reliability", fleetbench::cli::ReliabilityCommand,
     "interruptions per node-hour by node or group, and the lemons"},
    {"schedule", fleetbench::cli::ScheduleCommand,
     "runs the controller starts on a cron: add, list, rm, run, history"},
    {"token", fleetbench::cli::TokenCommand,
     "API tokens with a role: create, list, revoke; the shared token on/off"},
    {"audit", fleetbench::cli::AuditCommand, "who changed what on the controller, newest first"},
    {"backup", fleetbench::cli::BackupCommand,
     "copy the controller's history to a local file while it runs"},
    {"store", [](const Argv& a) { return ExecFleetbenchd("store", a); },
     fleetbench::cli::kStoreHelp},
};

}  // namespace

int main(int argc, char** argv) {
  fleetbench::cli::PrepareSignals();
  return fleetbench::cli::Dispatch("fleetbench", kCommands, argc, argv);
}
