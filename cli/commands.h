// cli/commands.h — the fleetbench subcommands. Each takes the arguments
// after its name and returns the process exit code: 0 ok, 1 failure,
// 2 usage error. Errors are one line on stderr.
#ifndef FLEETBENCH_TOOLS_COMMANDS_H_
#define FLEETBENCH_TOOLS_COMMANDS_H_

#include <string>
#include <vector>

namespace fleetbench::cli {

using Argv = std::vector<std::string>;

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
// `probe`: a critical finding (docs/findings.md, "Exit codes").
inline constexpr int kExitCritical = 3;

int ControllerCommand(const Argv& args);
int AgentCommand(const Argv& args);
int NodesCommand(const Argv& args);
// `nodes revoke NAME` (cmd_revoke.cc), dispatched by NodesCommand.
int NodesRevokeCommand(const Argv& args);
int RunCommand(const Argv& args);
int ResultsCommand(const Argv& args);
int RunsCommand(const Argv& args);
int CancelCommand(const Argv& args);
int RankCommand(const Argv& args);
int HistoryCommand(const Argv& args);
int PricesCommand(const Argv& args);
int CostCommand(const Argv& args);
int ProbeCommand(const Argv& args);
int FindingsCommand(const Argv& args);
int VarianceCommand(const Argv& args);
int ReliabilityCommand(const Argv& args);
int ScheduleCommand(const Argv& args);
int TokenCommand(const Argv& args);
int AuditCommand(const Argv& args);
int BackupCommand(const Argv& args);
// `store copy` (cmd_store.cc): runs in fleetbenchd, beside the storage code.
int StoreCommand(const Argv& args);

}  // namespace fleetbench::cli

#endif  // FLEETBENCH_TOOLS_COMMANDS_H_
