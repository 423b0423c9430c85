// agent/benchmarks/gpu/gpu_plugin.h — what the GPU plugins ("gpu_gemm",
// "pcie", "hbm") share: where to find the module and NVML, the probe, the
// per-run setup (module, chosen devices, NVML when present) and the params
// every GPU sample carries.
//
// NVML is optional for a run: without it samples lack the throttle and link
// params and say why in "nvml". The module is not: without it, or without a
// device, Probe() and Run() return FAILED_PRECONDITION with the reason.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_PLUGIN_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_PLUGIN_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/gpu/gpu_module_loader.h"
#include "common/gpu_skus.h"
#include "agent/facts/gpu_facts.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench::gpu {

struct GpuPluginOptions {
  GpuModuleOptions module;
  NvmlOptions nvml;
};
GpuPluginOptions DefaultGpuPluginOptions();

// Loads the module and asks for the device count: OK, or the reason the GPU
// plugins cannot run here.
absl::Status ProbeGpu(const GpuModuleOptions& options);

// One device chosen for a run, with what is known about it.
struct GpuTarget {
  GpuDeviceInfo info;
  const GpuSku* sku = nullptr;          // nullptr: not in the SKU table
  std::optional<unsigned> nvml_index;   // set when NVML knows the device
};

struct GpuRun {
  std::unique_ptr<GpuModule> module;
  std::vector<GpuTarget> targets;
  std::unique_ptr<Nvml> nvml;           // null when NVML is unusable
  std::string nvml_unavailable_reason;  // why, when null
};

// `devices` empty: every device. INVALID_ARGUMENT for an index the node
// does not have; FAILED_PRECONDITION as ProbeGpu.
absl::StatusOr<GpuRun> SetUpGpuRun(const GpuPluginOptions& options,
                                   const std::vector<int>& devices);

// gpu, gpu_name, gpu_pci_bus_id, compute_capability, cuda_runtime,
// cuda_driver, sku (when known), nvml (when unusable: the reason).
void AddGpuParams(const GpuRun& run, const GpuTarget& target,
                  v1::Sample* sample);

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_PLUGIN_H_
