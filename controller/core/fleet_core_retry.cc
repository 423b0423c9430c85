// FleetCore: store failures. A write that fails (a full disk, a file the
// OS will not let us grow) is neither acknowledged nor forgotten: reports are
// held unacknowledged in arrival order (store_retry.h), task ends and run
// states wait as pending writes here, and the actor retries them all with
// backoff (100 ms doubling to 2 s by default) until the store takes them. So
// runs finish within a retry of the space coming back, without a restart or
// a reconnect (docs/reliability.md).
#include "controller/core/fleet_core.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace fleetbench::controller {

void FleetCore::NoteStoreFailure(const absl::Status& status, const std::string& doing) {
  store_retry_.NoteFailure(status, doing, clock_->Now());
}

bool FleetCore::HasStoreBacklog() const {
  return store_retry_.holding() || live_.HasUnstoredWrites();
}

void FleetCore::NoteStoreOk() { store_retry_.NoteOk(HasStoreBacklog(), clock_->Now()); }

void FleetCore::RetryStoreBacklog() {
  const absl::Time now = clock_->Now();
  if (now < store_retry_.next_retry()) return;
  // Scheduled again unless everything goes in; a failure below keeps it.
  store_retry_.StartRetry(now);

  // Task ends first: the runs' states are computed from them.
  std::set<std::string> runs;
  std::map<std::string, storage::TaskRecord>& unstored_ends = live_.unstored_ends();
  for (auto it = unstored_ends.begin(); it != unstored_ends.end();) {
    if (absl::Status s = store_->UpdateTask(it->second); !s.ok()) {
      NoteStoreFailure(s, absl::StrCat("finishing task ", it->first));
      break;
    }
    runs.insert(it->second.run_id);
    it = unstored_ends.erase(it);
  }
  runs.insert(live_.unsettled_runs().begin(), live_.unsettled_runs().end());
  for (const std::string& run_id : runs) RecomputeRun(run_id);

  std::vector<PendingReport> batch = store_retry_.TakeHeld();
  if (!batch.empty()) CommitBatch(batch);
  // A dispatch whose write failed left its task queued; nothing else may
  // come along to dispatch it.
  TryDispatch();
  NoteStoreOk();
  if (!HasStoreBacklog() && !store_retry_.failing()) store_retry_.Idle();
}

}  // namespace fleetbench::controller
