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

#include "common/bus_bandwidth.h"
#include "common/gpu_values.h"  // kThrottlingReasons, PcieTheoreticalGBps

namespace fleetbench::gpu {

// 100·measured/peak; 0 when the peak is not positive (unknown).
double PercentOfPeak(double measured, double peak);

// PcieTheoreticalGBps (a link's rate) and kThrottlingReasons (which clock
// event reasons mean power or heat) are in common/gpu_values.h, shared with
// the diagnosis rules.

// nccl-tests' bus bandwidth factors live in common/bus_bandwidth.h, shared
// with the gloo backend of "allreduce".
using ::fleetbench::BusBandwidth;
using ::fleetbench::BusBandwidthFactor;
using ::fleetbench::Collective;

// Share of samples (NVML reason bitmasks taken during a run) in which any
// bit of `mask` was set, in [0, 1]; 0 for no samples.
double ThrottleFraction(const std::vector<uint64_t>& samples,
                        uint64_t mask = kThrottlingReasons);

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_MATH_H_
