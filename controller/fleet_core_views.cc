// FleetCore: read views. ListNodes and GetRun run on the actor (they merge
// live sessions, tasks and progress into what the store holds); ListRuns,
// Rank and History read only the store, from the caller's thread.
#include "controller/fleet_core.h"

#include <algorithm>
#include <map>

#include "common/metrics.h"
#include "controller/ranking.h"

namespace fleetbench::controller {

absl::StatusOr<v1::ListNodesResponse> FleetCore::HandleListNodes() {
  auto records = store_->ListNodes();
  if (!records.ok()) return records.status();
  v1::ListNodesResponse response;
  for (const storage::NodeRecord& r : *records) {
    v1::Node* node = response.add_nodes();
    node->set_name(r.name);
    auto session = sessions_.find(r.name);
    const bool online = session != sessions_.end() && session->second.online;
    node->set_status(online ? "online" : "offline");
    for (const auto& [k, v] : r.labels) (*node->mutable_labels())[k] = v;
    *node->mutable_facts() = r.facts;
    node->set_agent_version(r.agent_version);
    absl::Time last_seen = r.last_seen;
    if (session != sessions_.end()) {
      last_seen = std::max(last_seen, session->second.last_seen);
      for (const auto& c : session->second.capabilities) *node->add_capabilities() = c;
    }
    node->set_last_seen_unix_ms(absl::ToUnixMillis(last_seen));
  }
  return response;
}

absl::StatusOr<v1::Run> FleetCore::HandleGetRun(const v1::GetRunRequest& request) {
  auto run = store_->GetRun(request.run_id());
  if (!run.ok()) return run.status();
  auto tasks = store_->ListTasks(request.run_id());
  if (!tasks.ok()) return tasks.status();
  v1::Run out;
  out.set_run_id(run->run_id);
  out.set_state(run->state);
  out.set_created_unix_ms(absl::ToUnixMillis(run->created));
  if (run->finished != absl::InfinitePast()) {
    out.set_finished_unix_ms(absl::ToUnixMillis(run->finished));
  }
  out.set_suite(run->suite);
  for (const auto& b : run->benchmarks) *out.add_benchmarks() = b;
  for (const storage::TaskRecord& stored : *tasks) {
    auto live = active_tasks_.find(stored.task_id);
    const storage::TaskRecord& t = live != active_tasks_.end() ? live->second : stored;
    v1::NodeTask* nt = out.add_tasks();
    nt->set_task_id(t.task_id);
    nt->set_node(t.node);
    nt->set_state(t.state);
    nt->set_reason(t.reason);
    for (const auto& o : t.outcomes) *nt->add_outcomes() = o;
    if (auto p = progress_.find(t.task_id); p != progress_.end()) {
      nt->set_progress_benchmark(p->second.benchmark);
      nt->set_progress_fraction(p->second.fraction);
      nt->set_progress_message(p->second.message);
    }
  }
  if (request.include_samples()) {
    auto samples = store_->ListSamplesForRun(request.run_id());
    if (!samples.ok()) return samples.status();
    for (auto& s : *samples) *out.add_samples() = std::move(s);
  }
  return out;
}

absl::StatusOr<v1::ListRunsResponse> FleetCore::ListRuns(uint32_t limit) {
  auto runs = store_->ListRuns(static_cast<int>(std::clamp<uint32_t>(limit ? limit : 20, 1, 1000)));
  if (!runs.ok()) return runs.status();
  v1::ListRunsResponse response;
  for (const storage::RunRecord& r : *runs) {
    v1::Run* run = response.add_runs();
    run->set_run_id(r.run_id);
    run->set_state(r.state);
    run->set_created_unix_ms(absl::ToUnixMillis(r.created));
    if (r.finished != absl::InfinitePast()) {
      run->set_finished_unix_ms(absl::ToUnixMillis(r.finished));
    }
    run->set_suite(r.suite);
    for (const auto& b : r.benchmarks) *run->add_benchmarks() = b;
  }
  return response;
}

absl::StatusOr<v1::RankResponse> FleetCore::Rank(const v1::RankRequest& request) {
  if (request.metric().empty()) {
    return absl::InvalidArgumentError("--metric is required, e.g. gemm.cpu.fp32.tflops");
  }
  const std::string by = request.by().empty() ? "node" : request.by();
  const absl::Duration window = request.window_ms() > 0
                                    ? absl::Milliseconds(request.window_ms())
                                    : options_.rank_window;
  // The compact table names each node once: a million points cost a
  // million doubles, not two million strings (docs/storage.md).
  auto table = store_->MetricPointTableSince(request.metric(), clock_->Now() - window);
  if (!table.ok()) return table.status();
  auto nodes = store_->ListNodes();
  if (!nodes.ok()) return nodes.status();
  std::map<std::string, NodeSeries> series;
  for (const storage::NodeRecord& n : *nodes) {
    series[n.name].node = n.name;
    series[n.name].labels = n.labels;
  }
  std::vector<NodeSeries*> by_index;
  for (const std::string& name : table->nodes) {
    NodeSeries& s = series[name];
    s.node = name;
    by_index.push_back(&s);
  }
  for (const storage::MetricPointTable::Point& p : table->points) {
    by_index[p.node]->values.push_back(p.value);
  }
  std::vector<NodeSeries> list;
  for (auto& [name, s] : series) {
    if (!s.values.empty()) list.push_back(std::move(s));
  }
  const MetricInfo* info = FindMetric(request.metric());
  // Unknown metrics are ranked as throughput; lower-is-better ones are known.
  const bool higher_is_better = info == nullptr || info->higher_is_better;
  return RankByCostPerThroughput(request.metric(), by, higher_is_better, list);
}

absl::StatusOr<v1::HistoryResponse> FleetCore::History(const v1::HistoryRequest& request) {
  if (request.node().empty() || request.metric().empty()) {
    return absl::InvalidArgumentError("--node and --metric are required");
  }
  const int limit = static_cast<int>(std::clamp<uint32_t>(
      request.limit() ? request.limit() : 100, 1, 100000));
  auto samples = store_->History(request.node(), request.metric(), limit);
  if (!samples.ok()) return samples.status();
  v1::HistoryResponse response;
  for (auto& s : *samples) *response.add_samples() = std::move(s);
  return response;
}

}  // namespace fleetbench::controller
