// cli/interrupt.h — Ctrl-C and SIGTERM for a client command that waits on
// the controller (`run --wait`).
//
// Contract: fleetbench_main blocks SIGINT and SIGTERM in every thread before
// any exists, so the daemons can take them with sigwait. A waiting client
// takes them the same way: it waits for one instead of sleeping between
// polls, so a signal ends the wait at once and nothing else ever sees it.
// Commands that do not wait never call this and keep the signals blocked.
#ifndef FLEETBENCH_CLI_INTERRUPT_H_
#define FLEETBENCH_CLI_INTERRUPT_H_

#include "absl/time/time.h"

namespace fleetbench::cli {

// Waits up to `timeout` for SIGINT or SIGTERM; returns the signal taken, or 0
// when none came in time.
int WaitForInterrupt(absl::Duration timeout);

// A process stopped by signal `sig` exits 128 + sig, as the shells report it:
// 130 for SIGINT, 143 for SIGTERM.
inline int ExitCodeForSignal(int sig) { return 128 + sig; }

}  // namespace fleetbench::cli

#endif  // FLEETBENCH_CLI_INTERRUPT_H_
