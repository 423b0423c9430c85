// cli/task_logs.h — `results RUN --log`: each task's stored log (the end of
// what its benchmarks printed, such as a workload's output), fetched within
// the controller's page budget and printed under its node's name.
#ifndef FLEETBENCH_CLI_TASK_LOGS_H_
#define FLEETBENCH_CLI_TASK_LOGS_H_

#include "absl/status/status.h"
#include "cli/client.h"
#include "fleetbench/v1/run.pb.h"

namespace fleetbench::cli {

// Fills each task's stored log into `run` (GetRunRequest.include_logs): one
// call, then by task id for the logs that did not fit it. `run` has its
// run_id and tasks.
absl::Status AddTaskLogs(Client* client, v1::Run* run);

// Each task's log under a header naming its node, to stdout; one line when
// none has a log.
void PrintTaskLogs(const v1::Run& run);

}  // namespace fleetbench::cli

#endif  // FLEETBENCH_CLI_TASK_LOGS_H_
