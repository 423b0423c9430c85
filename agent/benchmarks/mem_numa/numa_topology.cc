#include "agent/benchmarks/mem_numa/numa_topology.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/units.h"

namespace fleetbench::agent {
namespace {

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "Node 0 MemTotal:       17393868 kB" -> bytes.
int64_t MemTotalBytes(const std::string& meminfo) {
  for (absl::string_view line : absl::StrSplit(meminfo, '\n')) {
    const size_t at = line.find("MemTotal:");
    if (at == absl::string_view::npos) continue;
    absl::string_view rest = absl::StripAsciiWhitespace(line.substr(at + 9));
    rest = absl::StripSuffix(rest, "kB");
    int64_t kib = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &kib)) return kib * 1024;
  }
  return 0;
}

std::string Describe(const NumaNode& node) {
  return absl::StrCat("node", node.id, ": CPUs ",
                      node.cpus.empty() ? "none" : absl::StrJoin(node.cpus, ","),
                      ", ", FormatNumber(static_cast<double>(node.memory_bytes) / kGiB),
                      " GiB");
}

}  // namespace

std::optional<std::vector<int>> ParseCpuList(absl::string_view text) {
  std::vector<int> cpus;
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return cpus;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    const std::vector<absl::string_view> range = absl::StrSplit(part, '-');
    int lo = 0, hi = 0;
    if (range.size() == 1 && absl::SimpleAtoi(range[0], &lo)) {
      hi = lo;
    } else if (range.size() != 2 || !absl::SimpleAtoi(range[0], &lo) ||
               !absl::SimpleAtoi(range[1], &hi)) {
      return std::nullopt;
    }
    if (lo < 0 || hi < lo || hi - lo > 65536) return std::nullopt;
    for (int cpu = lo; cpu <= hi; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

std::vector<NumaNode> ReadNumaTopology(const std::string& node_root) {
  namespace fs = std::filesystem;
  std::vector<NumaNode> nodes;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(node_root, ec)) {
    const std::string name = entry.path().filename().string();
    int id = 0;
    if (!absl::StartsWith(name, "node") || !absl::SimpleAtoi(name.substr(4), &id)) {
      continue;
    }
    NumaNode node;
    node.id = id;
    node.cpus = ParseCpuList(ReadText(entry.path() / "cpulist")).value_or(std::vector<int>{});
    node.memory_bytes = MemTotalBytes(ReadText(entry.path() / "meminfo"));
    nodes.push_back(std::move(node));
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  return nodes;
}

absl::StatusOr<std::vector<NumaPlacement>> PlanNumaPlacements(
    const std::vector<NumaNode>& nodes, const std::vector<int>& allowed_cpus) {
  const std::set<int> allowed(allowed_cpus.begin(), allowed_cpus.end());
  std::vector<const NumaNode*> with_memory;
  std::vector<std::pair<const NumaNode*, std::vector<int>>> with_cpus;
  std::vector<std::string> seen;
  for (const NumaNode& node : nodes) {
    seen.push_back(Describe(node));
    if (node.memory_bytes > 0) with_memory.push_back(&node);
    std::vector<int> usable;
    for (int cpu : node.cpus) {
      if (allowed.contains(cpu)) usable.push_back(cpu);
    }
    if (!usable.empty()) with_cpus.emplace_back(&node, std::move(usable));
  }
  const std::string listing =
      seen.empty() ? "no NUMA nodes in sysfs" : absl::StrJoin(seen, "; ");
  if (with_memory.size() < 2) {
    return absl::FailedPreconditionError(absl::StrCat(
        "mem_numa: ", with_memory.size() == 1 ? "one NUMA node" : "no NUMA node",
        " with memory (", listing,
        "): every access is local, there is no remote bandwidth to measure"));
  }
  std::vector<NumaPlacement> local, remote;
  for (const auto& [cpu_node, cpus] : with_cpus) {
    for (const NumaNode* memory_node : with_memory) {
      NumaPlacement p{cpu_node->id, memory_node->id, cpus};
      (p.local() ? local : remote).push_back(std::move(p));
    }
  }
  if (remote.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "mem_numa: this process may run on no CPU of a node with another "
        "node's memory beside it (", listing, "; allowed CPUs ",
        absl::StrJoin(allowed_cpus, ","), ")"));
  }
  local.insert(local.end(), std::make_move_iterator(remote.begin()),
               std::make_move_iterator(remote.end()));
  return local;
}

}  // namespace fleetbench::agent
