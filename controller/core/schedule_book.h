// controller/core/schedule_book.h — schedules (docs/schedules.md): named
// StartRun requests fired at their cron times in their time zone.
//
// What it owns: the schedules as loaded and added, each one's next cron
// time and last firing, and the count of firings by outcome. It fires a
// schedule's run through Hooks::start_run, as a user's StartRun would; a
// firing while the schedule's previous run is unfinished is SKIPPED; a
// refusal is FAILED with the reason; cron times passed while the
// controller was down: the newest runs once when within `grace`, the rest
// are one MISSED record. Nothing fires before `settle` after Load, so
// agents reconnecting to a restarted controller are online for the
// catch-up. Every firing is stored; one that cannot be is logged and not
// fired again.
//
// Threading: everything but ListFirings and FiringCounts runs on the
// core's actor thread (the hooks are called there too); those two may be
// called from any thread.
//
// Errors: INVALID_ARGUMENT for a bad name, cron expression, time zone or
// run (one line naming what is wrong), ALREADY_EXISTS for a name taken,
// NOT_FOUND for an unknown name; store errors as the store returns them.
#ifndef FLEETBENCH_CONTROLLER_CORE_SCHEDULE_BOOK_H_
#define FLEETBENCH_CONTROLLER_CORE_SCHEDULE_BOOK_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/cron.h"
#include "fleetbench/v1/run.pb.h"
#include "fleetbench/v1/schedule.pb.h"
#include "storage/store.h"

namespace fleetbench::controller {

class ScheduleBook {
 public:
  struct Options {
    // A cron time missed while the controller was down still runs (once,
    // however many were missed) when it is at most this old.
    absl::Duration grace = absl::Hours(1);
    // Nothing fires until this long after Load.
    absl::Duration settle = absl::Seconds(15);
  };
  // What a firing needs from the rest of the core, called on the actor.
  struct Hooks {
    // Starts a run as a user's StartRun would.
    std::function<absl::StatusOr<v1::StartRunResponse>(const v1::StartRunRequest&)> start_run;
    // A run's state while it has unfinished tasks; nullopt once it ended.
    std::function<std::optional<std::string>(const std::string& run_id)> unfinished_run_state;
    // Whether the node is online now; `labels` gets the labels its
    // connection declared, when this process has seen one.
    std::function<bool(const std::string& node, std::map<std::string, std::string>* labels)>
        node_online;
  };
  // `store` and `clock` must outlive the book.
  ScheduleBook(storage::Store* store, Clock* clock, Options options, Hooks hooks);

  // Reads the stored schedules and their last firings (at the core's start).
  absl::Status Load();

  absl::StatusOr<v1::AddScheduleResponse> Add(const v1::AddScheduleRequest& request);
  v1::ListSchedulesResponse List() const;
  absl::Status Remove(const std::string& name);
  // Fires now by the same rules and answers the firing; the cron's mark is
  // left alone (tonight's run still runs).
  absl::StatusOr<v1::RunScheduleResponse> RunNow(const std::string& name);

  // When FireDue has work next (InfiniteFuture: none).
  absl::Time next_due() const { return next_due_; }
  // Handles every schedule whose next cron time has come.
  void FireDue();

  // Any thread: a schedule's firings, newest first (a read of the store).
  absl::StatusOr<v1::ListScheduleFiringsResponse> ListFirings(
      const v1::ListScheduleFiringsRequest& request, absl::Time deadline) const;
  // Any thread: firings recorded since start by (schedule, outcome), the
  // outcome one of "started", "skipped", "missed", "failed" (a MISSED record
  // standing for several cron times counts once).
  std::map<std::pair<std::string, std::string>, int64_t> FiringCounts() const;

 private:
  struct ScheduleState {
    storage::Store::ScheduleRecord record;
    std::optional<CronExpression> cron;  // nullopt: the stored one is bad
    absl::TimeZone zone;
    // The next cron time not yet handled (InfiniteFuture: none).
    absl::Time next_slot = absl::InfiniteFuture();
    v1::ScheduleFiring last_firing;  // empty when it never fired
  };
  v1::Schedule View(const ScheduleState& state) const;
  // Fires `state` for `slot` now: starts its run, or skips it while the
  // previous one is going; records and returns the firing.
  v1::ScheduleFiring Fire(ScheduleState& state, absl::Time slot, bool manual);
  // Stores a firing (moving the mark to `handled_until` when set), counts
  // it, and keeps it as the schedule's last.
  void RecordFiring(ScheduleState& state, const v1::ScheduleFiring& firing,
                    std::optional<absl::Time> handled_until);
  void UpdateNextDue();

  storage::Store* const store_;
  Clock* const clock_;
  const Options options_;
  const Hooks hooks_;

  // Schedules by name; none fires before from_ (Load plus settle); the
  // earliest next_slot, not before that.
  std::map<std::string, ScheduleState> schedules_;
  absl::Time loaded_;
  absl::Time from_;
  absl::Time next_due_ = absl::InfiniteFuture();

  mutable absl::Mutex firings_mu_;
  std::map<std::pair<std::string, std::string>, int64_t> firing_counts_
      ABSL_GUARDED_BY(firings_mu_);
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_SCHEDULE_BOOK_H_
