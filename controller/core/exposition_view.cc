// ExpositionView: the reads behind /metrics, the latest measurements of
// every node and the runs by state. Any thread: they read only the store.
#include "controller/core/exposition_view.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "controller/core/caller_deadline.h"

namespace fleetbench::controller {
namespace {

// Runs read per node and metric to find the newest.
constexpr int kRunsReadPerNode = 4;

}  // namespace

ExpositionView::ExpositionView(storage::Store* store, Clock* clock, absl::Duration rank_window)
    : store_(store), clock_(clock), rank_window_(rank_window) {}

absl::StatusOr<LatestMeasurements> ExpositionView::LatestSamples(absl::Time deadline) const {
  LatestMeasurements out;
  auto metrics = store_->ListMetricDescriptors();
  if (!metrics.ok()) return metrics.status();
  out.metrics = std::move(*metrics);
  auto nodes = store_->ListNodes();
  if (!nodes.ok()) return nodes.status();
  std::set<std::string> listed;
  for (const storage::NodeRecord& node : *nodes) {
    if (!node.removed) listed.insert(node.name);
  }
  // 1. Per metric, each node's newest run, from one scan of the metric's
  //    ranking points (cheap, docs/storage.md). Store::History per node and
  //    metric would rescan those points for every node: 2 s for 1,000 nodes.
  const absl::Time since = clock_->Now() - rank_window_;
  // (node, metric) -> the run whose samples to show.
  std::map<std::pair<std::string, std::string>, std::string> newest_run;
  std::set<std::string> runs;
  for (const v1::MetricDescriptor& metric : out.metrics) {
    if (absl::Now() >= deadline) return CallerDeadlinePassed();
    // Each node's newest few runs are enough to find its newest one (a
    // margin for runs stored late), in memory bounded by the fleet.
    auto table = store_->MetricPointTableOfNewestRuns(metric.name(), since, kRunsReadPerNode,
                                                      nodes->size());
    if (!table.ok()) return table.status();
    std::vector<const storage::MetricPointTable::Point*> newest(table->nodes.size(), nullptr);
    for (const storage::MetricPointTable::Point& p : table->points) {
      const storage::MetricPointTable::Point*& best = newest[p.node];
      // Ties (one clock tick): the later run; run ids are ULIDs, in time
      // order.
      if (best == nullptr || p.time > best->time ||
          (p.time == best->time && table->run_ids[p.run] > table->run_ids[best->run])) {
        best = &p;
      }
    }
    for (size_t i = 0; i < newest.size(); ++i) {
      if (newest[i] == nullptr || listed.count(table->nodes[i]) == 0) continue;
      const std::string& run = table->run_ids[newest[i]->run];
      newest_run[{table->nodes[i], metric.name()}] = run;
      runs.insert(run);
    }
  }
  // 2. Those runs' samples, one indexed read per run (usually a few runs
  //    cover the fleet), keeping each node's metrics of its newest run.
  for (const std::string& run : runs) {
    if (absl::Now() >= deadline) return CallerDeadlinePassed();
    auto samples = store_->ListSamplesForRun(run);
    if (!samples.ok()) return samples.status();
    for (v1::Sample& sample : *samples) {
      auto it = newest_run.find({sample.node(), sample.metric()});
      if (it != newest_run.end() && it->second == run) out.samples.push_back(std::move(sample));
    }
  }
  // By node and metric, then newest first (time, then id: History's order)
  // for a series that a run measured twice: the exposition keeps the first.
  std::sort(out.samples.begin(), out.samples.end(), [](const v1::Sample& a, const v1::Sample& b) {
    if (a.node() != b.node()) return a.node() < b.node();
    if (a.metric() != b.metric()) return a.metric() < b.metric();
    if (a.time_unix_ms() != b.time_unix_ms()) return a.time_unix_ms() > b.time_unix_ms();
    return a.id() > b.id();
  });
  return out;
}

absl::StatusOr<std::map<std::string, int64_t>> ExpositionView::CountRunsByState(
    absl::Time deadline) const {
  auto runs = store_->ListRuns(/*limit=*/0);
  if (!runs.ok()) return runs.status();
  if (absl::Now() >= deadline) return CallerDeadlinePassed();
  std::map<std::string, int64_t> out;
  for (const storage::RunRecord& run : *runs) ++out[run.state];
  return out;
}

}  // namespace fleetbench::controller
