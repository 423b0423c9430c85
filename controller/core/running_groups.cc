// RunningGroups: the groups with a member not ended.
#include "controller/core/running_groups.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/reason.h"

namespace fleetbench::controller {

void RunningGroups::Register(const storage::TaskRecord& task) {
  if (task.group_id.empty()) return;
  Group& group = groups_[task.group_id];
  group.run_id = task.run_id;
  if (group.task_ids.size() < task.group_members.size()) {
    group.task_ids.resize(task.group_members.size());
  }
  if (task.group_rank >= 0 && static_cast<size_t>(task.group_rank) < group.task_ids.size()) {
    group.task_ids[task.group_rank] = task.task_id;
  }
}

RunningGroups::Group* RunningGroups::Find(const std::string& group_id) {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : &it->second;
}

const RunningGroups::Group* RunningGroups::Find(const std::string& group_id) const {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : &it->second;
}

std::vector<std::string> RunningGroups::OfRun(const std::string& run_id) const {
  std::vector<std::string> ids;
  for (const auto& [id, g] : groups_) {
    if (g.run_id == run_id) ids.push_back(id);
  }
  return ids;
}

void RunningGroups::Dispatched(const std::string& group_id, absl::Time deadline) {
  Group* group = Find(group_id);
  if (group == nullptr) return;
  group->dispatched = true;
  group->deadline = deadline;
}

bool RunningGroups::Fail(const std::string& group_id, const std::string& reason,
                         const std::set<std::string>& at_fault, absl::Time now) {
  Group* group = Find(group_id);
  if (group == nullptr || !group->failure.empty()) return false;
  group->failure = TruncateReason(reason);
  group->at_fault = at_fault;
  group->failed_at = now;
  LOG(WARNING) << group->failure;
  group->rendezvous.End(absl::AbortedError(absl::StrCat("the group ended: ", group->failure)));
  return true;
}

void RunningGroups::ShapeMemberEnd(storage::TaskRecord& ending) const {
  if (ending.group_id.empty()) return;
  const Group* group = Find(ending.group_id);
  if (group == nullptr || group->failure.empty()) return;
  if (group->at_fault.contains(ending.task_id)) {
    // Stopped at the group's deadline: it did not finish, whatever it says.
    if (ending.state != v1::TASK_STATE_LOST) ending.state = v1::TASK_STATE_FAILED;
    ending.reason = TruncateReason(ending.reason.empty()
                                       ? group->failure
                                       : absl::StrCat(group->failure, "; ", ending.reason));
  } else if (ending.state != v1::TASK_STATE_SUCCEEDED) {
    // Stopped because of another member (or failed with it): its own
    // message is a consequence.
    ending.state = v1::TASK_STATE_CANCELLED;
    ending.reason = TruncateReason(group->failure);
  }
}

void RunningGroups::End(const std::string& group_id) {
  auto it = groups_.find(group_id);
  if (it == groups_.end()) return;
  it->second.rendezvous.End(absl::AbortedError("the group ended"));
  groups_.erase(it);
}

}  // namespace fleetbench::controller
