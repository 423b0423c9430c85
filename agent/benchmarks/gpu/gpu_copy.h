// agent/benchmarks/gpu/gpu_copy.h — copy bandwidth plugins: one class,
// GpuCopyBenchmark, registered once per table entry (GpuCopyPlugin).
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
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/gpu/gpu_plugin.h"
#include "kernels/gpu_module_api.h"

namespace fleetbench::gpu {

// One direction a copy plugin measures: one module copy() per GPU, one
// sample of its metric. The plugin's metrics() lists its directions'.
struct GpuCopyDirection {
  FleetbenchGpuCopyKind kind;
  agent::MetricInfo metric;     // "pcie.h2d.GBps", GBps, higher is better
  const char* label;            // the sample's "direction" param: "h2d"
  double bytes_moved_per_byte;  // 2 for device-local copies (read + write)
};

// What a copy plugin's samples are compared with.
enum class GpuCopyReference {
  // The PCIe link NVML reports right after the copies: pcie_link,
  // pcie_link_max, link_GBps, pct_of_link.
  kPcieLink,
  // The SKU's datasheet memory bandwidth: peak_GBps, pct_of_peak.
  kSkuMemoryBandwidth,
};

// Everything one copy plugin is: what "pcie" and "hbm" differ in.
// GpuCopyBenchmark keeps a pointer to its entry, which must outlive it (the
// two below are static).
struct GpuCopyPlugin {
  const char* name;    // the plugin name, a permanent key
  const char* method;  // the samples' "method" param
  int default_size_mib;
  int default_copies_per_trial;
  absl::Span<const GpuCopyDirection> directions;  // measured in this order
  GpuCopyReference reference;
};

// The two entries registered (gpu_benchmarks.cc).
extern const GpuCopyPlugin kPcieCopyPlugin;  // "pcie": h2d, d2h
extern const GpuCopyPlugin kHbmCopyPlugin;   // "hbm": d2d

struct GpuCopyConfig {
  int size_mib = 256;
  std::vector<int> devices;  // empty: all
  int trials = 20;
  int warmup_copies = 2;
  int copies_per_trial = 1;
};

// The parameters above, with `plugin`'s defaults; errors name the plugin.
absl::StatusOr<GpuCopyConfig> ParseGpuCopyParams(const GpuCopyPlugin& plugin,
                                                 const agent::Params& params);

class GpuCopyBenchmark final : public agent::Benchmark {
 public:
  explicit GpuCopyBenchmark(
      const GpuCopyPlugin& plugin,
      GpuPluginOptions options = DefaultGpuPluginOptions())
      : plugin_(&plugin), options_(std::move(options)) {}
  std::string name() const override { return plugin_->name; }
  absl::Status Probe() const override { return ProbeGpu(options_.module); }
  std::vector<agent::MetricInfo> metrics() const override;
  absl::Status ValidateParams(const agent::Params& params) const override {
    return ParseGpuCopyParams(*plugin_, params).status();
  }
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const agent::Params& params, const agent::RunContext& context) override;

 private:
  const GpuCopyPlugin* plugin_;  // a static table entry
  GpuPluginOptions options_;
};

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_COPY_H_
