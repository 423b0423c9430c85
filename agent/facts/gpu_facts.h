// agent/facts/gpu_facts.h — what a node's GPUs are, and their live
// readings, through NVML loaded at run time.
//
// Owns: dlopen("libnvidia-ml.so.1") (the driver's copy; there is no nvml.h
// or link-time dependency, the entry points used are declared in
// nvml_api.h), nvmlInit_v2 / nvmlShutdown, and turning NVML's answers into
// v1::GpuFacts (proto/fleetbench/v1/gpu.proto). The binary links no NVIDIA
// library: on a node without a driver Open() fails with FAILED_PRECONDITION
// carrying dlerror()'s text, and the node reports GPU facts as absent with
// that reason (FillGpuFacts). The agent sends these facts at hello time;
// `probe` prints them; the GPU plugins read links, reasons, power and
// temperature through the same Nvml object while they measure. What the
// facts mean for a result (findings, SKU peaks) is judged above this layer,
// in agent/benchmarks/gpu/.
//
// Errors: every failed NVML call becomes a Status through one helper that
// names the call ("nvmlDeviceGetPowerUsage: Insufficient Permissions (nvml
// error 4)"). For facts, a call answered "not supported" leaves the fact
// absent; any other failure also lands in GpuFacts.unreadable; neither is
// fatal. Entry points missing from an old libnvidia-ml are tolerated the
// same way; only init, count and handle lookup are required.
//
// Thread safety: NVML is thread-safe and an Nvml object is immutable after
// Open(), so its methods may be called concurrently (the plugins' samplers,
// agent/benchmarks/gpu/gpu_samplers.h, do while a benchmark runs).
#ifndef FLEETBENCH_AGENT_FACTS_GPU_FACTS_H_
#define FLEETBENCH_AGENT_FACTS_GPU_FACTS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fleetbench/v1/facts.pb.h"
#include "fleetbench/v1/gpu.pb.h"

struct nvmlDevice_st;  // NVML's opaque device, declared as NVML does

namespace fleetbench::gpu {

struct NvmlOptions {
  // What to dlopen: a file name searched the usual way, or a path.
  std::string library = "libnvidia-ml.so.1";
};
// The library named by $FLEETBENCH_NVML_LIBRARY when set (tests point it at
// tests/fake_nvml), else libnvidia-ml.so.1.
NvmlOptions DefaultNvmlOptions();

struct PcieLinkState {
  int gen_current = 0;
  int width_current = 0;
  int gen_max = 0;
  int width_max = 0;
};

class Nvml {
 public:
  // dlopen + symbol lookup + nvmlInit_v2. FAILED_PRECONDITION when the
  // library is absent or NVML cannot initialise (no driver loaded).
  static absl::StatusOr<std::unique_ptr<Nvml>> Open(const NvmlOptions& options);
  ~Nvml();  // nvmlShutdown, then dlclose
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  absl::StatusOr<unsigned> DeviceCount() const;
  // One GpuFacts per device, NVML index order. Fails only when the device
  // list itself cannot be read.
  absl::StatusOr<std::vector<v1::GpuFacts>> ReadFacts() const;
  absl::StatusOr<v1::GpuFacts> ReadDeviceFacts(unsigned index) const;

  // NVML index of the device at this PCI address (either spelling, see
  // ParsePciAddress in gpu_values.h); NOT_FOUND when none.
  absl::StatusOr<unsigned> IndexOfPciBusId(absl::string_view bus_id) const;
  absl::StatusOr<PcieLinkState> ReadPcieLink(unsigned index) const;
  // The clock event reason bitmask now (gpu_values.h names the bits).
  absl::StatusOr<uint64_t> ReadClockEventReasons(unsigned index) const;
  // Board power draw now, W; GPU temperature now, C.
  absl::StatusOr<double> ReadPowerWatts(unsigned index) const;
  absl::StatusOr<unsigned> ReadTemperatureC(unsigned index) const;

  struct EntryPoints;  // defined in gpu_facts.cc

 private:
  Nvml(void* handle, std::unique_ptr<EntryPoints> api);
  absl::StatusOr<::nvmlDevice_st*> Handle(unsigned index) const;

  void* handle_;
  std::unique_ptr<EntryPoints> api_;
};

// Open(DefaultNvmlOptions()) and ReadFacts().
absl::StatusOr<std::vector<v1::GpuFacts>> ReadGpuFacts(
    const NvmlOptions& options = DefaultNvmlOptions());

// Fills facts->gpus, or facts->gpu_unavailable_reason with the status
// message when NVML is unusable (the reason a CPU node gives). Never fails.
void FillGpuFacts(v1::NodeFacts* facts,
                  const NvmlOptions& options = DefaultNvmlOptions());

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_FACTS_GPU_FACTS_H_
