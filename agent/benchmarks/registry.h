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
#include "agent/benchmarks/workload/workload_manifest.h"

namespace fleetbench::agent {

// What a node's operator configured for the plugins (agent flags), given
// to the plugins that need it when they are made.
struct PluginSetup {
  // --workload-dir: the workloads the `workload` plugin may run.
  std::vector<Workload> workloads;
};

// A fresh instance of each registered benchmark, in a stable order.
std::vector<std::unique_ptr<Benchmark>> MakeAllBenchmarks(PluginSetup setup = {});

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_REGISTRY_H_
