#include "agent/benchmarks/gpu/gpu_benchmarks.h"

#include "agent/benchmarks/gpu/gpu_copy.h"
#include "agent/benchmarks/gpu/gpu_gemm.h"
#include "agent/benchmarks/gpu/gpu_stress.h"

namespace fleetbench::gpu {

void AppendGpuBenchmarks(std::vector<std::unique_ptr<agent::Benchmark>>* all) {
  all->push_back(std::make_unique<GpuGemmBenchmark>());
  all->push_back(std::make_unique<GpuCopyBenchmark>(kPcieCopyPlugin));
  all->push_back(std::make_unique<GpuCopyBenchmark>(kHbmCopyPlugin));
  all->push_back(std::make_unique<StressBenchmark>());
}

}  // namespace fleetbench::gpu
