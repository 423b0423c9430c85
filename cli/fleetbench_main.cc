// fleetbench: one binary, subcommands like `consul agent` / `nomad server`.
#include <signal.h>

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/reason.h"

namespace {

struct Command {
  const char* name;
  int (*run)(const fleetbench::cli::Argv&);
  const char* help;
};

constexpr Command kCommands[] = {
    {"controller", fleetbench::cli::ControllerCommand, "serve the fleet: gRPC API + SQLite history"},
    {"agent", fleetbench::cli::AgentCommand, "run on a node: dial the controller, run benchmarks"},
    {"nodes", fleetbench::cli::NodesCommand, "list nodes, their status, labels and facts"},
    {"run", fleetbench::cli::RunCommand, "start a benchmark run (--wait to follow it)"},
    {"results", fleetbench::cli::ResultsCommand, "show a run's state and samples"},
    {"runs", fleetbench::cli::RunsCommand, "list recent runs"},
    {"cancel", fleetbench::cli::CancelCommand, "cancel a run"},
    {"rank", fleetbench::cli::RankCommand, "rank nodes or groups by cost per unit of throughput"},
    {"history", fleetbench::cli::HistoryCommand, "a node's results for one metric over time"},
    {"prices", fleetbench::cli::PricesCommand, "import or list the price catalog (CSV)"},
    {"cost", fleetbench::cli::CostCommand, "how long and how much W units of work take per offer"},
    {"probe", fleetbench::cli::ProbeCommand,
     "run the suite on this machine, no controller; findings and a PASS/WARN/FAIL verdict"},
    {"findings", fleetbench::cli::FindingsCommand, "what the controller concludes about the nodes"},
    {"variance", fleetbench::cli::VarianceCommand, "a metric's 24-hour profile and day/night gap"},
    {"schedule", fleetbench::cli::ScheduleCommand,
     "runs the controller starts on a cron: add, list, rm, run, history"},
    {"token", fleetbench::cli::TokenCommand,
     "API tokens with a role: create, list, revoke; the shared token on/off"},
    {"audit", fleetbench::cli::AuditCommand, "who changed what on the controller, newest first"},
    {"backup", fleetbench::cli::BackupCommand,
     "copy the controller's history to a local file while it runs"},
};

int PrintUsage(std::ostream& out) {
  out << "usage: fleetbench COMMAND [flags]\n\ncommands:\n";
  for (const Command& c : kCommands) out << "  " << c.name << std::string(12 - std::strlen(c.name), ' ') << c.help << "\n";
  out << "\n`fleetbench COMMAND --help` lists a command's flags.\n";
  return fleetbench::cli::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  // Block termination signals before any thread exists, so the daemons can
  // take them with sigwait on a thread of their choosing.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // A client killed mid-write must not take the process down with SIGPIPE.
  signal(SIGPIPE, SIG_IGN);

  if (argc < 2) return PrintUsage(std::cerr);
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    PrintUsage(std::cout);
    return 0;
  }
  const std::vector<std::string> args(argv + 2, argv + argc);
  for (const Command& c : kCommands) {
    if (name != c.name) continue;
    for (const std::string& a : args) {
      if (a == "--help" || a == "-h") {
        // Every command answers --help with its flags on stdout; asked
        // for, it is not an error.
        c.run({"--help"});
        return 0;
      }
    }
    return c.run(args);
  }
  std::cerr << "fleetbench: unknown command '" << fleetbench::ClipInput(name)
            << "'; see `fleetbench --help`\n";
  return fleetbench::cli::kExitUsage;
}
