#include "agent/benchmarks/collective/rendezvous_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gloo/common/error.h"

namespace fleetbench::collective {
namespace {

// How long one Get() may wait before the store looks at cancelled() again.
constexpr absl::Duration kCancelSlice = absl::Milliseconds(200);

}  // namespace

RendezvousStore::RendezvousStore(agent::Rendezvous* rendezvous,
                                 std::string prefix, absl::Time deadline,
                                 std::function<bool()> cancelled)
    : rendezvous_(rendezvous),
      prefix_(std::move(prefix)),
      deadline_(deadline),
      cancelled_(std::move(cancelled)) {}

void RendezvousStore::Fail(absl::Status status) {
  if (error_.ok()) error_ = status;
  throw gloo::IoException(std::string(status.message()));
}

void RendezvousStore::Abandon() {
  absl::MutexLock lock(&mu_);
  abandoned_ = true;
}

void RendezvousStore::set(const std::string& key,
                          const std::vector<char>& data) {
  absl::MutexLock lock(&mu_);
  if (abandoned_) Fail(absl::CancelledError("gloo rendezvous: abandoned"));
  absl::Status s =
      rendezvous_->Set(prefix_ + key, std::string(data.begin(), data.end()));
  if (!s.ok()) {
    Fail(absl::Status(s.code(), absl::StrCat("gloo rendezvous: set '", key,
                                             "': ", s.message())));
  }
}

const std::string& RendezvousStore::Fetch(const std::string& key,
                                          absl::Time until) {
  auto it = fetched_.find(key);
  if (it != fetched_.end()) return it->second;
  until = std::min(until, deadline_);
  while (true) {
    absl::MutexLock lock(&mu_);
    if (abandoned_) Fail(absl::CancelledError("gloo rendezvous: abandoned"));
    if (cancelled_ && cancelled_()) {
      Fail(absl::CancelledError(
          absl::StrCat("gloo rendezvous: cancelled waiting for '", key, "'")));
    }
    const absl::Duration left = until - absl::Now();
    if (left <= absl::ZeroDuration()) {
      missing_key_ = key;
      Fail(absl::DeadlineExceededError(absl::StrCat(
          "gloo rendezvous: no member set '", key, "' by the deadline")));
    }
    absl::StatusOr<std::string> value =
        rendezvous_->Get(prefix_ + key, std::min(left, kCancelSlice));
    if (value.ok()) {
      return fetched_.emplace(key, *std::move(value)).first->second;
    }
    if (!absl::IsDeadlineExceeded(value.status())) {
      Fail(absl::Status(value.status().code(),
                        absl::StrCat("gloo rendezvous: get '", key,
                                     "': ", value.status().message())));
    }
  }
}

std::vector<char> RendezvousStore::get(const std::string& key) {
  const std::string& value = Fetch(key, deadline_);
  return std::vector<char>(value.begin(), value.end());
}

void RendezvousStore::wait(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) Fetch(key, deadline_);
}

void RendezvousStore::wait(const std::vector<std::string>& keys,
                           const std::chrono::milliseconds& timeout) {
  const absl::Time until = absl::Now() + absl::FromChrono(timeout);
  for (const std::string& key : keys) Fetch(key, until);
}

}  // namespace fleetbench::collective
