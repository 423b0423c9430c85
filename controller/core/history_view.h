// controller/core/history_view.h — the stored history as users page
// through it: runs newest first, one node's samples of one metric, and a
// node's facts as they changed.
//
// Reads only the store, on the caller's thread; no state of its own, so
// any number of threads may call it at once. Pages end at the asked size
// or at a byte budget (common/wire_limits.h), whichever comes first, with
// at least one item; page tokens are opaque (controller/core/page_tokens.h).
//
// Errors: INVALID_ARGUMENT for a missing name or a bad page token;
// NOT_FOUND as the store returns it; DEADLINE_EXCEEDED past the caller's
// deadline.
#ifndef FLEETBENCH_CONTROLLER_CORE_HISTORY_VIEW_H_
#define FLEETBENCH_CONTROLLER_CORE_HISTORY_VIEW_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fleetbench/v1/history.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "storage/store.h"

namespace fleetbench::controller {

class HistoryView {
 public:
  // `store` must outlive the view.
  explicit HistoryView(storage::Store* store);

  // Newest first, a page at a time.
  absl::StatusOr<v1::ListRunsResponse> ListRuns(const v1::ListRunsRequest& request,
                                                absl::Time deadline) const;
  absl::StatusOr<v1::HistoryResponse> History(const v1::HistoryRequest& request,
                                              absl::Time deadline) const;
  // A node's facts as they changed, newest first, at most `limit` versions
  // (clamped to 1..1000).
  absl::StatusOr<std::vector<storage::FactsVersion>> FactsHistory(const std::string& node,
                                                                   int limit,
                                                                   absl::Time deadline) const;

 private:
  storage::Store* const store_;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_HISTORY_VIEW_H_
