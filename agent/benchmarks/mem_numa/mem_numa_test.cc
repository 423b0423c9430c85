#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "agent/benchmarks/mem_numa/mem_numa.h"
#include "agent/benchmarks/mem_numa/numa_memory.h"
#include "agent/benchmarks/mem_numa/numa_topology.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A sysfs node folder written for the test: nodeN/cpulist and meminfo.
class NodeTree {
 public:
  NodeTree() {
    std::string tmpl = (fs::temp_directory_path() / "mem-numa-XXXXXX").string();
    root_ = mkdtemp(tmpl.data());
  }
  ~NodeTree() { fs::remove_all(root_); }
  void Add(int id, const std::string& cpulist, int64_t mem_kib) {
    const fs::path dir = root_ / ("node" + std::to_string(id));
    fs::create_directories(dir);
    std::ofstream(dir / "cpulist") << cpulist << "\n";
    std::ofstream(dir / "meminfo") << "Node " << id << " MemTotal:       " << mem_kib
                                   << " kB\nNode " << id << " MemFree: 1 kB\n";
  }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
};

TEST(CpuListTest, Parses) {
  EXPECT_EQ(ParseCpuList("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(ParseCpuList(""), std::vector<int>{});
  EXPECT_FALSE(ParseCpuList("3-1").has_value());
  EXPECT_FALSE(ParseCpuList("a").has_value());
  EXPECT_FALSE(ParseCpuList("1,,2").has_value());
}

TEST(NumaTopologyTest, ReadsNodesInOrder) {
  NodeTree tree;
  tree.Add(1, "4-7", 1024);
  tree.Add(0, "0-3", 2048);
  const std::vector<NumaNode> nodes = ReadNumaTopology(tree.root());
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].id, 0);
  EXPECT_EQ(nodes[0].cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(nodes[0].memory_bytes, 2048 * 1024);
  EXPECT_EQ(nodes[1].id, 1);
  EXPECT_TRUE(ReadNumaTopology("/nonexistent-numa-root").empty());
}

TEST(NumaPlanTest, TwoSocketsGiveTwoLocalAndTwoRemotePlacements) {
  const std::vector<NumaNode> nodes = {{0, {0, 1, 2, 3}, 1 << 30},
                                       {1, {4, 5, 6, 7}, 1 << 30}};
  // The process may use CPUs 1-2 and 4-7 (a cpuset): only those are pinned.
  absl::StatusOr<std::vector<NumaPlacement>> plan =
      PlanNumaPlacements(nodes, {1, 2, 4, 5, 6, 7});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->size(), 4u);
  EXPECT_TRUE((*plan)[0].local());
  EXPECT_EQ((*plan)[0].cpu_node, 0);
  EXPECT_EQ((*plan)[0].cpus, (std::vector<int>{1, 2}));
  EXPECT_TRUE((*plan)[1].local());
  EXPECT_EQ((*plan)[1].cpu_node, 1);
  EXPECT_EQ((*plan)[1].cpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_FALSE((*plan)[2].local());
  EXPECT_EQ((*plan)[2].cpu_node, 0);
  EXPECT_EQ((*plan)[2].memory_node, 1);
  EXPECT_EQ((*plan)[3].cpu_node, 1);
  EXPECT_EQ((*plan)[3].memory_node, 0);
}

TEST(NumaPlanTest, MemoryOnlyNodeIsRemoteForEveryCpuNode) {
  // CXL or HBM-as-NUMA: a node with memory and no CPUs.
  const std::vector<NumaNode> nodes = {{0, {0, 1}, 1 << 30}, {2, {}, 1 << 30}};
  absl::StatusOr<std::vector<NumaPlacement>> plan = PlanNumaPlacements(nodes, {0, 1});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->size(), 2u);
  EXPECT_TRUE((*plan)[0].local());
  EXPECT_EQ((*plan)[1].cpu_node, 0);
  EXPECT_EQ((*plan)[1].memory_node, 2);
}

TEST(NumaPlanTest, OneNodeIsSkippedWithTheReason) {
  absl::StatusOr<std::vector<NumaPlacement>> plan =
      PlanNumaPlacements({{0, {0, 1}, int64_t{16} << 30}}, {0, 1});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(plan.status().message(), HasSubstr("one NUMA node with memory"));
  EXPECT_THAT(plan.status().message(), HasSubstr("node0: CPUs 0,1, 16 GiB"));
  EXPECT_THAT(plan.status().message(), HasSubstr("no remote bandwidth"));
}

