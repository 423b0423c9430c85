// GroupRendezvous: the relay's store and its waiters, within the bounds of
// common/wire_limits.h.
#include "controller/core/group_rendezvous.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/reason.h"
#include "common/wire_limits.h"

namespace fleetbench::controller {

void AnswerKvRequest(AgentLink& link, uint64_t request_id, const absl::Status& status,
                     const std::string& value) {
  v1::ControllerMessage msg;
  v1::KvResponse* r = msg.mutable_kv_response();
  r->set_request_id(request_id);
  r->set_code(static_cast<int32_t>(status.code()));
  r->set_error(TruncateReason(status.message()));
  if (status.ok()) r->set_value(value);
  link.Send(msg);
}

void GroupRendezvous::Handle(const std::shared_ptr<AgentLink>& link,
                             const v1::KvRequest& request, absl::Time now,
                             absl::Time deadline) {
  auto answer = [&](const absl::Status& status, const std::string& value = "") {
    AnswerKvRequest(*link, request.request_id(), status, value);
  };
  const std::string& key = request.key();
  if (key.empty() || key.size() > kMaxKvKeyBytes) {
    answer(absl::InvalidArgumentError(absl::StrCat("a rendezvous key is 1..", kMaxKvKeyBytes,
                                                   " bytes; this one is ", key.size())));
    return;
  }
  switch (request.op()) {
    case v1::KvRequest::OP_SET: {
      const std::string& value = request.value();
      if (value.size() > kMaxKvValueBytes) {
        answer(absl::InvalidArgumentError(absl::StrCat("a rendezvous value is at most ",
                                                       kMaxKvValueBytes, " bytes; this one is ",
                                                       value.size())));
        return;
      }
      auto old = kv_.find(key);
      if (old == kv_.end() && kv_.size() >= kMaxKvKeysPerGroup) {
        answer(absl::InvalidArgumentError(
            absl::StrCat("a group holds at most ", kMaxKvKeysPerGroup, " rendezvous keys")));
        return;
      }
      const size_t before = old == kv_.end() ? 0 : key.size() + old->second.size();
      const size_t after = kv_bytes_ - before + key.size() + value.size();
      if (after > kMaxKvBytesPerGroup) {
        answer(absl::InvalidArgumentError(absl::StrCat(
            "a group holds at most ", kMaxKvBytesPerGroup, " bytes of rendezvous keys and values")));
        return;
      }
      kv_[key] = value;
      kv_bytes_ = after;
      answer(absl::OkStatus());
      // Whoever waits for this key has it now.
      std::vector<Waiter> still;
      for (Waiter& w : waiters_) {
        if (w.key != key) {
          still.push_back(std::move(w));
          continue;
        }
        v1::ControllerMessage msg;
        msg.mutable_kv_response()->set_request_id(w.request_id);
        msg.mutable_kv_response()->set_value(value);
        w.link->Send(msg);
      }
      waiters_ = std::move(still);
      return;
    }
    case v1::KvRequest::OP_GET: {
      if (auto found = kv_.find(key); found != kv_.end()) {
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
      // Waits, on the list (never blocking the actor), until a member sets
      // the key, the wait or the group's deadline is over, or the group ends.
      const absl::Time until =
          std::min(now + absl::Milliseconds(std::min<int64_t>(request.wait_ms(),
                                                              int64_t{7} * 24 * 3600 * 1000)),
                   deadline);
      if (until <= now) {
        answer(absl::DeadlineExceededError("the group's deadline has passed"));
        return;
      }
      waiters_.push_back({link, request.request_id(), key, until});
      return;
    }
    default:
      answer(absl::InvalidArgumentError(
          absl::StrCat("unknown rendezvous op ", static_cast<int>(request.op()))));
  }
}

void GroupRendezvous::Expire(absl::Time now, absl::Time deadline) {
  std::vector<Waiter> still;
  for (Waiter& w : waiters_) {
    if (w.until > now) {
      still.push_back(std::move(w));
      continue;
    }
    v1::ControllerMessage msg;
    msg.mutable_kv_response()->set_request_id(w.request_id);
    msg.mutable_kv_response()->set_code(static_cast<int32_t>(absl::StatusCode::kDeadlineExceeded));
    msg.mutable_kv_response()->set_error(
        w.until >= deadline ? "the group's deadline passed before a member set the key"
                            : "no member set the key in time");
    w.link->Send(msg);
  }
  waiters_ = std::move(still);
}

void GroupRendezvous::End(const absl::Status& status) {
  for (const Waiter& w : waiters_) {
    v1::ControllerMessage msg;
    msg.mutable_kv_response()->set_request_id(w.request_id);
    msg.mutable_kv_response()->set_code(static_cast<int32_t>(status.code()));
    msg.mutable_kv_response()->set_error(TruncateReason(status.message()));
    w.link->Send(msg);
  }
  waiters_.clear();
  kv_.clear();
  kv_bytes_ = 0;
}

}  // namespace fleetbench::controller
