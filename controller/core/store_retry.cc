// StoreRetry: the store-failure episode, the held reports and the retry's
// backoff (controller/core/store_retry.h).
#include "controller/core/store_retry.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace fleetbench::controller {

StoreRetry::StoreRetry(Options options) : options_(options), backoff_(options.initial) {}

void StoreRetry::NoteFailure(const absl::Status& status, const std::string& doing,
                             absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (!failing_) {
    failing_ = true;
    shown_.failing = true;
    shown_.failing_since = now;
    backoff_ = options_.initial;
    LOG(ERROR) << "store failing: " << doing << ": " << status
               << "; nothing unstored is acknowledged, retrying until it is stored";
  }
  if (next_retry_ == absl::InfiniteFuture()) next_retry_ = now + backoff_;
  shown_.error = absl::StrCat(doing, ": ", status.message());
  shown_.failures += 1;
}

void StoreRetry::NoteOk(bool backlog_left, absl::Time now) {
  if (!failing_ || backlog_left || holding()) return;
  failing_ = false;
  next_retry_ = absl::InfiniteFuture();
  {
    absl::MutexLock lock(&mu_);
    LOG(INFO) << "store recovered after " << absl::FormatDuration(now - shown_.failing_since)
              << "; everything held is stored";
    shown_.failing = false;
    shown_.error.clear();
    shown_.failing_since = absl::InfinitePast();
    shown_.reports_held = 0;
  }
  // Agents whose reports were dropped past the hold limit resend them when
  // they reconnect.
  for (const std::shared_ptr<AgentLink>& link : owe_resend_) link->Close();
  owe_resend_.clear();
}

void StoreRetry::Hold(std::vector<PendingReport>& reports, absl::Time now) {
  bool dropped = false;
  for (PendingReport& p : reports) {
    const int64_t samples = p.report.samples_size();
    if (held_samples_ + samples > kMaxHeldSamples && !held_.empty()) {
      // The agent keeps it; see kMaxHeldSamples.
      if (std::find(owe_resend_.begin(), owe_resend_.end(), p.link) == owe_resend_.end()) {
        owe_resend_.push_back(p.link);
      }
      dropped = true;
      continue;
    }
    held_samples_ += samples;
    held_.push_back(std::move(p));
  }
  reports.clear();
  if (dropped) {
    LOG(WARNING) << "store failing: more than " << kMaxHeldSamples
                 << " samples held; later reports are left to their agents' spools";
  }
  if (next_retry_ == absl::InfiniteFuture()) next_retry_ = now + backoff_;
  absl::MutexLock lock(&mu_);
  shown_.reports_held = static_cast<int64_t>(held_.size());
}

void StoreRetry::StartRetry(absl::Time now) {
  backoff_ = std::min(backoff_ * 2, options_.max);
  next_retry_ = now + backoff_;
}

std::vector<PendingReport> StoreRetry::TakeHeld() {
  std::vector<PendingReport> held;
  held.swap(held_);
  held_samples_ = 0;
  absl::MutexLock lock(&mu_);
  shown_.reports_held = 0;
  return held;
}

StoreRetry::Snapshot StoreRetry::snapshot() const {
  absl::MutexLock lock(&mu_);
  return shown_;
}

}  // namespace fleetbench::controller
