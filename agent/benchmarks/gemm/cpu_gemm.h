// agent/benchmarks/gemm/cpu_gemm.h — "gemm", CPU part: dense matrix multiply
// throughput through OpenBLAS.
//
// What it measures: C = op(A)·op(B), op(A) m×k, op(B) k×n, row-major, alpha
// 1, beta 0, with cblas_sgemm (fp32), cblas_dgemm (fp64), cblas_sbgemm (bf16
// A and B into an fp32 C) or cblas_shgemm (fp16 into fp32) — the last two
// only where this OpenBLAS exports them (openblas_library.h); asked for on
// one that does not, the run is skipped (FAILED_PRECONDITION) with the
// reason before anything is measured. Square sizes (m = n = k), one m, n, k,
// or a list of shapes, each with its own transposes; op() is the identity
// (N) or the transpose (T). Each call is timed
// on its own with a steady clock after warm-up calls that are not counted;
// the reported value is the median TFLOP/s (2·n³ / seconds / 10^12) of the
// timed calls, with min/max/p10/p90 and spread in the sample's params.
// (FLOPs: 2·m·n·k.) Metric names are gemm.cpu.<dtype>.tflops.
//
// Parameters (all strings; ValidateParams explains any bad one):
//   dtypes       comma list of fp32, fp64, bf16, fp16  default "fp32,fp64"
//   sizes        comma list of n, each 16..32768     default "4096"
//   m, n, k      one shape, each 1..1048576, all three or none; not with sizes
//   transa       N or T: A stored m×k, or k×m and transposed   default N
//   transb       N or T: B stored k×n, or n×k and transposed   default N
//   shapes       comma list of MxNxK[:AB] (A, B: transa, transb; default NN),
//                e.g. 4096x1024x256,1024x3000x512:TN; at most 16, no case
//                twice; not with sizes, m, n, k, transa or transb
// A shape's three matrices hold at most 3·32768² elements (what the largest
// square size has); whether they fit in this node's memory is checked at Run.
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

// One case: C (m×n) = op(A)·op(B), op(A) m×k, op(B) k×n.
struct GemmShape {
  int m = 0, n = 0, k = 0;
  bool transa = false, transb = false;
  friend bool operator==(const GemmShape&, const GemmShape&) = default;
};

// The most entries `shapes` takes: each is a timed case per dtype.
inline constexpr int kMaxGemmShapes = 16;

// The parsed, range-checked form of the "gemm" parameters.
struct CpuGemmConfig {
  std::vector<std::string> dtypes;  // "fp32", "fp64", "bf16", "fp16", in order
  std::vector<int> sizes;           // in the order given; empty otherwise
  int m = 0, n = 0, k = 0;          // one shape; 0: sizes or shapes instead
  bool transa = false, transb = false;
  std::vector<GemmShape> shapes;    // the `shapes` list, in the order given
  int threads = 1;
  double min_seconds = 2;
  int max_runs = 50;
  int warmup_runs = 1;
};

// Fills defaults for absent keys; INVALID_ARGUMENT naming the parameter and
// the offending text for anything else, unknown keys included.
absl::StatusOr<CpuGemmConfig> ParseCpuGemmParams(const Params& params);

struct OpenBlasLibrary;
// OK when `blas` has a GEMM for every dtype; FAILED_PRECONDITION naming the
// missing entry point and the library's build otherwise.
absl::Status CheckHalfPrecision(const OpenBlasLibrary& blas,
                                const std::vector<std::string>& dtypes);

class CpuGemmBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "gemm"; }
  // OK when OpenBLAS loads (openblas_library.h); else the reason.
  absl::Status Probe() const override;
  std::vector<MetricInfo> metrics() const override;
  absl::Status ValidateParams(const Params& params) const override;
  // One sample per (dtype, shape), dtypes outer. RESOURCE_EXHAUSTED before
  // anything runs when the matrices would not fit in physical memory.
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const Params& params, const RunContext& context) override;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GEMM_CPU_GEMM_H_
