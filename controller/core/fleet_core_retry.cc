// FleetCore: store failures. A write that fails (a full disk, a file the
// OS will not let us grow) is neither acknowledged nor forgotten: reports are
// held unacknowledged in arrival order, task ends and run states wait as
// pending writes, and the actor retries them all with backoff (100 ms
// doubling to 2 s by default) until the store takes them. So runs finish
// within a retry of the space coming back, without a restart or a reconnect
// (docs/reliability.md). The episode is logged once when it starts and once when it
// ends, and ListNodes and GetStats carry the error while it lasts.
#include "controller/core/fleet_core.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace fleetbench::controller {
namespace {

// Past this many held samples, a report is dropped unacknowledged instead
// (its agent keeps it in its spool); the link it came on is closed once the
// store recovers, so the agent reconnects and sends it again. Bounds the
// controller's memory while a disk stays full.
constexpr int64_t kMaxHeldSamples = 500'000;

}  // namespace

void FleetCore::NoteStoreFailure(const absl::Status& status, const std::string& doing) {
  const absl::Time now = clock_->Now();
  if (!store_failing_) {
    store_failing_ = true;
    store_failing_since_ = now;
    store_retry_backoff_ = options_.store_retry_initial;
    LOG(ERROR) << "store failing: " << doing << ": " << status
               << "; nothing unstored is acknowledged, retrying until it is stored";
  }
  if (next_store_retry_ == absl::InfiniteFuture()) next_store_retry_ = now + store_retry_backoff_;
  absl::MutexLock lock(&stats_mu_);
  stats_.store_error = absl::StrCat(doing, ": ", status.message());
  stats_.store_failing_since = store_failing_since_;
  stats_.store_failures += 1;
}

bool FleetCore::HasStoreBacklog() const {
  return !held_reports_.empty() || !unstored_ends_.empty() || !unsettled_runs_.empty();
}

void FleetCore::NoteStoreOk() {
  if (!store_failing_ || HasStoreBacklog()) return;
  store_failing_ = false;
  next_store_retry_ = absl::InfiniteFuture();
  LOG(INFO) << "store recovered after " << absl::FormatDuration(clock_->Now() - store_failing_since_)
            << "; everything held is stored";
  {
    absl::MutexLock lock(&stats_mu_);
    stats_.store_error.clear();
    stats_.store_failing_since = absl::InfinitePast();
    stats_.reports_held = 0;
  }
  // Agents whose reports were dropped past the hold limit resend them when
  // they reconnect.
  for (const std::shared_ptr<AgentLink>& link : owe_resend_) link->Close();
  owe_resend_.clear();
}

void FleetCore::HoldReports(std::vector<PendingReport>& reports) {
  bool dropped = false;
  for (PendingReport& p : reports) {
    const int64_t samples = p.report.samples_size();
    if (held_samples_ + samples > kMaxHeldSamples && !held_reports_.empty()) {
      // The agent keeps it; see kMaxHeldSamples.
      if (std::find(owe_resend_.begin(), owe_resend_.end(), p.link) == owe_resend_.end()) {
        owe_resend_.push_back(p.link);
      }
      dropped = true;
      continue;
    }
    held_samples_ += samples;
    held_reports_.push_back(std::move(p));
  }
  reports.clear();
  if (dropped) {
    LOG(WARNING) << "store failing: more than " << kMaxHeldSamples
                 << " samples held; later reports are left to their agents' spools";
  }
  if (next_store_retry_ == absl::InfiniteFuture()) {
    next_store_retry_ = clock_->Now() + store_retry_backoff_;
  }
  absl::MutexLock lock(&stats_mu_);
  stats_.reports_held = static_cast<int64_t>(held_reports_.size());
}

void FleetCore::RetryStoreBacklog() {
  const absl::Time now = clock_->Now();
  if (now < next_store_retry_) return;
  // Scheduled again unless everything goes in; a failure below keeps it.
  store_retry_backoff_ = std::min(store_retry_backoff_ * 2, options_.store_retry_max);
  next_store_retry_ = now + store_retry_backoff_;

  // Task ends first: the runs' states are computed from them.
  std::set<std::string> runs;
  for (auto it = unstored_ends_.begin(); it != unstored_ends_.end();) {
    if (absl::Status s = store_->UpdateTask(it->second); !s.ok()) {
      NoteStoreFailure(s, absl::StrCat("finishing task ", it->first));
      break;
    }
    runs.insert(it->second.run_id);
    it = unstored_ends_.erase(it);
  }
  runs.insert(unsettled_runs_.begin(), unsettled_runs_.end());
  for (const std::string& run_id : runs) RecomputeRun(run_id);

  std::vector<PendingReport> batch;
  batch.swap(held_reports_);
  held_samples_ = 0;
  {
    absl::MutexLock lock(&stats_mu_);
    stats_.reports_held = 0;
  }
  if (!batch.empty()) CommitBatch(batch);
  // A dispatch whose write failed left its task queued; nothing else may
  // come along to dispatch it.
  TryDispatch();
  NoteStoreOk();
  if (!HasStoreBacklog() && !store_failing_) next_store_retry_ = absl::InfiniteFuture();
}

}  // namespace fleetbench::controller
