// FleetCore's reads for /metrics: the latest measurements of every node and
// the runs by state. Any thread: they read only the store.
#include <map>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "controller/fleet_core.h"

namespace fleetbench::controller {

absl::StatusOr<FleetCore::LatestMeasurements> FleetCore::LatestSamples(absl::Time deadline) {
  LatestMeasurements out;
  auto metrics = store_->ListMetricDescriptors();
  if (!metrics.ok()) return metrics.status();
  out.metrics = std::move(*metrics);
  auto nodes = store_->ListNodes();
  if (!nodes.ok()) return nodes.status();
  for (const storage::NodeRecord& node : *nodes) {
    if (node.removed) continue;
    for (const v1::MetricDescriptor& metric : out.metrics) {
      if (absl::Now() >= deadline) return CallerDeadlinePassed();
      auto newest = store_->History(node.name, metric.name(), kMaxLatestSamplesPerMetric);
      // Removed between the two reads: its samples go with it.
      if (absl::IsNotFound(newest.status())) break;
      if (!newest.ok()) return newest.status();
      // Newest first: the newest run's samples, one per series that run
      // measured (a GEMM's sizes, a disk's workloads).
      for (v1::Sample& sample : *newest) {
        if (sample.run_id() != newest->front().run_id()) break;
        out.samples.push_back(std::move(sample));
      }
    }
  }
  return out;
}

absl::StatusOr<std::map<std::string, int64_t>> FleetCore::CountRunsByState(absl::Time deadline) {
  auto runs = store_->ListRuns(/*limit=*/0);
  if (!runs.ok()) return runs.status();
  if (absl::Now() >= deadline) return CallerDeadlinePassed();
  std::map<std::string, int64_t> out;
  for (const storage::RunRecord& run : *runs) ++out[run.state];
  return out;
}

}  // namespace fleetbench::controller
