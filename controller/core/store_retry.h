// controller/core/store_retry.h — what the core does while the store
// refuses writes (a full disk, a file the OS will not let grow): nothing
// unstored is acknowledged and nothing is forgotten (docs/reliability.md).
//
// What it owns: the episode (failing since when, the last error, how many
// failures), the reports held unacknowledged in arrival order, the links
// owed a resend, and the retry's schedule (store_retry_initial doubling to
// store_retry_max). The core's other pending writes (task ends, run states)
// stay with the run lifecycle; the core says whether any is left when it
// reports a success, and the episode ends only when none is.
//
// Bounds: past kMaxHeldSamples held samples a report is dropped instead of
// held (its agent keeps it in its spool) and its link is closed once the
// store recovers, so the agent reconnects and sends it again: the
// controller's memory stays bounded while a disk stays full.
//
// Threading: the core's actor thread, except Snapshot (any thread). The
// episode is logged once when it starts and once when it ends.
#ifndef FLEETBENCH_CONTROLLER_CORE_STORE_RETRY_H_
#define FLEETBENCH_CONTROLLER_CORE_STORE_RETRY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "controller/core/agent_link.h"
#include "controller/core/pending_report.h"

namespace fleetbench::controller {

class StoreRetry {
 public:
  struct Options {
    absl::Duration initial = absl::Milliseconds(100);
    absl::Duration max = absl::Seconds(2);
  };
  static constexpr int64_t kMaxHeldSamples = 500'000;

  explicit StoreRetry(Options options);

  // A write failed while doing `doing`: starts the episode (logged once)
  // and schedules a retry when none is.
  void NoteFailure(const absl::Status& status, const std::string& doing, absl::Time now);
  // A write succeeded. With no pending write left (`backlog_left` false,
  // and no report held) the episode ends: logged, and the links owed a
  // resend are closed.
  void NoteOk(bool backlog_left, absl::Time now);

  // Keeps `reports` (emptied) unacknowledged for the retry, behind those
  // held already; schedules a retry when none is.
  void Hold(std::vector<PendingReport>& reports, absl::Time now);
  bool holding() const { return !held_.empty(); }

  bool failing() const { return failing_; }
  // When the retry is due (InfiniteFuture: none).
  absl::Time next_retry() const { return next_retry_; }
  // The retry starts at `now`: the next one is scheduled with the backoff
  // doubled (a retry that stores everything cancels it with Idle).
  void StartRetry(absl::Time now);
  // Hands the held reports over to be committed again, in arrival order.
  std::vector<PendingReport> TakeHeld();
  // Nothing is left and the store takes writes: no retry is scheduled.
  void Idle() { next_retry_ = absl::InfiniteFuture(); }

  // Any thread: the episode as ListNodes and /metrics show it.
  struct Snapshot {
    bool failing = false;
    std::string error;  // "doing: message" of the last failure
    absl::Time failing_since = absl::InfinitePast();
    int64_t reports_held = 0;
    int64_t failures = 0;  // since start
  };
  Snapshot snapshot() const;

 private:
  const Options options_;
  bool failing_ = false;
  absl::Duration backoff_;
  absl::Time next_retry_ = absl::InfiniteFuture();
  std::vector<PendingReport> held_;
  int64_t held_samples_ = 0;
  std::vector<std::shared_ptr<AgentLink>> owe_resend_;

  mutable absl::Mutex mu_;
  Snapshot shown_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_STORE_RETRY_H_
