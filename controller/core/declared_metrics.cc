// DeclaredMetrics: the metric descriptors agents declare, stored once.
#include "controller/core/declared_metrics.h"

#include <utility>
#include <vector>

#include "common/logging.h"
#include "google/protobuf/util/message_differencer.h"

namespace fleetbench::controller {

absl::Status DeclaredMetrics::Load() {
  auto declared = store_->ListMetricDescriptors();
  if (!declared.ok()) return declared.status();
  for (v1::MetricDescriptor& d : *declared) {
    const std::string name = d.name();
    stored_[name] = std::move(d);
  }
  return absl::OkStatus();
}

void DeclaredMetrics::Declare(const v1::Hello& hello) {
  std::vector<v1::MetricDescriptor> declared;
  for (const v1::Capability& capability : hello.capabilities()) {
    for (v1::MetricDescriptor d : capability.metrics()) {
      if (d.benchmark().empty()) d.set_benchmark(capability.benchmark());
      declared.push_back(std::move(d));
    }
  }
  StoreChanged(hello.name(), std::move(declared));
}

void DeclaredMetrics::DeclareAtRunTime(const std::string& node,
                                       const std::vector<v1::MetricDescriptor>& metrics) {
  std::vector<v1::MetricDescriptor> kept;
  for (const v1::MetricDescriptor& d : metrics) {
    auto stored = stored_.find(d.name());
    // A unit or direction a name already has stands: two nodes whose
    // workloads print the same name in different units would otherwise
    // flip the declaration back and forth. (Their samples are still
    // stored, each with its own unit; rank reads the declared one.)
    if (stored != stored_.end() && (stored->second.unit() != d.unit() ||
                                    stored->second.direction() != d.direction())) {
      if (conflicts_logged_.insert(d.name()).second) {
        LOG(WARNING) << "node " << node << " declares metric " << d.name() << " in "
                     << d.unit() << " but it is stored in " << stored->second.unit()
                     << " (direction " << stored->second.direction() << " against "
                     << d.direction() << "); the first declaration stands (logged once)";
      }
      continue;
    }
    kept.push_back(d);
  }
  StoreChanged(node, std::move(kept));
}

void DeclaredMetrics::StoreChanged(const std::string& node,
                                   std::vector<v1::MetricDescriptor> declared) {
  std::vector<v1::MetricDescriptor> changed;
  for (v1::MetricDescriptor& d : declared) {
    auto stored = stored_.find(d.name());
    if (stored != stored_.end() &&
        google::protobuf::util::MessageDifferencer::Equals(stored->second, d)) {
      continue;
    }
    changed.push_back(std::move(d));
  }
  if (changed.empty()) return;
  if (absl::Status s = store_->UpsertMetricDescriptors(changed); !s.ok()) {
    if (!failure_logged_) {
      LOG(ERROR) << "storing the metrics declared by node " << node
                 << " (ranking keeps the previous declarations; logged once): " << s;
      failure_logged_ = true;
    }
    return;
  }
  failure_logged_ = false;
  for (v1::MetricDescriptor& d : changed) {
    const std::string name = d.name();
    stored_[name] = std::move(d);
  }
}

}  // namespace fleetbench::controller
