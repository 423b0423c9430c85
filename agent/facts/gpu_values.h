// agent/facts/gpu_values.h — the values a GPU's facts and readings are
// reported in, decoded: NVML's clock event reason bits and their names, PCI
// addresses in NVML's and CUDA's spellings, CUDA version integers.
//
// Pure functions of their arguments, no NVML or CUDA types, thread-safe.
// Deciding what a value means for a result (which reasons count as
// throttling) is the benchmarks' job (agent/benchmarks/gpu/gpu_math.h).
#ifndef FLEETBENCH_AGENT_FACTS_GPU_VALUES_H_
#define FLEETBENCH_AGENT_FACTS_GPU_VALUES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fleetbench::gpu {

// NVML clock event ("throttle") reason bits, as in nvml.h
// (nvmlClocksEventReason*). The values are NVML's and never change.
inline constexpr uint64_t kReasonGpuIdle = 0x1;
inline constexpr uint64_t kReasonApplicationsClocksSetting = 0x2;
inline constexpr uint64_t kReasonSwPowerCap = 0x4;
inline constexpr uint64_t kReasonHwSlowdown = 0x8;
inline constexpr uint64_t kReasonSyncBoost = 0x10;
inline constexpr uint64_t kReasonSwThermalSlowdown = 0x20;
inline constexpr uint64_t kReasonHwThermalSlowdown = 0x40;
inline constexpr uint64_t kReasonHwPowerBrakeSlowdown = 0x80;
inline constexpr uint64_t kReasonDisplayClockSetting = 0x100;

// Names of the set bits, lowest first ("gpu_idle", "sw_power_cap", ...);
// unknown bits as "bit_N".
std::vector<std::string> DecodeClockEventReasons(uint64_t reasons);

// A PCI address parsed from either spelling: NVML's "00000000:3B:00.0"
// (32-bit domain) or CUDA's / sysfs's "0000:3b:00.0". nullopt if malformed.
struct PciAddress {
  uint32_t domain = 0;
  uint32_t bus = 0;
  uint32_t device = 0;
  uint32_t function = 0;
  bool operator==(const PciAddress&) const = default;
};
std::optional<PciAddress> ParsePciAddress(absl::string_view text);
// True when both parse and name the same function.
bool SamePciAddress(absl::string_view a, absl::string_view b);

// NVML's CUDA driver version integer (12040) as "12.4".
std::string FormatCudaVersion(int version);

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_FACTS_GPU_VALUES_H_
