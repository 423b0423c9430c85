// controller/core/findings_view.h — what is wrong where, and why: the node
// rules and the fleet rules (diagnosis/, docs/findings.md) over one node or
// all, on a run's results or each node's latest; and a metric's 24-hour
// profile per node or group (the day/night gap of noisy neighbours).
//
// Reads only the store, on the caller's thread, within fixed bounds on
// what one call reads (findings_view.cc), checking the caller's deadline
// between reads; no state of its own, so threads may call it at once. The
// rules are pure: this part gathers their inputs.
//
// Errors: INVALID_ARGUMENT for a bad severity, window or grouping;
// NOT_FOUND for an unknown node, run or metric; DEADLINE_EXCEEDED past the
// caller's deadline.
#ifndef FLEETBENCH_CONTROLLER_CORE_FINDINGS_VIEW_H_
#define FLEETBENCH_CONTROLLER_CORE_FINDINGS_VIEW_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "diagnosis/fleet_rules.h"
#include "fleetbench/v1/finding.pb.h"
#include "fleetbench/v1/variance.pb.h"
#include "storage/store.h"

namespace fleetbench::controller {

class FindingsView {
 public:
  // `store` and `clock` must outlive the view. `findings_window`: how far
  // back peers and history are read unless a request says otherwise;
  // `fleet_rules`: the fleet rules' thresholds.
  FindingsView(storage::Store* store, Clock* clock, absl::Duration findings_window,
               diagnosis::FleetRuleOptions fleet_rules);

  absl::StatusOr<v1::ListFindingsResponse> ListFindings(const v1::ListFindingsRequest& request,
                                                        absl::Time deadline) const;
  absl::StatusOr<v1::VarianceResponse> Variance(const v1::VarianceRequest& request,
                                                absl::Time deadline) const;

 private:
  storage::Store* const store_;
  Clock* const clock_;
  const absl::Duration findings_window_;
  const diagnosis::FleetRuleOptions fleet_rules_;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_FINDINGS_VIEW_H_
