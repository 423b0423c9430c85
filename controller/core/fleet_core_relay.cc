// FleetCore: who may use a group's rendezvous relay (group_rendezvous.h):
// only a member in flight, on the node of the stream that asks, of a group
// that is running and has not failed.
#include "absl/strings/str_cat.h"
#include "common/api_enums.h"
#include "common/reason.h"
#include "controller/core/fleet_core.h"

namespace fleetbench::controller {

void FleetCore::HandleKvRequest(const std::shared_ptr<AgentLink>& link, const std::string& node,
                                const v1::KvRequest& request) {
  auto answer = [&](const absl::Status& status) {
    AnswerKvRequest(*link, request.request_id(), status);
  };
  const storage::TaskRecord* task = live_.FindTask(request.task_id());
  if (task == nullptr || task->group_id.empty() || task->node != node ||
      !IsInFlight(task->state)) {
    answer(absl::PermissionDeniedError(
        absl::StrCat("task ", ClipInput(request.task_id()),
                     " is not a running member of a group on node ", node)));
    return;
  }
  RunningGroups::Group* group = groups_.Find(task->group_id);
  if (group == nullptr || !group->dispatched) {
    answer(absl::PermissionDeniedError(
        absl::StrCat("group ", task->group_id, " is not running")));
    return;
  }
  if (!group->failure.empty()) {
    answer(absl::AbortedError(absl::StrCat("the group ended: ", group->failure)));
    return;
  }
  group->rendezvous.Handle(link, request, clock_->Now(), group->deadline);
}

}  // namespace fleetbench::controller
