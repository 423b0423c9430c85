// common/metrics.h — the one table of metric names, units and directions.
// Names are dotted with the unit last (gemm.cpu.fp32.tflops); docs/metrics.md
// mirrors this table. Ranking reads the direction from here.
#ifndef FLEETBENCH_COMMON_METRICS_H_
#define FLEETBENCH_COMMON_METRICS_H_

#include <string>
#include <vector>

namespace fleetbench {

struct MetricInfo {
  const char* name;
  const char* unit;
  bool higher_is_better;
  const char* description;
};

const std::vector<MetricInfo>& AllMetrics();
// nullptr when the metric is not in the table.
const MetricInfo* FindMetric(const std::string& name);
// The unit is the last dotted component of a metric name.
std::string UnitOfMetricName(const std::string& name);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_METRICS_H_
