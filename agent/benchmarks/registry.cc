#include "agent/benchmarks/registry.h"

#include "agent/benchmarks/cpu_gemm.h"

namespace fleetbench::agent {

std::vector<std::unique_ptr<Benchmark>> MakeAllBenchmarks() {
  std::vector<std::unique_ptr<Benchmark>> all;
  // One line per benchmark. Names are permanent keys.
  all.push_back(std::make_unique<CpuGemmBenchmark>());
  return all;
}

}  // namespace fleetbench::agent
