// FleetCore: retention (FleetOptions::retain_samples). On the actor, from
// Sweep: one batch (Store::PruneSamplesBefore, at most retention_batch
// samples, one short transaction) per sweep while a pass is going, so
// reports queued meanwhile are committed between batches and ingest never
// waits for a whole pass. A pass ends when a batch finds nothing older.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/logging.h"
#include "controller/fleet_core.h"

namespace fleetbench::controller {

void FleetCore::PruneRetention(absl::Time now) {
  const absl::Time cutoff = now - options_.retain_samples;
  absl::StatusOr<int64_t> removed =
      store_->PruneSamplesBefore(cutoff, std::max(1, options_.retention_batch));
  if (!removed.ok()) {
    // Nothing is lost by waiting: the next pass tries again.
    LOG(WARNING) << "retention: " << removed.status().message();
    next_retention_ = now + std::min(options_.retention_interval, absl::Minutes(1));
    return;
  }
  if (*removed > 0) {
    retention_pass_removed_ += *removed;
    absl::MutexLock lock(&stats_mu_);
    stats_.samples_pruned += *removed;
    next_retention_ = now;  // the next sweep goes on
    return;
  }
  if (retention_pass_removed_ > 0) {
    LOG(INFO) << "retention: removed " << retention_pass_removed_ << " samples dated before "
              << absl::FormatTime(cutoff, absl::UTCTimeZone());
  }
  retention_pass_removed_ = 0;
  next_retention_ = now + options_.retention_interval;
}

}  // namespace fleetbench::controller
