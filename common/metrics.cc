#include "common/metrics.h"

namespace fleetbench {

const std::vector<MetricInfo>& AllMetrics() {
  static const std::vector<MetricInfo> kMetrics = {
      {"gemm.cpu.fp32.tflops", "tflops", true,
       "CPU single-precision GEMM (OpenBLAS sgemm), median over repetitions"},
      {"gemm.cpu.fp64.tflops", "tflops", true,
       "CPU double-precision GEMM (OpenBLAS dgemm), median over repetitions"},
  };
  return kMetrics;
}

const MetricInfo* FindMetric(const std::string& name) {
  for (const MetricInfo& m : AllMetrics()) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

std::string UnitOfMetricName(const std::string& name) {
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? std::string() : name.substr(dot + 1);
}

}  // namespace fleetbench
