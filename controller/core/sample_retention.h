// controller/core/sample_retention.h — retention (docs/operations.md):
// samples dated more than `retain_samples` before the clock are removed
// with their ranking points, in small batches, and task logs (a workload's
// output) of tasks that ended before then, kTaskLogsPerBatch at a time.
//
// Threading: Sweep runs on the core's actor thread only (its batches are
// store writes); samples_pruned may be read from any thread. A failed
// batch is logged and retried within a minute; nothing else sees it.
#ifndef FLEETBENCH_CONTROLLER_CORE_SAMPLE_RETENTION_H_
#define FLEETBENCH_CONTROLLER_CORE_SAMPLE_RETENTION_H_

#include <atomic>
#include <cstdint>

#include "absl/time/time.h"
#include "storage/store.h"

namespace fleetbench::controller {

// Task logs removed per sweep (each up to 64 KiB: a few MiB of writes).
inline constexpr int kTaskLogsPerBatch = 64;

class SampleRetention {
 public:
  struct Options {
    // Zero: samples are kept forever (the default).
    absl::Duration retain_samples = absl::ZeroDuration();
    // A pass starts every `interval` (the first at the first sweep) and
    // removes at most `batch` samples per sweep until none is older.
    absl::Duration interval = absl::Hours(1);
    int batch = 5000;
  };
  // `store` must outlive this.
  SampleRetention(storage::Store* store, Options options);

  // The sweep's part: one batch of a pass when one is due at `now`.
  void Sweep(absl::Time now);
  // Samples removed since start.
  int64_t samples_pruned() const { return samples_pruned_.load(); }

 private:
  storage::Store* const store_;
  const Options options_;
  absl::Time next_batch_ = absl::InfinitePast();
  int64_t pass_removed_ = 0;  // samples, by the pass going on
  int64_t pass_logs_removed_ = 0;
  std::atomic<int64_t> samples_pruned_{0};
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_SAMPLE_RETENTION_H_
