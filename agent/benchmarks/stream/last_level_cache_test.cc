#include "agent/benchmarks/stream/last_level_cache.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

namespace fs = std::filesystem;

// A fake /sys/devices/system/cpu: 4 CPUs, private L1/L2, two L3 instances.
class LastLevelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        fs::canonical(::testing::TempDir()).string() + "/llc_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }

  void AddCache(int cpu, int index, int level, const std::string& type,
                const std::string& size, const std::string& shared) {
    const fs::path dir = fs::path(root_) / ("cpu" + std::to_string(cpu)) /
                         "cache" / ("index" + std::to_string(index));
    fs::create_directories(dir);
    std::ofstream(dir / "level") << level << "\n";
    std::ofstream(dir / "type") << type << "\n";
    std::ofstream(dir / "size") << size << "\n";
    std::ofstream(dir / "shared_cpu_list") << shared << "\n";
  }

  std::string root_;
};

TEST_F(LastLevelCacheTest, SumsDistinctInstancesOfHighestLevel) {
  for (int cpu = 0; cpu < 4; ++cpu) {
    AddCache(cpu, 0, 1, "Data", "32K", std::to_string(cpu));
    AddCache(cpu, 1, 1, "Instruction", "32K", std::to_string(cpu));
    AddCache(cpu, 2, 2, "Unified", "1024K", std::to_string(cpu));
    AddCache(cpu, 3, 3, "Unified", "16384K", cpu < 2 ? "0-1" : "2-3");
  }
  fs::create_directories(fs::path(root_) / "cpufreq");  // not a CPU
  const LastLevelCache llc = ReadLastLevelCache(root_);
  EXPECT_EQ(llc.level, 3);
  EXPECT_EQ(llc.instances, 2);
  EXPECT_EQ(llc.instance_bytes, 16 << 20);
  EXPECT_EQ(llc.total_bytes, 32 << 20);
}

TEST_F(LastLevelCacheTest, MissingTreeGivesZeros) {
  const LastLevelCache llc = ReadLastLevelCache(root_ + "/absent");
  EXPECT_EQ(llc.level, 0);
  EXPECT_EQ(llc.total_bytes, 0);
}

}  // namespace
}  // namespace fleetbench::agent
