// controller/core/group_rendezvous.h — one running group's rendezvous relay
// (docs/protocol.md, "Group tasks and the rendezvous relay"): a key-value
// store its members share to find each other (NCCL ids, gloo addresses).
//
// SET stores and wakes the waiters of its key; GET answers at once or
// waits on the relay's list, never blocking the caller: it is answered on
// a SET, when its wait or the group's deadline passes (Expire), or when the
// group ends (End). Keys, values and their totals are bounded
// (common/wire_limits.h). Who may use a group's relay (a member in flight,
// on the node of the stream that asks) is the caller's check.
//
// Threading: the core's actor thread only. Answers go out through each
// request's AgentLink.
#ifndef FLEETBENCH_CONTROLLER_CORE_GROUP_RENDEZVOUS_H_
#define FLEETBENCH_CONTROLLER_CORE_GROUP_RENDEZVOUS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "controller/core/agent_link.h"
#include "fleetbench/v1/agent.pb.h"

namespace fleetbench::controller {

// Sends the answer to the relay request `request_id` through `link`:
// `value` when `status` is OK, else the status's code and message.
void AnswerKvRequest(AgentLink& link, uint64_t request_id, const absl::Status& status,
                     const std::string& value = "");

class GroupRendezvous {
 public:
  // Answers `request` now, or later for a GET that waits; `deadline` is the
  // group's (no wait outlives it).
  void Handle(const std::shared_ptr<AgentLink>& link, const v1::KvRequest& request,
              absl::Time now, absl::Time deadline);
  // Answers the waits that ran out by `now` with DEADLINE_EXCEEDED, saying
  // whether the group's `deadline` ended them.
  void Expire(absl::Time now, absl::Time deadline);
  // The group ended: answers every wait with `status` and forgets the keys.
  void End(const absl::Status& status);

 private:
  struct Waiter {
    std::shared_ptr<AgentLink> link;
    uint64_t request_id = 0;
    std::string key;
    absl::Time until;
  };
  std::map<std::string, std::string> kv_;
  size_t kv_bytes_ = 0;  // keys and values
  std::vector<Waiter> waiters_;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_GROUP_RENDEZVOUS_H_
