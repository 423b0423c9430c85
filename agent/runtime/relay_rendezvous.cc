#include "agent/runtime/relay_rendezvous.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/wire_limits.h"

namespace fleetbench::agent {
namespace {

uint64_t NextRequestId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

}  // namespace

RelayRendezvous::RelayRendezvous(std::string task_id, SendFn send)
    : task_id_(std::move(task_id)), send_(std::move(send)) {}

absl::Status RelayRendezvous::Set(const std::string& key, const std::string& value) {
  if (value.size() > kMaxKvValueBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a rendezvous value is at most ", kMaxKvValueBytes, " bytes; this one is ", value.size()));
  }
  v1::KvRequest request;
  request.set_op(v1::KvRequest::OP_SET);
  request.set_key(key);
  request.set_value(value);
  return Call(std::move(request), absl::ZeroDuration()).status();
}

absl::StatusOr<std::string> RelayRendezvous::Get(const std::string& key,
                                                 absl::Duration timeout) {
  v1::KvRequest request;
  request.set_op(v1::KvRequest::OP_GET);
  request.set_key(key);
  const absl::Duration wait = std::max(timeout, absl::ZeroDuration());
  request.set_wait_ms(wait == absl::InfiniteDuration() ? int64_t{7} * 24 * 3600 * 1000
                                                       : absl::ToInt64Milliseconds(wait));
  return Call(std::move(request), wait);
}

absl::StatusOr<std::string> RelayRendezvous::Call(v1::KvRequest request, absl::Duration wait) {
  if (request.key().empty() || request.key().size() > kMaxKvKeyBytes) {
    return absl::InvalidArgumentError(absl::StrCat("a rendezvous key is 1..", kMaxKvKeyBytes,
                                                   " bytes; this one is ", request.key().size()));
  }
  const uint64_t id = NextRequestId();
  request.set_request_id(id);
  request.set_task_id(task_id_);
  uint64_t generation = 0;
  {
    absl::MutexLock lock(&mu_);
    if (cancelled_) return absl::CancelledError("the task was cancelled");
    pending_[id];
    generation = stream_generation_;
  }
  v1::AgentMessage message;
  *message.mutable_kv_request() = std::move(request);
  if (!send_(message)) {
    absl::MutexLock lock(&mu_);
    pending_.erase(id);
    return absl::UnavailableError("not connected to the controller");
  }
  absl::MutexLock lock(&mu_);
  auto done = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return cancelled_ || stream_generation_ != generation || pending_.at(id).has_value();
  };
  mu_.AwaitWithTimeout(absl::Condition(&done), wait + kAnswerSlack);
  std::optional<v1::KvResponse> response = std::move(pending_.at(id));
  pending_.erase(id);
  if (response.has_value()) {
    if (response->code() == 0) return std::move(*response->mutable_value());
    return absl::Status(static_cast<absl::StatusCode>(response->code()), response->error());
  }
  if (cancelled_) return absl::CancelledError("the task was cancelled");
  if (stream_generation_ != generation) {
    return absl::UnavailableError("the stream to the controller ended while waiting");
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "the controller did not answer within ", absl::FormatDuration(wait + kAnswerSlack)));
}

void RelayRendezvous::Deliver(const v1::KvResponse& response) {
  absl::MutexLock lock(&mu_);
  auto it = pending_.find(response.request_id());
  if (it != pending_.end() && !it->second.has_value()) it->second = response;
}

void RelayRendezvous::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
}

void RelayRendezvous::StreamLost() {
  absl::MutexLock lock(&mu_);
  ++stream_generation_;
}

}  // namespace fleetbench::agent
