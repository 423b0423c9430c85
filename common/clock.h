// common/clock.h — injectable time source, so heartbeat expiry, schedules and
// ranking windows can be tested without waiting.
#ifndef FLEETBENCH_COMMON_CLOCK_H_
#define FLEETBENCH_COMMON_CLOCK_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fleetbench {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() = 0;
  // The process-wide real clock; never deleted.
  static Clock* Real();
};

// A clock that moves only when told. Thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start) : now_(start) {}
  absl::Time Now() override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  absl::Mutex mu_;
  absl::Time now_;
};

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_CLOCK_H_
