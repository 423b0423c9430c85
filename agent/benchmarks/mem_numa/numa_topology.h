// agent/benchmarks/mem_numa/numa_topology.h — which NUMA nodes a node has, which
// CPUs and how much memory each holds, and the placements "mem_numa"
// measures: every (CPU node, memory node) pair, local when the two are the
// same node.
//
// Pure functions over sysfs text (ReadNumaTopology reads the files under a
// root given by the caller, so tests run it on a tree they write). No
// libnuma here: numa_memory.h does the binding.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_MEM_NUMA_NUMA_TOPOLOGY_H_
#define FLEETBENCH_AGENT_BENCHMARKS_MEM_NUMA_NUMA_TOPOLOGY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetbench::agent {

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; "" -> {}; nullopt when malformed.
std::optional<std::vector<int>> ParseCpuList(absl::string_view text);

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;     // from nodeN/cpulist
  int64_t memory_bytes = 0;  // "Node N MemTotal: K kB" of nodeN/meminfo
};

// The nodes under `node_root` (normally /sys/devices/system/node), sorted by
// id. Empty when the folder is missing (a kernel without NUMA support).
std::vector<NumaNode> ReadNumaTopology(const std::string& node_root);

// One measurement: threads on (the allowed CPUs of) cpu_node, arrays on
// memory_node.
struct NumaPlacement {
  int cpu_node = 0;
  int memory_node = 0;
  std::vector<int> cpus;  // allowed CPUs of cpu_node, in order
  bool local() const { return cpu_node == memory_node; }
};

// Every pair of a node with CPUs this process may use (`allowed_cpus`) and a
// node with memory, local placements first, then remote ones, each in node
// order. FAILED_PRECONDITION with the reason when there is nothing remote to
// compare: fewer than two nodes with memory, or no allowed CPU on any node
// with memory beside another. The reason names the nodes seen.
absl::StatusOr<std::vector<NumaPlacement>> PlanNumaPlacements(
    const std::vector<NumaNode>& nodes, const std::vector<int>& allowed_cpus);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_MEM_NUMA_NUMA_TOPOLOGY_H_
