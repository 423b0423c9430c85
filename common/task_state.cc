#include "common/task_state.h"

namespace fleetbench {

bool IsTerminal(v1::TaskState state) {
  switch (state) {
    case v1::TASK_STATE_SUCCEEDED:
    case v1::TASK_STATE_FAILED:
    case v1::TASK_STATE_SKIPPED:
    case v1::TASK_STATE_CANCELLED:
    case v1::TASK_STATE_LOST:
      return true;
    default:
      return false;
  }
}

std::string TaskStateName(v1::TaskState state) {
  switch (state) {
    case v1::TASK_STATE_QUEUED: return "queued";
    case v1::TASK_STATE_DISPATCHED: return "dispatched";
    case v1::TASK_STATE_RUNNING: return "running";
    case v1::TASK_STATE_SUCCEEDED: return "succeeded";
    case v1::TASK_STATE_FAILED: return "failed";
    case v1::TASK_STATE_SKIPPED: return "skipped";
    case v1::TASK_STATE_CANCELLED: return "cancelled";
    case v1::TASK_STATE_LOST: return "lost";
    default: return "unspecified";
  }
}

}  // namespace fleetbench
