#include "agent/benchmarks/workload_output/workload_metric.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "agent/benchmarks/workload_output/json_object.h"

namespace fleetbench::agent {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

absl::Status CheckWorkloadMetric(const WorkloadMetric& metric) {
  const std::string& name = metric.name;
  if (name.empty() || name.size() > kMaxWorkloadMetricNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "field \"name\" must be 1 to ", kMaxWorkloadMetricNameBytes,
        " characters, got ", name.size()));
  }
  for (char c : name) {
    if (!IsNameChar(c)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "field \"name\" ", QuoteForError(name),
          " may hold only lowercase letters, digits and '_' ([a-z0-9_])"));
    }
  }
  if (!std::isfinite(metric.value)) {
    return absl::InvalidArgumentError("field \"value\" is not a finite number");
  }
  const std::string& unit = metric.unit;
  if (unit.empty() || unit.size() > kMaxWorkloadMetricUnitBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "field \"unit\" must be 1 to ", kMaxWorkloadMetricUnitBytes,
        " characters, got ", unit.size()));
  }
  if (!IsShortPrintableText(unit)) {
    return absl::InvalidArgumentError(
        absl::StrCat("field \"unit\" ", QuoteForError(unit),
                     " may hold only printable ASCII characters"));
  }
  if (metric.direction != v1::METRIC_DIRECTION_HIGHER_IS_BETTER &&
      metric.direction != v1::METRIC_DIRECTION_LOWER_IS_BETTER) {
    return absl::InvalidArgumentError(
        "field \"direction\" must be \"higher\" or \"lower\"");
  }
  return absl::OkStatus();
}

bool IsShortPrintableText(absl::string_view text) {
  if (text.empty() || text.size() > kMaxWorkloadMetricUnitBytes) return false;
  for (char c : text) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

}  // namespace fleetbench::agent
