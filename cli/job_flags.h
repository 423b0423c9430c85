// cli/job_flags.h — the flags that make `rank` and `cost` answer for a job
// of N nodes (--job-nodes, --checkpoint-interval, --restart-cost), and the
// columns that show it (docs/ranking.md, Goodput).
#ifndef FLEETBENCH_CLI_JOB_FLAGS_H_
#define FLEETBENCH_CLI_JOB_FLAGS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/args.h"
#include "fleetbench/v1/rank.pb.h"

namespace fleetbench::cli {

// Appends the job flags to a command's flags.
void AddJobFlags(std::vector<FlagSpec>& flags);
// The job the flags describe; nullopt without --job-nodes. INVALID_ARGUMENT
// (the message names the flag) for a count that is not 1..1000000, a
// duration absl cannot read, or an interval or restart cost without
// --job-nodes.
absl::StatusOr<std::optional<v1::JobShape>> JobFromFlags(const Args& args);

// What a row's GOODPUT cell says: "0.930", with "?" after it when its
// group was observed too briefly to know its rate.
std::string GoodputText(const v1::JobGoodput& job);
// One line under the table: the job asked for and what the columns mean.
std::string JobLegend(const v1::JobShape& job);

}  // namespace fleetbench::cli

#endif  // FLEETBENCH_CLI_JOB_FLAGS_H_
