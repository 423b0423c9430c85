// agent/benchmarks/mem_numa/numa_memory.h — memory bound to one NUMA node, and a
// check of where its pages really are (libnuma's numaif.h: mbind and
// move_pages, Debian libnuma-dev).
//
// Errors: FAILED_PRECONDITION when the kernel refuses the binding (no such
// node, NUMA not supported), RESOURCE_EXHAUSTED when the mapping fails.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_MEM_NUMA_NUMA_MEMORY_H_
#define FLEETBENCH_AGENT_BENCHMARKS_MEM_NUMA_NUMA_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"

namespace fleetbench::agent {

// n doubles in a fresh anonymous mapping with policy MPOL_BIND to `node`:
// every page is allocated on that node when first touched, by whichever
// thread touches it, and never elsewhere (the touch fails rather than
// falling back). Not touched here.
class NodeBoundArray {
 public:
  static absl::StatusOr<std::unique_ptr<NodeBoundArray>> Map(int64_t n, int node);
  ~NodeBoundArray();
  NodeBoundArray(const NodeBoundArray&) = delete;
  NodeBoundArray& operator=(const NodeBoundArray&) = delete;

  double* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  NodeBoundArray(double* data, size_t bytes) : data_(data), bytes_(bytes) {}
  double* data_;
  size_t bytes_;
};

// The share of up to `max_pages` pages spread evenly over [data, data +
// bytes) that the kernel reports on `node` (move_pages in query mode);
// pages not yet touched count as elsewhere. -1 when the kernel cannot say.
double ShareOfPagesOnNode(const void* data, size_t bytes, int node,
                          int max_pages = 1024);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_MEM_NUMA_NUMA_MEMORY_H_
