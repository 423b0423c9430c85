// controller/core/reliability_view.h — the reliability read: each group's
// node-hours, interruptions by kind, rate per 1,000 node-hours with its
// interval, and its lemons (controller/ranking/reliability_table.h,
// docs/reliability.md), from what the ledger stored.
//
// Reads only the store, on the caller's thread; no state of its own beyond
// what it was built with, so threads may call it at once. Time online is
// kept per UTC day, so a window starts at the UTC day its start falls on;
// interruptions are counted from the window's start itself. A node taken
// out of the fleet still counts, under its last labels while its row is
// kept (a node that never ran a task is deleted whole: its record counts
// under "(none)" when grouped by a label).
//
// Errors: INVALID_ARGUMENT for a bad grouping, a window that is negative
// or longer than 365 days, or a bad min_node_hours; DEADLINE_EXCEEDED past
// the caller's deadline; store errors as the store returns them.
#ifndef FLEETBENCH_CONTROLLER_CORE_RELIABILITY_VIEW_H_
#define FLEETBENCH_CONTROLLER_CORE_RELIABILITY_VIEW_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "fleetbench/v1/reliability.pb.h"
#include "storage/store.h"

namespace fleetbench::controller {

// A request's window when it gives none, and the default bar for enough
// data.
inline constexpr absl::Duration kReliabilityWindow = absl::Hours(24 * 30);
inline constexpr double kMinNodeHours = 24;
// The most interruptions one call lists (ReliabilityRequest.list_limit).
inline constexpr uint32_t kMaxListedInterruptions = 1000;

class ReliabilityView {
 public:
  // `store` and `clock` must outlive the view.
  ReliabilityView(storage::Store* store, Clock* clock) : store_(store), clock_(clock) {}

  absl::StatusOr<v1::ReliabilityResponse> Reliability(const v1::ReliabilityRequest& request,
                                                      absl::Time deadline) const;

 private:
  storage::Store* const store_;
  Clock* const clock_;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_RELIABILITY_VIEW_H_
