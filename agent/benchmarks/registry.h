// agent/benchmarks/registry.h — every benchmark this build knows.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_REGISTRY_H_
#define FLEETBENCH_AGENT_BENCHMARKS_REGISTRY_H_

#include <memory>
#include <vector>

#include "agent/benchmarks/benchmark.h"

namespace fleetbench::agent {

// A fresh instance of each registered benchmark, in a stable order.
std::vector<std::unique_ptr<Benchmark>> MakeAllBenchmarks();

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_REGISTRY_H_
