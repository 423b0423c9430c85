// LiveRuns: the run lifecycle's live state.
#include "controller/core/live_runs.h"

#include <utility>

#include "common/api_enums.h"

namespace fleetbench::controller {

storage::TaskRecord* LiveRuns::FindTask(const std::string& task_id) {
  auto it = tasks_.find(task_id);
  return it == tasks_.end() ? nullptr : &it->second;
}

const storage::TaskRecord* LiveRuns::FindTask(const std::string& task_id) const {
  auto it = tasks_.find(task_id);
  return it == tasks_.end() ? nullptr : &it->second;
}

void LiveRuns::AddTask(storage::TaskRecord task) {
  const std::string id = task.task_id;
  tasks_[id] = std::move(task);
}

void LiveRuns::EndTask(const std::string& task_id) {
  progress_.erase(task_id);
  promised_reports_.erase(task_id);
  awaiting_port_.erase(task_id);
  tasks_.erase(task_id);
}

const storage::TaskRecord& LiveRuns::Newest(const storage::TaskRecord& stored) const {
  if (const storage::TaskRecord* live = FindTask(stored.task_id)) return *live;
  if (const storage::TaskRecord* unstored = UnstoredEnd(stored.task_id)) return *unstored;
  return stored;
}

bool LiveRuns::NodeBusy(const std::string& node) const {
  for (const auto& [id, task] : tasks_) {
    if (task.node == node && IsInFlight(task.state)) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> LiveRuns::TaskIdsOfNode(const std::string& node) const {
  std::vector<std::string> ids;
  for (const auto& [id, task] : tasks_) {
    if (task.node == node && task.state != v1::TASK_STATE_QUEUED) ids.push_back(id);
  }
  return ids;
}

std::set<std::string> LiveRuns::RunsOnNode(const std::string& node) const {
  std::set<std::string> runs;
  for (const auto& [id, task] : tasks_) {
    if (task.node == node) runs.insert(task.run_id);
  }
  return runs;
}

uint32_t LiveRuns::InFlight(const std::string& run_id) const {
  uint32_t n = 0;
  for (const auto& [id, t] : tasks_) {
    if (t.run_id == run_id && IsInFlight(t.state)) {
      ++n;
    }
  }
  return n;
}

storage::RunRecord* LiveRuns::FindRun(const std::string& run_id) {
  auto it = runs_.find(run_id);
  return it == runs_.end() ? nullptr : &it->second;
}

void LiveRuns::AddRun(storage::RunRecord run) {
  const std::string id = run.run_id;
  runs_[id] = std::move(run);
}

void LiveRuns::EraseRun(const std::string& run_id) {
  runs_.erase(run_id);
  user_cancelled_.erase(run_id);
}

void LiveRuns::SetProgress(const std::string& task_id, Progress progress) {
  progress_[task_id] = std::move(progress);
}

const LiveRuns::Progress* LiveRuns::ProgressOf(const std::string& task_id) const {
  auto it = progress_.find(task_id);
  return it == progress_.end() ? nullptr : &it->second;
}

void LiveRuns::PromiseReport(const std::string& task_id, absl::Time due) {
  promised_reports_[task_id] = due;
}

bool LiveRuns::ReportPromised(const std::string& task_id) const {
  return promised_reports_.contains(task_id);
}

std::vector<std::string> LiveRuns::PromisesDue(absl::Time now) const {
  std::vector<std::string> due;
  for (const auto& [task_id, deadline] : promised_reports_) {
    if (now >= deadline) due.push_back(task_id);
  }
  return due;
}

void LiveRuns::KeepUnstoredEnd(const storage::TaskRecord& ended) {
  unstored_ends_[ended.task_id] = ended;
}

const storage::TaskRecord* LiveRuns::UnstoredEnd(const std::string& task_id) const {
  auto it = unstored_ends_.find(task_id);
  return it == unstored_ends_.end() ? nullptr : &it->second;
}

}  // namespace fleetbench::controller
