#include "controller/core/reliability_ledger.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "common/api_enums.h"
#include "common/logging.h"

namespace fleetbench::controller {

ReliabilityLedger::ReliabilityLedger(storage::Store* store, absl::Duration heartbeat_timeout)
    : store_(store), heartbeat_timeout_(heartbeat_timeout) {}

void ReliabilityLedger::Heard(const std::string& node, absl::Time now) {
  auto [it, first] = last_heard_.try_emplace(node, now);
  if (first) return;
  const absl::Duration online = std::min(now - it->second, heartbeat_timeout_);
  it->second = now;
  if (online <= absl::ZeroDuration()) return;
  online_ms_[{node, storage::UtcDayOf(absl::ToUnixMillis(now))}] +=
      absl::ToInt64Milliseconds(online);
}

void ReliabilityLedger::Gone(const std::string& node) { last_heard_.erase(node); }

void ReliabilityLedger::Interrupted(const std::string& node, absl::Time when,
                                    v1::InterruptionKind kind, std::string detail) {
  LOG(WARNING) << "node " << node << " interrupted (" << InterruptionKindName(kind)
               << "): " << detail;
  if (interruptions_.size() >= kMaxPendingInterruptions) {
    interruptions_.erase(interruptions_.begin());
  }
  interruptions_.push_back({node, when, InterruptionKindName(kind), std::move(detail)});
}

void ReliabilityLedger::Flush(absl::Time now, absl::Duration uptime_age) {
  const bool uptime_due = !online_ms_.empty() && now - last_uptime_write_ >= uptime_age;
  if (interruptions_.empty() && !uptime_due) return;
  std::vector<storage::NodeUptime> uptime;
  if (uptime_due) {
    for (const auto& [key, ms] : online_ms_) uptime.push_back({key.first, key.second, ms});
  }
  if (absl::Status s = store_->RecordReliability(uptime, interruptions_); !s.ok()) {
    if (!failing_) LOG(ERROR) << "storing time online and interruptions (kept, retried): " << s;
    failing_ = true;
    return;
  }
  if (failing_) LOG(INFO) << "time online and interruptions stored again";
  failing_ = false;
  interruptions_.clear();
  if (uptime_due) {
    online_ms_.clear();
    last_uptime_write_ = now;
  }
}

}  // namespace fleetbench::controller
