// controller/core/rank_view.h — the ranking read: nodes or groups of them
// ranked by cost per unit of a metric or of a profile (controller/ranking/),
// and the cost of a given amount of work on each.
//
// Reads only the store, on the caller's thread (a gRPC worker), so a long
// query never stalls ingest on the actor; holds no state of its own beyond
// what it was built with, so any number of threads may call it at once.
// Whole UTC days come from the store's day summaries, the window's partial
// first day and days a catalog price change splits from the raw points
// (docs/ranking.md, Summaries).
//
// Errors: INVALID_ARGUMENT for a bad request; NOT_FOUND for a metric no
// agent declared (naming those that are); DEADLINE_EXCEEDED past the
// caller's deadline; store errors as the store returns them.
#ifndef FLEETBENCH_CONTROLLER_CORE_RANK_VIEW_H_
#define FLEETBENCH_CONTROLLER_CORE_RANK_VIEW_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "controller/ranking/ranking.h"
#include "fleetbench/v1/price.pb.h"
#include "fleetbench/v1/rank.pb.h"
#include "storage/store.h"

namespace fleetbench::controller {

class RankView {
 public:
  // `store` and `clock` must outlive the view. `rank_window`: how far back a
  // request without a window reads.
  RankView(storage::Store* store, Clock* clock, absl::Duration rank_window);

  absl::StatusOr<v1::RankResponse> Rank(const v1::RankRequest& request,
                                        absl::Time deadline) const;
  // How long and how much `work` units take on each group (Rank's grouping
  // and prices).
  absl::StatusOr<v1::CostResponse> Cost(const v1::CostRequest& request,
                                        absl::Time deadline) const;

 private:
  // Each node's values of `metric` since `since`, for ranking: whole UTC
  // days from the store's day summaries (O(nodes x days) rows), the
  // window's partial first day and any day that a catalog price change
  // splits for a catalog-priced node from the raw points. Nodes without
  // values are left out.
  absl::StatusOr<std::vector<NodeSeries>> MetricSeries(
      const std::string& metric, absl::Time since,
      const std::vector<storage::NodeRecord>& nodes, const RankPricing& pricing) const;
  absl::StatusOr<v1::RankResponse> RankProfile(const v1::RankRequest& request,
                                               const RankPricing& pricing, absl::Time since,
                                               absl::Time deadline) const;

  storage::Store* const store_;
  Clock* const clock_;
  const absl::Duration rank_window_;
};

// NOT_FOUND for a metric no agent declared, naming some that are: first
// those of the same plugin prefix (a typo), then the rest, capped. Any
// thread (reads the store's metric descriptors).
absl::Status UndeclaredMetric(storage::Store& store, const std::string& metric);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_RANK_VIEW_H_
