// FleetCore: who may use a group's rendezvous relay (group_rendezvous.h):
// only a member in flight, on the node of the stream that asks, of a group
// that is running and has not failed.
#include "absl/strings/str_cat.h"
#include "common/reason.h"
#include "controller/core/fleet_core.h"

namespace fleetbench::controller {
namespace {

bool InFlight(v1::TaskState state) {
  return state == v1::TASK_STATE_DISPATCHED || state == v1::TASK_STATE_RUNNING;
}

}  // namespace

void FleetCore::HandleKvRequest(const std::shared_ptr<AgentLink>& link, const std::string& node,
                                const v1::KvRequest& request) {
  auto answer = [&](const absl::Status& status) {
    AnswerKvRequest(*link, request.request_id(), status);
  };
  auto task = active_tasks_.find(request.task_id());
  if (task == active_tasks_.end() || task->second.group_id.empty() ||
      task->second.node != node || !InFlight(task->second.state)) {
    answer(absl::PermissionDeniedError(
        absl::StrCat("task ", ClipInput(request.task_id()),
                     " is not a running member of a group on node ", node)));
    return;
  }
  auto it = groups_.find(task->second.group_id);
  if (it == groups_.end() || !it->second.dispatched) {
    answer(absl::PermissionDeniedError(
        absl::StrCat("group ", task->second.group_id, " is not running")));
    return;
  }
  GroupState& group = it->second;
  if (!group.failure.empty()) {
    answer(absl::AbortedError(absl::StrCat("the group ended: ", group.failure)));
    return;
  }
  group.rendezvous.Handle(link, request, clock_->Now(), group.deadline);
}

}  // namespace fleetbench::controller
