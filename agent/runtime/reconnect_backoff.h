// agent/runtime/reconnect_backoff.h — how long the agent waits before it
// dials the controller again.
//
// Contract: exponential backoff with full jitter. Every session that ends
// doubles the backoff (up to the maximum) unless it was healthy: the
// controller welcomed it and it stayed up at least `reset_after`. A healthy
// session starts the backoff over, so a controller restart after hours of
// service costs the fleet the initial backoff, not whatever doubling was
// left from the last outage. The wait is a random point in
// [backoff/2, backoff], so a fleet does not redial in lockstep.
//
// Pure: the caller measures the session and the random source is injected,
// so the policy is tested without clocks or sockets. Not thread-safe; the
// agent's dial loop owns it.
#ifndef FLEETBENCH_AGENT_RUNTIME_RECONNECT_BACKOFF_H_
#define FLEETBENCH_AGENT_RUNTIME_RECONNECT_BACKOFF_H_

#include <functional>

#include "absl/time/time.h"

namespace fleetbench::agent {

struct ReconnectBackoffOptions {
  absl::Duration initial = absl::Milliseconds(200);
  absl::Duration max = absl::Seconds(30);
  // A welcomed session up this long counts as healthy.
  absl::Duration reset_after = absl::Seconds(5);
};

class ReconnectBackoff {
 public:
  // Returns a uniform random number in [0, 1].
  using UnitRandom = std::function<double()>;

  // `unit_random` empty: a per-thread Mersenne twister seeded from the OS.
  explicit ReconnectBackoff(ReconnectBackoffOptions options, UnitRandom unit_random = {});

  // The wait before the next dial, given how the session that just ended
  // went: `welcomed` when the controller answered the hello, `session_length`
  // from the welcome to the stream's end (ignored when not welcomed).
  absl::Duration NextWait(bool welcomed, absl::Duration session_length);

  // The backoff the next NextWait starts from when that session was not
  // healthy (the upper bound of its wait).
  absl::Duration backoff() const { return backoff_; }

 private:
  const ReconnectBackoffOptions options_;
  UnitRandom unit_random_;
  absl::Duration backoff_;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_RUNTIME_RECONNECT_BACKOFF_H_
