#include "agent/benchmarks/gpu/gpu_plugin.h"

#include <dlfcn.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/gpu_values.h"

namespace fleetbench::gpu {

GpuPluginOptions DefaultGpuPluginOptions() {
  return GpuPluginOptions{DefaultGpuModuleOptions(), DefaultNvmlOptions()};
}

absl::Status ProbeGpu(const GpuModuleOptions& options) {
  // Look for the driver before loading the module: the module pulls in
  // cuBLASLt and the CUDA runtime (some 150 MB resident once loaded), which
  // an agent on a CPU node would otherwise carry for nothing.
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("no NVIDIA driver: ", why ? why : "libcuda.so.1 not found"));
  }
  dlclose(driver);
  absl::StatusOr<std::unique_ptr<GpuModule>> module = GpuModule::Load(options);
  if (!module.ok()) return module.status();
  return (*module)->DeviceCount().status();
}

absl::StatusOr<GpuRun> SetUpGpuRun(const GpuPluginOptions& options,
                                   const std::vector<int>& devices) {
  GpuRun run;
  absl::StatusOr<std::unique_ptr<GpuModule>> module =
      GpuModule::Load(options.module);
  if (!module.ok()) return module.status();
  run.module = *std::move(module);
  absl::StatusOr<int> count = run.module->DeviceCount();
  if (!count.ok()) return count.status();

  std::vector<int> chosen = devices;
  if (chosen.empty()) {
    for (int i = 0; i < *count; ++i) chosen.push_back(i);
  }
  for (int index : chosen) {
    if (index >= *count) {
      return absl::InvalidArgumentError(absl::StrCat(
          "devices: this node has ", *count, " GPU(s), numbered 0..",
          *count - 1, "; there is no device ", index));
    }
  }

  absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Open(options.nvml);
  if (nvml.ok()) {
    run.nvml = *std::move(nvml);
  } else {
    run.nvml_unavailable_reason = std::string(nvml.status().message());
  }

  for (int index : chosen) {
    absl::StatusOr<GpuDeviceInfo> info = run.module->DeviceInfo(index);
    if (!info.ok()) return info.status();
    GpuTarget target;
    target.info = *std::move(info);
    target.sku = FindGpuSku(target.info.name);
    if (run.nvml != nullptr) {
      // CUDA and NVML may number devices differently (CUDA_VISIBLE_DEVICES,
      // CUDA_DEVICE_ORDER); the PCI address is what they agree on.
      absl::StatusOr<unsigned> nvml_index =
          run.nvml->IndexOfPciBusId(target.info.pci_bus_id);
      if (nvml_index.ok()) target.nvml_index = *nvml_index;
    }
    run.targets.push_back(std::move(target));
  }
  return run;
}

void AddGpuParams(const GpuRun& run, const GpuTarget& target,
                  v1::Sample* sample) {
  auto& p = *sample->mutable_params();
  p["gpu"] = absl::StrCat(target.info.index);
  p["gpu_name"] = target.info.name;
  p["gpu_pci_bus_id"] = target.info.pci_bus_id;
  p["compute_capability"] =
      absl::StrCat(target.info.compute_major, ".", target.info.compute_minor);
  p["cuda_runtime"] = FormatCudaVersion(target.info.runtime_version);
  p["cuda_driver"] = FormatCudaVersion(target.info.driver_version);
  p["gpu_module"] = run.module->build_info();
  if (target.sku != nullptr) p["sku"] = target.sku->label;
  if (run.nvml == nullptr) {
    p["nvml"] = absl::StrCat("unavailable: ", run.nvml_unavailable_reason);
  } else if (!target.nvml_index.has_value()) {
    p["nvml"] = "device not found by PCI address";
  }
}

}  // namespace fleetbench::gpu
