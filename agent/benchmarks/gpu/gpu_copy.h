// agent/benchmarks/gpu/gpu_copy.h — copy bandwidth plugins.
//
// "pcie": host<->device copies of one pinned buffer (cudaMemcpyAsync,
// kernels/copy_timing.h), host-to-device then device-to-host, per GPU.
// Per trial GB/s = bytes·copies / seconds / 10^9; the value is the median
// over trials. Metrics pcie.h2d.GBps and pcie.d2h.GBps. With NVML, each
// sample also carries the link as read right after its copies
// (pcie_link "Gen4 x16", pcie_link_max), its theoretical one-direction rate
// (link_GBps, gpu_math.h's PcieTheoreticalGBps) and pct_of_link.
//
// "hbm": device-to-device copies within one GPU. Every byte is read once
// and written once, so GB/s counts 2·bytes per copy (as BabelStream's Copy
// and nvbandwidth's device-local copy do). Metric gpu.mem.GBps; with a known
// SKU, pct_of_peak against its datasheet memory bandwidth. cudaMemcpy is not
// the fastest possible copy kernel: expect roughly 80-90% of the datasheet.
//
// Parameters (all strings; ValidateParams explains any bad one):
//   size_mib          bytes per copy in MiB, 1..16384  default 256 (pcie),
//                                                       1024 (hbm)
//   devices           "all" or comma list of CUDA indices; default "all"
//   trials            timed trials, 3..1000             default 20
//   warmup_copies     untimed copies first, 0..100      default 2
//   copies_per_trial  1..100                            default 1 (pcie),
//                                                       5 (hbm)
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_COPY_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_COPY_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/gpu/gpu_plugin.h"

namespace fleetbench::gpu {

struct GpuCopyConfig {
  int size_mib = 256;
  std::vector<int> devices;  // empty: all
  int trials = 20;
  int warmup_copies = 2;
  int copies_per_trial = 1;
};

// Defaults differ per plugin: pass "pcie" or "hbm".
absl::StatusOr<GpuCopyConfig> ParseGpuCopyParams(const std::string& plugin,
                                                 const agent::Params& params);

class PcieBenchmark final : public agent::Benchmark {
 public:
  explicit PcieBenchmark(GpuPluginOptions options = DefaultGpuPluginOptions())
      : options_(std::move(options)) {}
  std::string name() const override { return "pcie"; }
  absl::Status Probe() const override { return ProbeGpu(options_.module); }
  absl::Status ValidateParams(const agent::Params& params) const override {
    return ParseGpuCopyParams(name(), params).status();
  }
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const agent::Params& params, const agent::RunContext& context) override;

 private:
  GpuPluginOptions options_;
};

class HbmBenchmark final : public agent::Benchmark {
 public:
  explicit HbmBenchmark(GpuPluginOptions options = DefaultGpuPluginOptions())
      : options_(std::move(options)) {}
  std::string name() const override { return "hbm"; }
  absl::Status Probe() const override { return ProbeGpu(options_.module); }
  absl::Status ValidateParams(const agent::Params& params) const override {
    return ParseGpuCopyParams(name(), params).status();
  }
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const agent::Params& params, const agent::RunContext& context) override;

 private:
  GpuPluginOptions options_;
};

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_COPY_H_
