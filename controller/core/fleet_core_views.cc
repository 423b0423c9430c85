// FleetCore: the live read views. ListNodes and GetRun run on the actor:
// they merge live sessions, tasks and progress into what the store holds.
// The reads of the store alone are parts of their own (history_view.h,
// rank_view.h, findings_view.h, exposition_view.h).
#include "controller/core/fleet_core.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api_enums.h"
#include "common/wire_limits.h"
#include "controller/core/page_tokens.h"
#include "controller/ranking/price_catalog.h"
#include "controller/ranking/rank_profiles.h"
#include "controller/ranking/ranking.h"

namespace fleetbench::controller {

absl::StatusOr<v1::ListNodesResponse> FleetCore::HandleListNodes() {
  auto records = store_->ListNodes();
  if (!records.ok()) return records.status();
  v1::ListNodesResponse response;
  for (const storage::NodeRecord& r : *records) {
    if (r.removed) continue;  // out of the fleet, kept for its results
    v1::Node* node = response.add_nodes();
    node->set_name(r.name);
    const NodeSessions::Session* session = sessions_.Find(r.name);
    const bool online = session != nullptr && session->online;
    node->set_status(online ? v1::NODE_STATUS_ONLINE : v1::NODE_STATUS_OFFLINE);
    for (const auto& [k, v] : r.labels) (*node->mutable_labels())[k] = v;
    *node->mutable_facts() = r.facts;
    node->set_agent_version(r.agent_version);
    absl::Time last_seen = r.last_seen;
    if (session != nullptr) {
      last_seen = std::max(last_seen, session->last_seen);
      for (const auto& c : session->capabilities) *node->add_capabilities() = c;
    }
    node->set_last_seen_unix_ms(absl::ToUnixMillis(last_seen));
  }
  if (store_retry_.failing()) {
    const StoreRetry::Snapshot store = store_retry_.snapshot();
    response.set_store_error(store.error);
    response.set_store_failing_since_unix_ms(absl::ToUnixMillis(store.failing_since));
    response.set_reports_held(store.reports_held);
  }
  return response;
}

// The stored logs of the run's tasks (or of those asked for by id), as
// many as fit the page budget, the first always: a log that would not fit is
// left out and says so, to be asked for on its own. Sizes are read first,
// so no more log text than the answer holds is ever read.
absl::Status FleetCore::AddTaskLogs(const v1::GetRunRequest& request, v1::Run& out) {
  if (request.log_task_ids_size() > kMaxLogTasksPerCall) {
    return absl::InvalidArgumentError(absl::StrCat(
        "at most ", kMaxLogTasksPerCall, " tasks' logs at a time; ", request.log_task_ids_size(),
        " asked for"));
  }
  const std::set<std::string> wanted(request.log_task_ids().begin(),
                                     request.log_task_ids().end());
  absl::StatusOr<std::map<std::string, int64_t>> sizes =
      store_->TaskLogSizesOfRun(out.run_id());
  if (!sizes.ok()) return sizes.status();
  size_t bytes = out.ByteSizeLong();
  std::vector<std::string> taken;
  std::map<std::string, v1::NodeTask*> by_id;
  for (v1::NodeTask& task : *out.mutable_tasks()) {
    if (!wanted.empty() && !wanted.contains(task.task_id())) continue;
    auto size = sizes->find(task.task_id());
    if (size == sizes->end()) continue;
    const size_t log_bytes = static_cast<size_t>(size->second) + 8;  // + tag and length
    if (!taken.empty() && bytes + log_bytes > kPageBudgetBytes) {
      task.set_log_omitted(true);
      continue;
    }
    bytes += log_bytes;
    taken.push_back(task.task_id());
    by_id[task.task_id()] = &task;
  }
  absl::StatusOr<std::map<std::string, std::string>> logs = store_->TaskLogs(taken);
  if (!logs.ok()) return logs.status();
  for (auto& [id, log] : *logs) by_id[id]->set_log(std::move(log));
  return absl::OkStatus();
}

absl::StatusOr<v1::Run> FleetCore::HandleGetRun(const v1::GetRunRequest& request) {
  auto run = store_->GetRun(request.run_id());
  if (!run.ok()) return run.status();
  auto tasks = store_->ListTasks(request.run_id());
  if (!tasks.ok()) return tasks.status();
  v1::Run out;
  out.set_run_id(run->run_id);
  out.set_state(RunStateFromName(run->state).value_or(v1::RUN_STATE_UNSPECIFIED));
  out.set_created_unix_ms(absl::ToUnixMillis(run->created));
  if (run->finished != absl::InfinitePast()) {
    out.set_finished_unix_ms(absl::ToUnixMillis(run->finished));
  }
  out.set_suite(run->suite);
  absl::StatusOr<std::optional<v1::ScheduleFiring>> firing = store_->FiringOfRun(run->run_id);
  if (!firing.ok()) return firing.status();
  if (firing->has_value()) {
    out.set_schedule((*firing)->schedule());
    *out.mutable_offline_nodes() = (*firing)->offline_nodes();
  }
  for (const auto& b : run->benchmarks) *out.add_benchmarks() = b;
  if (run->group.mode() != v1::GROUP_MODE_UNSPECIFIED) {
    // The groups, in plan order, from the newest state of their tasks.
    std::vector<storage::TaskRecord> newest;
    newest.reserve(tasks->size());
    for (const storage::TaskRecord& t : *tasks) newest.push_back(live_.Newest(t));
    *out.mutable_group() = run->group;
    const std::vector<v1::GroupResult> groups = GroupResults(newest);
    for (const v1::GroupResult& g : groups) *out.add_groups() = g;
    if (run->group.mode() == v1::GROUP_MODE_ISOLATE) {
      *out.mutable_isolation() = JudgeIsolation(run->group, run->group_nodes, groups);
    }
  }
  for (const storage::TaskRecord& stored : *tasks) {
    // Newest first: in flight, ended but not yet stored, stored.
    const storage::TaskRecord& t = live_.Newest(stored);
    v1::NodeTask* nt = out.add_tasks();
    nt->set_task_id(t.task_id);
    nt->set_node(t.node);
    nt->set_state(t.state);
    nt->set_reason(t.reason);
    nt->set_group_id(t.group_id);
    nt->set_group_rank(t.group_rank);
    for (const auto& o : t.outcomes) *nt->add_outcomes() = o;
    if (const LiveRuns::Progress* p = live_.ProgressOf(t.task_id)) {
      nt->set_progress_benchmark(p->benchmark);
      nt->set_progress_fraction(p->fraction);
      nt->set_progress_message(p->message);
    }
  }
  if (request.include_logs()) {
    if (absl::Status s = AddTaskLogs(request, out); !s.ok()) return s;
  }
  if (request.include_samples()) {
    // A page, by count and by bytes: a run of any size must fit the
    // messages every peer accepts (common/wire_limits.h).
    const uint32_t page_size = std::clamp<uint32_t>(
        request.samples_page_size() ? request.samples_page_size() : 10000, 1, 20000);
    std::optional<storage::RunSampleCursor> after;
    if (!request.samples_page_token().empty()) {
      auto parsed = ParseRunSamplesPageToken(request.samples_page_token(), request.run_id());
      if (!parsed.ok()) return parsed.status();
      after = *std::move(parsed);
    }
    std::vector<storage::RunSampleCursor> cursors;
    auto samples = store_->ListSamplesForRunPage(request.run_id(), static_cast<int>(page_size) + 1,
                                                 after, &cursors);
    if (!samples.ok()) return samples.status();
    size_t bytes = out.ByteSizeLong();
    size_t taken = 0;
    for (; taken < samples->size() && taken < page_size; ++taken) {
      bytes += (*samples)[taken].ByteSizeLong() + 8;  // + the field's tag and length
      if (taken > 0 && bytes > kPageBudgetBytes) break;
      *out.add_samples() = std::move((*samples)[taken]);
    }
    if (taken < samples->size()) {
      out.set_samples_next_page_token(RunSamplesPageToken(request.run_id(), cursors[taken - 1]));
    }
  }
  return out;
}

}  // namespace fleetbench::controller
