// FleetCore: taking nodes out of the fleet, by hand (`fleetbench nodes rm`)
// or by expiry (FleetOptions::node_expiry). A node that is online, or has a
// task queued or in flight, stays: removing it would only make it come back
// at its next hello, or orphan its task. What happens to its history is the
// store's (Store::RemoveNode): kept when it ran tasks, else deleted whole.
#include <algorithm>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "controller/core/fleet_core.h"

namespace fleetbench::controller {

absl::StatusOr<v1::RemoveNodeResponse> FleetCore::HandleRemoveNode(const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("which node? (fleetbench nodes rm NAME)");
  if (sessions_.Online(name)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "node ", name, " is online; stop its agent first (it would be back at its next hello)"));
  }
  const std::set<std::string> runs = live_.RunsOnNode(name);
  if (!runs.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "node ", name, " has tasks queued or in flight (run ", *runs.begin(),
        runs.size() > 1 ? absl::StrCat(" and ", runs.size() - 1, " more") : "",
        "); cancel them or let them end first"));
  }
  absl::StatusOr<bool> kept = store_->RemoveNode(name, clock_->Now());
  if (!kept.ok()) return kept.status();
  sessions_.Remove(name);
  LOG(INFO) << "node " << name << " removed"
            << (*kept ? "; its results are kept" : "; it had run no task");
  v1::RemoveNodeResponse response;
  response.set_history_kept(*kept);
  return response;
}

void FleetCore::ExpireNodes(absl::Time now) {
  absl::StatusOr<std::vector<storage::NodeRecord>> nodes = store_->ListNodes();
  if (!nodes.ok()) {
    LOG(ERROR) << "listing nodes for expiry: " << nodes.status();
    return;
  }
  for (const storage::NodeRecord& node : *nodes) {
    if (node.removed) continue;
    absl::Time last_seen = node.last_seen;
    if (const NodeSessions::Session* s = sessions_.Find(node.name)) {
      last_seen = std::max(last_seen, s->last_seen);
    }
    if (now - last_seen <= options_.node_expiry) continue;
    absl::StatusOr<v1::RemoveNodeResponse> removed = HandleRemoveNode(node.name);
    if (removed.ok()) {
      LOG(INFO) << "node " << node.name << " expired: not seen for "
                << absl::FormatDuration(absl::Trunc(now - last_seen, absl::Seconds(1)))
                << " (--node-expiry " << absl::FormatDuration(options_.node_expiry) << ")";
    } else if (!absl::IsFailedPrecondition(removed.status())) {
      LOG(ERROR) << "expiring node " << node.name << ": " << removed.status();
    }
  }
}

}  // namespace fleetbench::controller
