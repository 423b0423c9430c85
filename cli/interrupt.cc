#include "cli/interrupt.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>

#include "absl/time/clock.h"

namespace fleetbench::cli {

int WaitForInterrupt(absl::Duration timeout) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const timespec left = absl::ToTimespec(std::max(deadline - absl::Now(), absl::ZeroDuration()));
    const int sig = sigtimedwait(&set, nullptr, &left);
    if (sig > 0) return sig;
    // EINTR: another signal's handler ran (none is installed today); wait out
    // the rest. EAGAIN: the time is up.
    if (errno != EINTR || absl::Now() >= deadline) return 0;
  }
}

}  // namespace fleetbench::cli
