// agent/benchmarks/registry.h — every benchmark this build knows.
//
// Adding a benchmark is a folder under agent/benchmarks/ whose
// CMakeLists.txt makes its library with fleetbench_add_plugin_library (the
// registry links every such library, found without editing any other
// CMakeLists.txt) plus its line in MakeAllBenchmarks() with the #include of
// its header; docs/adding-a-benchmark.md walks through one.
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
