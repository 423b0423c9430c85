// `results RUN --log`: the tasks' logs.
#include "cli/task_logs.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/wire_limits.h"
#include "fleetbench/v1/fleet_service.grpc.pb.h"

namespace fleetbench::cli {

absl::Status AddTaskLogs(Client* client, v1::Run* run) {
  v1::GetRunRequest request;
  request.set_run_id(run->run_id());
  request.set_include_logs(true);
  v1::Run logs;
  if (absl::Status s = client->Call(&v1::Fleet::Stub::GetRun, request, &logs); !s.ok()) return s;
  std::map<std::string, std::string> by_task;
  std::vector<std::string> omitted;
  for (v1::NodeTask& t : *logs.mutable_tasks()) {
    if (t.log_omitted()) omitted.push_back(t.task_id());
    if (!t.log().empty()) by_task[t.task_id()] = std::move(*t.mutable_log());
  }
  // Asked for by id until none is left out: one log always fits a call.
  const size_t per_call = static_cast<size_t>(kMaxLogTasksPerCall);
  while (!omitted.empty()) {
    request.clear_log_task_ids();
    for (size_t k = 0; k < std::min(omitted.size(), per_call); ++k) {
      request.add_log_task_ids(omitted[k]);
    }
    v1::Run more;
    if (absl::Status s = client->Call(&v1::Fleet::Stub::GetRun, request, &more); !s.ok()) {
      return s;
    }
    std::vector<std::string> again;
    for (v1::NodeTask& t : *more.mutable_tasks()) {
      if (t.log_omitted()) again.push_back(t.task_id());
      if (!t.log().empty()) by_task[t.task_id()] = std::move(*t.mutable_log());
    }
    if (again.size() == static_cast<size_t>(request.log_task_ids_size())) {
      return absl::ResourceExhaustedError(
          "the controller sent none of the task logs asked for: they do not fit its answers");
    }
    omitted.erase(omitted.begin(),
                  omitted.begin() + static_cast<long>(request.log_task_ids_size()));
    omitted.insert(omitted.end(), again.begin(), again.end());
  }
  for (v1::NodeTask& t : *run->mutable_tasks()) {
    if (auto log = by_task.find(t.task_id()); log != by_task.end()) t.set_log(log->second);
  }
  return absl::OkStatus();
}

void PrintTaskLogs(const v1::Run& run) {
  bool any = false;
  for (const v1::NodeTask& t : run.tasks()) {
    if (t.log().empty()) continue;
    any = true;
    // A workload's own bytes: no escape sequence of it reaches the terminal.
    std::string text = t.log();
    // A progress bar's '\r' starts a line of its own.
    for (char& c : text) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '\r') {
        c = '\n';
      } else if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) {
        c = '?';
      }
    }
    std::cout << "\n--- log of " << t.node() << " (task " << t.task_id() << ") ---\n" << text;
    if (text.back() != '\n') std::cout << "\n";
  }
  if (!any) std::cout << "\nlogs: none (only a workload keeps one, from its final report)\n";
}

}  // namespace fleetbench::cli
