// SampleRetention: one batch (Store::PruneSamplesBefore, at most `batch`
// samples, one short transaction) per sweep while a pass is going, so
// reports queued meanwhile are committed between batches and ingest never
// waits for a whole pass. A pass ends when a batch finds nothing older.
#include "controller/core/sample_retention.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/logging.h"

namespace fleetbench::controller {

SampleRetention::SampleRetention(storage::Store* store, Options options)
    : store_(store), options_(options) {}

void SampleRetention::Sweep(absl::Time now) {
  if (options_.retain_samples <= absl::ZeroDuration() || now < next_batch_) return;
  const absl::Time cutoff = now - options_.retain_samples;
  absl::StatusOr<int64_t> removed =
      store_->PruneSamplesBefore(cutoff, std::max(1, options_.batch));
  absl::StatusOr<int64_t> logs = removed.ok()
                                     ? store_->PruneTaskLogsBefore(cutoff, kTaskLogsPerBatch)
                                     : absl::StatusOr<int64_t>(0);
  for (const absl::Status& s : {removed.status(), logs.status()}) {
    if (s.ok()) continue;
    // Nothing is lost by waiting: the next pass tries again.
    LOG(WARNING) << "retention: " << s.message();
    next_batch_ = now + std::min(options_.interval, absl::Minutes(1));
    return;
  }
  if (*removed > 0 || *logs > 0) {
    pass_removed_ += *removed;
    pass_logs_removed_ += *logs;
    samples_pruned_.fetch_add(*removed);
    next_batch_ = now;  // the next sweep goes on
    return;
  }
  if (pass_removed_ > 0 || pass_logs_removed_ > 0) {
    LOG(INFO) << "retention: removed " << pass_removed_ << " samples and " << pass_logs_removed_
              << " task logs dated before " << absl::FormatTime(cutoff, absl::UTCTimeZone());
  }
  pass_removed_ = 0;
  pass_logs_removed_ = 0;
  next_batch_ = now + options_.interval;
}

}  // namespace fleetbench::controller
