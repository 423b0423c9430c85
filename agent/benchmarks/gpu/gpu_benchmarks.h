// agent/benchmarks/gpu/gpu_benchmarks.h — registration of the GPU plugins
// and the GPU part of node facts, for the registry and the facts reader.
//
// Every build has these plugins, with or without CUDA: the GPU code lives in
// libfleetbench_gpu.so, loaded at run time (gpu_module_loader.h), so on a
// node or build without it they are listed and report "skipped" with the
// reason instead of disappearing.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_BENCHMARKS_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_BENCHMARKS_H_

#include <memory>
#include <vector>

#include "agent/benchmarks/benchmark.h"

namespace fleetbench::gpu {

// Appends "gpu_gemm", "pcie", "hbm" and "stress", in that order (the
// NCCL "allreduce" is a backend of the collective plugin, composed in
// registry.cc), configured from
// DefaultGpuPluginOptions() (module next to the executable or
// $FLEETBENCH_GPU_MODULE; NVML from libnvidia-ml.so.1 or
// $FLEETBENCH_NVML_LIBRARY).
void AppendGpuBenchmarks(std::vector<std::unique_ptr<agent::Benchmark>>* all);

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_BENCHMARKS_H_
