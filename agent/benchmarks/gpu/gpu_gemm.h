// agent/benchmarks/gpu/gpu_gemm.h — "gpu_gemm": dense matrix multiply
// throughput on each GPU through cuBLASLt.
//
// What it measures: D = A·B for square n×n matrices per dtype (fp64, tf32,
// fp16, bf16, fp8; see kernels/gemm_cublaslt.h for the exact cuBLASLt
// setup), timed with CUDA events over trials of back-to-back products after
// warm-up. Per trial TFLOP/s = 2·n³·products / seconds / 10^12; the sample's
// value is the median over trials, with min/max/p10/p90 and spread in the
// params. Metric names: gemm.gpu.<dtype>.tflops, one sample per (device,
// dtype, size). When the board is in the SKU table (gpu_skus.h) the sample
// carries peak_tflops and pct_of_peak; when NVML is present, the share of
// the run during which clocks were held back for power or heat
// (throttle_fraction) and the reasons seen.
//
// Parameters (all strings; ValidateParams explains any bad one):
//   dtypes              comma list of fp64,tf32,fp16,bf16,fp8
//                       default: every dtype the device supports
//   sizes               comma list of n, multiples of 16 in 256..32768
//                       default "8192"
//   devices             "all" or comma list of CUDA indices; default "all"
//   trials              timed trials per case, 3..1000        default 10
//   warmup_products     untimed products first, 0..1000       default 3
//   products_per_trial  1..10000, or 0 = about trial_seconds  default 0
//   trial_seconds       target length of one trial, 0.01..60  default 0.25
//   workspace_mib       cuBLASLt workspace, 0..1024           default 32
//
// Thread safety: one Run() at a time (the runner's guarantee). Cancellation
// is checked between trials.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_GEMM_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_GEMM_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/gpu/gpu_plugin.h"

namespace fleetbench::gpu {

struct GpuGemmConfig {
  std::vector<std::string> dtypes;  // empty: every dtype the device can do
  std::vector<int> sizes;
  std::vector<int> devices;         // empty: all
  int trials = 10;
  int warmup_products = 3;
  int products_per_trial = 0;
  double trial_seconds = 0.25;
  int workspace_mib = 32;
};

absl::StatusOr<GpuGemmConfig> ParseGpuGemmParams(const agent::Params& params);

// The GEMM dtypes a device of this compute capability can run, in the
// plugin's order: fp64, fp16 always; tf32, bf16 from 8.0; fp8 from 8.9.
std::vector<std::string> SupportedGemmDtypes(int major, int minor);

class GpuGemmBenchmark final : public agent::Benchmark {
 public:
  explicit GpuGemmBenchmark(GpuPluginOptions options = DefaultGpuPluginOptions())
      : options_(std::move(options)) {}
  std::string name() const override { return "gpu_gemm"; }
  absl::Status Probe() const override { return ProbeGpu(options_.module); }
  std::vector<agent::MetricInfo> metrics() const override;
  absl::Status ValidateParams(const agent::Params& params) const override {
    return ParseGpuGemmParams(params).status();
  }
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const agent::Params& params, const agent::RunContext& context) override;

 private:
  GpuPluginOptions options_;
};

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_GEMM_H_
