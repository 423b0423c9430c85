// FleetCore: the rendezvous relay of group tasks (see
// docs/protocol.md "Group tasks and the rendezvous relay"). A key-value store
// per running group, kept on the actor: SET stores and wakes the waiters of
// its key, GET answers at once or joins the group's waiter list (answered on
// a SET, at its wait or the group's deadline by SweepGroups, or when the
// group ends), within the bounds of common/wire_limits.h. Only a member in
// flight, on the node of the stream that asks, is answered.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/reason.h"
#include "common/wire_limits.h"
#include "controller/core/fleet_core.h"

namespace fleetbench::controller {
namespace {

bool InFlight(v1::TaskState state) {
  return state == v1::TASK_STATE_DISPATCHED || state == v1::TASK_STATE_RUNNING;
}

}  // namespace

void FleetCore::HandleKvRequest(const std::shared_ptr<AgentLink>& link, const std::string& node,
                                const v1::KvRequest& request) {
  auto answer = [&](const absl::Status& status, const std::string& value = "") {
    v1::ControllerMessage msg;
    v1::KvResponse* r = msg.mutable_kv_response();
    r->set_request_id(request.request_id());
    r->set_code(static_cast<int32_t>(status.code()));
    r->set_error(TruncateReason(status.message()));
    if (status.ok()) r->set_value(value);
    link->Send(msg);
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
  const std::string& key = request.key();
  if (key.empty() || key.size() > kMaxKvKeyBytes) {
    answer(absl::InvalidArgumentError(absl::StrCat("a rendezvous key is 1..", kMaxKvKeyBytes,
                                                   " bytes; this one is ", key.size())));
    return;
  }
  const absl::Time now = clock_->Now();
  switch (request.op()) {
    case v1::KvRequest::OP_SET: {
      const std::string& value = request.value();
      if (value.size() > kMaxKvValueBytes) {
        answer(absl::InvalidArgumentError(absl::StrCat("a rendezvous value is at most ",
                                                       kMaxKvValueBytes, " bytes; this one is ",
                                                       value.size())));
        return;
      }
      auto old = group.kv.find(key);
      if (old == group.kv.end() && group.kv.size() >= kMaxKvKeysPerGroup) {
        answer(absl::InvalidArgumentError(
            absl::StrCat("a group holds at most ", kMaxKvKeysPerGroup, " rendezvous keys")));
        return;
      }
      const size_t before = old == group.kv.end() ? 0 : key.size() + old->second.size();
      const size_t after = group.kv_bytes - before + key.size() + value.size();
      if (after > kMaxKvBytesPerGroup) {
        answer(absl::InvalidArgumentError(absl::StrCat(
            "a group holds at most ", kMaxKvBytesPerGroup, " bytes of rendezvous keys and values")));
        return;
      }
      group.kv[key] = value;
      group.kv_bytes = after;
      answer(absl::OkStatus());
      // Whoever waits for this key has it now.
      std::vector<KvWaiter> still;
      for (KvWaiter& w : group.waiters) {
        if (w.key != key) {
          still.push_back(std::move(w));
          continue;
        }
        v1::ControllerMessage msg;
        msg.mutable_kv_response()->set_request_id(w.request_id);
        msg.mutable_kv_response()->set_value(value);
        w.link->Send(msg);
      }
      group.waiters = std::move(still);
      return;
    }
    case v1::KvRequest::OP_GET: {
      if (auto found = group.kv.find(key); found != group.kv.end()) {
        answer(absl::OkStatus(), found->second);
        return;
      }
      if (request.wait_ms() < 0) {
        answer(absl::InvalidArgumentError(
            absl::StrCat("wait_ms ", request.wait_ms(), " is negative")));
        return;
      }
      if (request.wait_ms() == 0) {
        answer(absl::NotFoundError(absl::StrCat("no member set '", ClipInput(key), "'")));
        return;
      }
      // Waits, on the actor's list (never blocking it), until a member sets
      // the key, the wait or the group's deadline is over, or the group ends.
      const absl::Time until =
          std::min(now + absl::Milliseconds(std::min<int64_t>(request.wait_ms(),
                                                              int64_t{7} * 24 * 3600 * 1000)),
                   group.deadline);
      if (until <= now) {
        answer(absl::DeadlineExceededError("the group's deadline has passed"));
        return;
      }
      group.waiters.push_back({link, request.request_id(), key, until});
      return;
    }
    default:
      answer(absl::InvalidArgumentError(
          absl::StrCat("unknown rendezvous op ", static_cast<int>(request.op()))));
  }
}

void FleetCore::AnswerWaiters(GroupState& group, const absl::Status& status) {
  for (const KvWaiter& w : group.waiters) {
    v1::ControllerMessage msg;
    msg.mutable_kv_response()->set_request_id(w.request_id);
    msg.mutable_kv_response()->set_code(static_cast<int32_t>(status.code()));
    msg.mutable_kv_response()->set_error(TruncateReason(status.message()));
    w.link->Send(msg);
  }
  group.waiters.clear();
}

}  // namespace fleetbench::controller
