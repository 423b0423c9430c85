#include "agent/benchmarks/collective/local_rendezvous.h"

#include "absl/strings/str_cat.h"

namespace fleetbench::collective {
namespace {

constexpr size_t kMaxKeyBytes = 256;
constexpr size_t kMaxValueBytes = 64 * 1024;

absl::Status CheckKey(const std::string& key) {
  if (key.empty() || key.size() > kMaxKeyBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rendezvous: a key has 1..", kMaxKeyBytes, " bytes, not ", key.size()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LocalRendezvous::Set(const std::string& key,
                                  const std::string& value) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  if (value.size() > kMaxValueBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("rendezvous: value of '", key, "' has ", value.size(),
                     " bytes, more than ", kMaxValueBytes));
  }
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::AbortedError("rendezvous: the group ended");
  values_[key] = value;
  return absl::OkStatus();
}

absl::StatusOr<std::string> LocalRendezvous::Get(const std::string& key,
                                                 absl::Duration timeout) {
  if (absl::Status s = CheckKey(key); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  auto ready = [this, &key]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return closed_ || values_.count(key) > 0;
  };
  mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  if (closed_) return absl::AbortedError("rendezvous: the group ended");
  auto it = values_.find(key);
  if (it == values_.end()) {
    return absl::DeadlineExceededError(
        absl::StrCat("rendezvous: no member set '", key, "' within ",
                     absl::FormatDuration(timeout)));
  }
  return it->second;
}

void LocalRendezvous::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
}

}  // namespace fleetbench::collective
