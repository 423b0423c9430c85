#include "agent/benchmarks/mem_numa/numa_memory.h"

#include <numaif.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace fleetbench::agent {

absl::StatusOr<std::unique_ptr<NodeBoundArray>> NodeBoundArray::Map(int64_t n,
                                                                    int node) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(double);
  constexpr int kMaxNode = 1023;
  if (node < 0 || node > kMaxNode) {
    return absl::InvalidArgumentError(absl::StrCat("mem_numa: node ", node, " out of range"));
  }
  void* raw = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("mem_numa: cannot map ", bytes, " bytes: ", std::strerror(errno)));
  }
  std::vector<unsigned long> mask((kMaxNode + 1) / (8 * sizeof(unsigned long)), 0);
  mask[static_cast<size_t>(node) / (8 * sizeof(unsigned long))] |=
      1UL << (static_cast<size_t>(node) % (8 * sizeof(unsigned long)));
  if (mbind(raw, bytes, MPOL_BIND, mask.data(), kMaxNode + 1, 0) != 0) {
    const int error = errno;
    munmap(raw, bytes);
    return absl::FailedPreconditionError(absl::StrCat(
        "mem_numa: binding memory to node ", node, ": ", std::strerror(error)));
  }
  return std::unique_ptr<NodeBoundArray>(
      new NodeBoundArray(static_cast<double*>(raw), bytes));
}

NodeBoundArray::~NodeBoundArray() { munmap(data_, bytes_); }

double ShareOfPagesOnNode(const void* data, size_t bytes, int node, int max_pages) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t pages = (bytes + page - 1) / page;
  if (pages == 0 || max_pages <= 0) return -1;
  const size_t count = std::min(pages, static_cast<size_t>(max_pages));
  std::vector<void*> addresses(count);
  for (size_t i = 0; i < count; ++i) {
    const size_t index = i * pages / count;
    addresses[i] = const_cast<char*>(static_cast<const char*>(data)) + index * page;
  }
  std::vector<int> status(count, -1);
  if (move_pages(0, count, addresses.data(), nullptr, status.data(), 0) != 0) {
    return -1;
  }
  size_t on_node = 0;
  for (int s : status) on_node += s == node ? 1 : 0;
  return static_cast<double>(on_node) / static_cast<double>(count);
}

}  // namespace fleetbench::agent
