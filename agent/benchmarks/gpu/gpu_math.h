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
#include <vector>

#include "agent/facts/gpu_values.h"

namespace fleetbench::gpu {

// 100·measured/peak; 0 when the peak is not positive (unknown).
double PercentOfPeak(double measured, double peak);

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

// The clock event reasons (agent/facts/gpu_values.h) that mean "slower than
// the board could be right now because of power or heat": what a benchmark
// result should be flagged for. Idle, application clocks, sync boost and
// display settings are not.
inline constexpr uint64_t kThrottlingReasons =
    kReasonSwPowerCap | kReasonHwSlowdown | kReasonSwThermalSlowdown |
    kReasonHwThermalSlowdown | kReasonHwPowerBrakeSlowdown;

// Share of samples (NVML reason bitmasks taken during a run) in which any
// bit of `mask` was set, in [0, 1]; 0 for no samples.
double ThrottleFraction(const std::vector<uint64_t>& samples,
                        uint64_t mask = kThrottlingReasons);

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_MATH_H_
