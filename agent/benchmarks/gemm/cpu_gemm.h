// agent/benchmarks/gemm/cpu_gemm.h — "gemm", CPU part: dense matrix multiply
// throughput through OpenBLAS.
//
// What it measures: C = A·B for square n×n matrices (row-major, alpha 1,
// beta 0) with cblas_sgemm (fp32) or cblas_dgemm (fp64). Each call is timed
// on its own with a steady clock after warm-up calls that are not counted;
// the reported value is the median TFLOP/s (2·n³ / seconds / 10^12) of the
// timed calls, with min/max/p10/p90 and spread in the sample's params.
// Metric names are gemm.cpu.<dtype>.tflops; a GPU part of "gemm" will add
// gemm.gpu.* metrics under the same permanent plugin name.
//
// Parameters (all strings; ValidateParams explains any bad one):
//   dtypes       comma list of fp32, fp64            default "fp32,fp64"
//   sizes        comma list of n, each 16..32768     default "4096"
//   threads      OpenBLAS threads, 1..1024           default online cores
//   min_seconds  timed total per case, 0.01..600     default 2
//   max_runs     timed calls per case, 1..100000     default 50
//   warmup_runs  untimed calls per case, 0..1000     default 1
//
// Thread safety: OpenBLAS's thread count is process-wide; Run() sets it and
// puts the previous value back before returning, so it must not overlap
// other OpenBLAS users in the process (the runner runs one benchmark at a
// time). Cancellation is checked between BLAS calls: one call is never
// interrupted, so at n = 32768 a cancel can take a minute to be seen.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GEMM_CPU_GEMM_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GEMM_CPU_GEMM_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench::agent {

// The parsed, range-checked form of the "gemm" parameters.
struct CpuGemmConfig {
  std::vector<std::string> dtypes;  // "fp32" / "fp64", in the order given
  std::vector<int> sizes;           // in the order given
  int threads = 1;
  double min_seconds = 2;
  int max_runs = 50;
  int warmup_runs = 1;
};

// Fills defaults for absent keys; INVALID_ARGUMENT naming the parameter and
// the offending text for anything else, unknown keys included.
absl::StatusOr<CpuGemmConfig> ParseCpuGemmParams(const Params& params);

class CpuGemmBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "gemm"; }
  // OK when OpenBLAS loads (openblas_library.h); else the reason.
  absl::Status Probe() const override;
  std::vector<MetricInfo> metrics() const override;
  absl::Status ValidateParams(const Params& params) const override;
  // One sample per (dtype, size), dtypes outer. RESOURCE_EXHAUSTED before
  // anything runs when the matrices would not fit in physical memory.
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const Params& params, const RunContext& context) override;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GEMM_CPU_GEMM_H_
