// common/task_state.h — what a task's state means, shared by the controller
// (which moves tasks between states) and the CLI (which prints them).
#ifndef FLEETBENCH_COMMON_TASK_STATE_H_
#define FLEETBENCH_COMMON_TASK_STATE_H_

#include <string>

#include "fleetbench/v1/result.pb.h"

namespace fleetbench {

// Terminal states end a task; the rest are still to do or in flight.
bool IsTerminal(v1::TaskState state);
// "queued", "running", "succeeded", ... as the CLI and docs spell them.
std::string TaskStateName(v1::TaskState state);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_TASK_STATE_H_
