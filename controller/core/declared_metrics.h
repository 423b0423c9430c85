// controller/core/declared_metrics.h — the metric descriptors agents
// declare in their hellos (unit, direction, description, benchmark), as the
// store holds them; rank takes a metric's unit and direction from there.
//
// Keeps a copy of what is stored so that a reconnecting fleet writes
// nothing: a hello stores only descriptors that differ from the stored
// ones, and the newest declaration of a name wins. A failed write is
// logged once (until one succeeds again) and the hello goes on: ranking
// keeps the previous declarations.
//
// Threading: the core's actor thread only.
#ifndef FLEETBENCH_CONTROLLER_CORE_DECLARED_METRICS_H_
#define FLEETBENCH_CONTROLLER_CORE_DECLARED_METRICS_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fleetbench/v1/agent.pb.h"
#include "storage/store.h"

namespace fleetbench::controller {

class DeclaredMetrics {
 public:
  // `store` must outlive this.
  explicit DeclaredMetrics(storage::Store* store) : store_(store) {}

  // Reads what the store holds (at start).
  absl::Status Load();
  // Stores what `hello` declares that differs from the stored descriptors.
  void Declare(const v1::Hello& hello);
  // The same for metrics a benchmark declared as it ran (Report.metrics: a
  // workload's own), from node `node`; the caller checked that the node's
  // capability allows their names. A name already stored keeps its unit
  // and direction: a declaration that changes either is dropped (logged
  // once per name); its description may change.
  void DeclareAtRunTime(const std::string& node,
                        const std::vector<v1::MetricDescriptor>& metrics);

  const std::map<std::string, v1::MetricDescriptor>& stored() const { return stored_; }

 private:
  // Stores those of `declared` that differ from the stored ones.
  void StoreChanged(const std::string& node, std::vector<v1::MetricDescriptor> declared);

  storage::Store* const store_;
  std::map<std::string, v1::MetricDescriptor> stored_;
  bool failure_logged_ = false;
  std::set<std::string> conflicts_logged_;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_DECLARED_METRICS_H_
