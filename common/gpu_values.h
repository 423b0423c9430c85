// common/gpu_values.h — the values a GPU's facts and readings are
// reported in, decoded: NVML's clock event reason bits and their names, PCI
// addresses in NVML's and CUDA's spellings, CUDA version integers.
//
// Pure functions of their arguments, no NVML or CUDA types, thread-safe.
// In common/ because three layers read these values: the facts reader
// (agent/facts/), the GPU plugins and the diagnosis rules (diagnosis/),
// none of which may include another's folder.
#ifndef FLEETBENCH_COMMON_GPU_VALUES_H_
#define FLEETBENCH_COMMON_GPU_VALUES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
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

// The reasons that mean "slower than the board could be right now because
// of power or heat": what a benchmark result is flagged for and what the
// diagnosis rules judge. Idle, application clocks, sync boost and display
// settings are not.
inline constexpr uint64_t kThrottlingReasons =
    kReasonSwPowerCap | kReasonHwSlowdown | kReasonSwThermalSlowdown |
    kReasonHwThermalSlowdown | kReasonHwPowerBrakeSlowdown;

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

// Theoretical data rate of a PCIe link in one direction, GB/s, after line
// encoding (8b/10b for Gen1-2, 128b/130b for Gen3-5, 1b/1b FLIT with 242/256
// payload for Gen6), before packet overhead. Gen3/4/5 x16: 15.75/31.5/63.0.
// 0 for an unknown generation or a width of 0.
double PcieTheoreticalGBps(int generation, int width);

// A PCIe link as the GPU plugins' sample params spell it ("Gen4 x8", the
// pcie benchmark's pcie_link and pcie_link_max) and as the diagnosis rules
// read it back: {generation, width}; nullopt unless "Gen<g> x<w>" with both
// positive.
std::string FormatPcieLink(int generation, int width);
std::optional<std::pair<int, int>> ParsePcieLink(absl::string_view text);

// NVML's CUDA driver version integer (12040) as "12.4".
std::string FormatCudaVersion(int version);

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_COMMON_GPU_VALUES_H_
