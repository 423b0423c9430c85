// agent/benchmarks/gpu/gpu_math.h — the arithmetic of the GPU benchmarks.
//
// Pure functions: no CUDA, no NVML, no clock. Everything a GPU result is
// compared against (a link's theoretical rate, a board's peak) or converted
// by (bus-bandwidth factors, throttle fractions) lives here and is tested on
// its own, the way nccl-tests keeps getBw() pure. GEMM FLOP counts are shared
// with the CPU plugin: agent/benchmarks/gemm_math.h.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_MATH_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_MATH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fleetbench::gpu {

// 100·measured/peak; 0 when the peak is not positive (unknown).
double PercentOfPeak(double measured, double peak);

// GB/s (10^9 B/s) from bytes moved in seconds; 0 when seconds <= 0.
double GigabytesPerSecond(double bytes, double seconds);

// Theoretical data rate of a PCIe link in one direction, GB/s, after line
// encoding (8b/10b for Gen1-2, 128b/130b for Gen3-5, 1b/1b FLIT with 242/256
// payload for Gen6), before packet overhead. Gen3/4/5 x16: 15.75/31.5/63.0.
// 0 for an unknown generation or a width of 0.
double PcieTheoreticalGBps(int generation, int width);

// nccl-tests' bus bandwidth: the per-link rate a collective needs, so that
// results for different GPU counts compare to the hardware's link rate.
// busbw = algbw · factor(n): all-reduce 2(n-1)/n; all-gather, reduce-scatter
// and all-to-all (n-1)/n; broadcast and reduce 1. One rank moves nothing
// between ranks, so the first four give 0 for n = 1 (and for n < 1).
enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAllToAll,
                        kBroadcast, kReduce };
double BusBandwidthFactor(Collective collective, int ranks);
double BusBandwidth(Collective collective, int ranks, double algbw_GBps);

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
// of power or heat": what a benchmark result should be flagged for. Idle,
// application clocks, sync boost and display settings are not.
inline constexpr uint64_t kThrottlingReasons =
    kReasonSwPowerCap | kReasonHwSlowdown | kReasonSwThermalSlowdown |
    kReasonHwThermalSlowdown | kReasonHwPowerBrakeSlowdown;

// Names of the set bits, lowest first ("gpu_idle", "sw_power_cap", ...);
// unknown bits as "bit_N".
std::vector<std::string> DecodeClockEventReasons(uint64_t reasons);

// Share of samples (NVML reason bitmasks taken during a run) in which any
// bit of `mask` was set, in [0, 1]; 0 for no samples.
double ThrottleFraction(const std::vector<uint64_t>& samples,
                        uint64_t mask = kThrottlingReasons);

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

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_MATH_H_
