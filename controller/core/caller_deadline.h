// controller/core/caller_deadline.h — the error every part of the core
// returns for a user call that outlived its caller's deadline. Deadlines
// are the caller's (gRPC's, wall-clock), never the core's injected clock.
#ifndef FLEETBENCH_CONTROLLER_CORE_CALLER_DEADLINE_H_
#define FLEETBENCH_CONTROLLER_CORE_CALLER_DEADLINE_H_

#include "absl/status/status.h"

namespace fleetbench::controller {

// DEADLINE_EXCEEDED for a user call that outlived its caller's deadline.
inline absl::Status CallerDeadlinePassed() {
  return absl::DeadlineExceededError(
      "the controller did not answer within the call's deadline");
}

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_CALLER_DEADLINE_H_