TEST(NumaPlanTest, NoAllowedCpuBesideRemoteMemoryIsSkipped) {
  const std::vector<NumaNode> nodes = {{0, {0, 1}, 1 << 30}, {1, {2, 3}, 1 << 30}};
  absl::StatusOr<std::vector<NumaPlacement>> plan = PlanNumaPlacements(nodes, {});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
}

// This machine's own sysfs: on one node the plugin is skipped, with the
// reason, from Probe() and from Run() (the runner reports it "skipped");
// on more it runs.
TEST(MemNumaBenchmarkTest, ThisMachineSkipsOnOneNodeAndRunsOnMore) {
  MemNumaBenchmark numa;
  const std::vector<NumaNode> nodes = ReadNumaTopology("/sys/devices/system/node");
  int with_memory = 0;
  for (const NumaNode& n : nodes) with_memory += n.memory_bytes > 0 ? 1 : 0;
  RunContext context("/tmp", nullptr, nullptr);
  absl::StatusOr<std::vector<v1::Sample>> samples =
      numa.Run({{"array_mib", "8"}, {"repetitions", "2"}}, context);
  if (with_memory < 2) {
    EXPECT_EQ(numa.Probe().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(numa.Probe().message(), HasSubstr("one NUMA node"));
    EXPECT_EQ(samples.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(samples.status().message(), HasSubstr("node0"));
    return;
  }
  ASSERT_TRUE(numa.Probe().ok());
  ASSERT_TRUE(samples.ok()) << samples.status();
  for (const v1::Sample& s : *samples) {
    ASSERT_TRUE(DeclaredMetric(numa, s.metric()).has_value()) << s.metric();
    EXPECT_GT(s.value(), 0);
  }
}

// The two-node path, on a written two-node tree whose node 1 does not exist
// in the kernel: the plan is made, node 0's local placement measured, and
// binding to node 1 refused with a clear error rather than measured on
// node 0's memory.
TEST(MemNumaBenchmarkTest, BindingToAMissingNodeFailsInsteadOfFallingBack) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &set)) ++cpu;
  NodeTree tree;
  tree.Add(0, std::to_string(cpu), 1 << 24);
  tree.Add(1, "", 1 << 24);
  MemNumaBenchmark numa(tree.root());
  ASSERT_TRUE(numa.Probe().ok()) << numa.Probe();
  std::vector<std::string> progress;
  RunContext context("/tmp", nullptr, [&](double, const std::string& m) {
    progress.push_back(m);
  });
  absl::StatusOr<std::vector<v1::Sample>> samples =
      numa.Run({{"array_mib", "4"}, {"repetitions", "2"}}, context);
  if (fs::exists("/sys/devices/system/node/node1")) {
    GTEST_SKIP() << "node 1 exists on this machine";
  }
  ASSERT_EQ(samples.status().code(), absl::StatusCode::kFailedPrecondition)
      << samples.status();
  EXPECT_THAT(samples.status().message(), HasSubstr("binding memory to node 1"));
  ASSERT_EQ(progress.size(), 2u);  // node 0 local measured, then node 0 → 1
  EXPECT_THAT(progress[1], HasSubstr("memory of node 1"));
}

TEST(NodeBoundArrayTest, PagesLandOnTheBoundNode) {
  absl::StatusOr<std::unique_ptr<NodeBoundArray>> array =
      NodeBoundArray::Map(int64_t{1} << 20, 0);
  ASSERT_TRUE(array.ok()) << array.status();
  // Untouched pages are on no node yet.
  EXPECT_LT(ShareOfPagesOnNode((*array)->data(), (*array)->bytes(), 0), 0.5);
  for (int64_t i = 0; i < (int64_t{1} << 20); ++i) (*array)->data()[i] = 1.0;
  EXPECT_DOUBLE_EQ(ShareOfPagesOnNode((*array)->data(), (*array)->bytes(), 0), 1.0);
}

TEST(MemNumaParamsTest, Validation) {
  EXPECT_TRUE(ParseMemNumaParams({}).ok());
  EXPECT_EQ(ParseMemNumaParams({}).value().repetitions, 10);
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"array_mib", "0"},
                                                        {"array_mib", "1048577"},
                                                        {"repetitions", "1"},
                                                        {"repetitions", "201"},
                                                        {"repetitions", "x"}}) {
    absl::StatusOr<MemNumaConfig> c = ParseMemNumaParams({{key, value}});
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << key << value;
    EXPECT_THAT(c.status().message(), HasSubstr("mem_numa: " + key));
  }
  EXPECT_THAT(ParseMemNumaParams({{"threads", "2"}}).status().message(),
              HasSubstr("unknown parameter 'threads'"));
}

}  // namespace
}  // namespace fleetbench::agent
