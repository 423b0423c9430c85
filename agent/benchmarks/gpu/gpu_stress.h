// agent/benchmarks/gpu/gpu_stress.h — "stress": sustained GEMM on every
// GPU at once, to see what a board keeps up after its boost runs out.
//
// What it does: one thread per GPU runs the module's stress_gemm (the same
// n×n×n product, bf16 8192³ by default, in ~0.1 s batches timed by CUDA
// events) for `seconds` of wall time, while an NVML TelemetrySampler
// reads clock event reasons, power and temperature every 250 ms. Every
// check_every products the module hashes D; since the product never
// changes, a hash that differs from the first one means the GPU computed
// a wrong answer: the GPU is faulty (stress.gpu.faulty.count = 1) and the
// run FAILS (DATA_LOSS) naming it; the samples are kept all the same
// (RunContext::KeepSamples), as the evidence.
//
// Samples per GPU (stress_math.h does the arithmetic):
//   stress.gpu.sustained.tflops      mean of the last half of the 1 s series
//                                    (params: series_tflops, cv, burst, ...,
//                                    power draw vs enforced/default limits,
//                                    ECC deltas, checksum checks)
//   stress.gpu.burst.tflops          mean of the first burst_seconds (5 s)
//   stress.gpu.throttle_fraction.ratio  share of NVML samples with a power or
//                                    thermal reason; throttle_<reason> params
//   stress.gpu.first_throttle.s      seconds to the first such sample; the
//                                    whole run (throttled=no) when none
//   stress.gpu.max_temp.C            hottest reading; slowdown threshold
//   stress.gpu.faulty.count          1 when a checksum differed, else 0
// The NVML-based ones are absent when NVML is unusable (param nvml says why).
//
// Parameters:
//   profile        quick (60 s) or full (300 s)            default quick
//   seconds        overrides the profile, 5..3600
//   dtype          fp64, tf32, fp16, bf16                  default bf16
//   size           n, multiple of 16 in 256..32768         default 8192
//   devices        "all" or comma list                     default all
//   check_every    products between checksums, 1..100000   default 100
//   burst_seconds  1..60                                   default 5
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_STRESS_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_STRESS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/gpu/gpu_plugin.h"
#include "agent/benchmarks/gpu/stress_math.h"

namespace fleetbench::gpu {

struct StressConfig {
  double seconds = 60;
  std::string dtype = "bf16";
  int size = 8192;
  std::vector<int> devices;
  int check_every = 100;
  double burst_seconds = 5;
  double interval_seconds = 1;
};

absl::StatusOr<StressConfig> ParseStressParams(const agent::Params& params);

// What one GPU's stress run produced, before it becomes samples.
struct StressOutcome {
  double seconds = 0;                    // wall time asked for
  double flops_per_product = 0;
  std::vector<StressBatch> batches;
  uint64_t reference_checksum = 0;
  std::string algorithm;
  bool has_telemetry = false;
  std::vector<TelemetrySample> telemetry;
  std::optional<v1::GpuFacts> facts_before, facts_after;
};

// The samples of one GPU (without the shared GPU params) and, when the
// checksums disagree, the reason the run fails (empty otherwise).
struct StressSamplesForGpu {
  std::vector<v1::Sample> samples;
  std::string faulty_reason;
};
StressSamplesForGpu StressSamples(const StressConfig& config,
                                  const StressOutcome& outcome);

class StressBenchmark final : public agent::Benchmark {
 public:
  explicit StressBenchmark(GpuPluginOptions options = DefaultGpuPluginOptions())
      : options_(std::move(options)) {}
  std::string name() const override { return "stress"; }
  absl::Status Probe() const override { return ProbeGpu(options_.module); }
  std::vector<agent::MetricInfo> metrics() const override;
  absl::Status ValidateParams(const agent::Params& params) const override {
    return ParseStressParams(params).status();
  }
  // The run lasts `seconds` (up to an hour) by design: the default allows
  // that plus ten minutes for module load, warm-up and checksums.
  absl::Duration DefaultTimeout(const agent::Params& params) const override;
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const agent::Params& params, const agent::RunContext& context) override;

 private:
  GpuPluginOptions options_;
};

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_STRESS_H_
