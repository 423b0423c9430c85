// controller/core/latency_histogram.h — a fixed-bucket histogram of durations,
// the shape Prometheus histograms take (cumulative buckets, count, sum).
// A plain value: not thread-safe; FleetCore keeps one in its Stats under
// stats_mu_ and hands out copies.
#ifndef FLEETBENCH_CONTROLLER_CORE_LATENCY_HISTOGRAM_H_
#define FLEETBENCH_CONTROLLER_CORE_LATENCY_HISTOGRAM_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"

namespace fleetbench::controller {

class LatencyHistogram {
 public:
  // `upper_bounds_seconds` ascending; an observation above the last one
  // counts in `count()` only (Prometheus's +Inf bucket).
  explicit LatencyHistogram(std::vector<double> upper_bounds_seconds)
      : upper_bounds_(std::move(upper_bounds_seconds)),
        cumulative_(upper_bounds_.size(), 0) {}

  void Observe(absl::Duration d) {
    const double seconds = absl::ToDoubleSeconds(d);
    for (size_t i = 0; i < upper_bounds_.size(); ++i) {
      if (seconds <= upper_bounds_[i]) ++cumulative_[i];
    }
    ++count_;
    sum_seconds_ += seconds;
  }

  const std::vector<double>& upper_bounds() const { return upper_bounds_; }
  // cumulative()[i]: observations <= upper_bounds()[i].
  const std::vector<int64_t>& cumulative() const { return cumulative_; }
  int64_t count() const { return count_; }
  double sum_seconds() const { return sum_seconds_; }

 private:
  std::vector<double> upper_bounds_;
  std::vector<int64_t> cumulative_;
  int64_t count_ = 0;
  double sum_seconds_ = 0;
};

// The buckets of the ingest commit latency: a group commit on a local disk
// takes a millisecond or so; one that waits on fsync or a busy disk, up to
// seconds.
inline std::vector<double> IngestCommitBuckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
}

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_LATENCY_HISTOGRAM_H_
