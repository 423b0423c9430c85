// controller/core/exposition_view.h — what /metrics reports of the history
// (controller/http/metrics_page.h): per node and declared metric measured
// within the rank window, the samples of the newest run that measured it
// there, with every declared metric's descriptor (removed nodes left out);
// and how many stored runs are in each state.
//
// Reads only the store, on the caller's thread: one ranking scan per
// metric and one read of each run that is some node's newest; one scan of
// the runs. No state of its own. DEADLINE_EXCEEDED past the caller's
// deadline; store errors as the store returns them.
#ifndef FLEETBENCH_CONTROLLER_CORE_EXPOSITION_VIEW_H_
#define FLEETBENCH_CONTROLLER_CORE_EXPOSITION_VIEW_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "fleetbench/v1/metric.pb.h"
#include "fleetbench/v1/result.pb.h"
#include "storage/store.h"

namespace fleetbench::controller {

struct LatestMeasurements {
  std::vector<v1::MetricDescriptor> metrics;
  std::vector<v1::Sample> samples;
};

class ExpositionView {
 public:
  // `store` and `clock` must outlive the view.
  ExpositionView(storage::Store* store, Clock* clock, absl::Duration rank_window);

  absl::StatusOr<LatestMeasurements> LatestSamples(absl::Time deadline) const;
  absl::StatusOr<std::map<std::string, int64_t>> CountRunsByState(absl::Time deadline) const;

 private:
  storage::Store* const store_;
  Clock* const clock_;
  const absl::Duration rank_window_;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_EXPOSITION_VIEW_H_
