#include "agent/benchmarks/smallfiles/smallfiles_paths.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using ::testing::HasSubstr;

TEST(SmallFilesPathsTest, AbsoluteFoldersOnly) {
  EXPECT_TRUE(CheckAbsoluteFolder("path", "/data/train").ok());
  EXPECT_TRUE(CheckAbsoluteFolder("path", "/").ok());
  EXPECT_THAT(CheckAbsoluteFolder("path", "data").message(),
              HasSubstr("not an absolute path"));
  EXPECT_THAT(CheckAbsoluteFolder("path", "").message(),
              HasSubstr("not an absolute path"));
  EXPECT_THAT(CheckAbsoluteFolder("path", "/data/../etc").message(),
              HasSubstr("'..' component"));
  EXPECT_THAT(CheckAbsoluteFolder("path", "/data/./x").message(),
              HasSubstr("'.' or '..'"));
  EXPECT_THAT(CheckAbsoluteFolder("path", std::string(5000, '/')).message(),
              HasSubstr("longer than 4096"));
}

TEST(SmallFilesPathsTest, UnderARootComponentWise) {
  EXPECT_TRUE(IsUnderRoot("/data", "/data"));
  EXPECT_TRUE(IsUnderRoot("/data/train", "/data"));
  EXPECT_TRUE(IsUnderRoot("/data//train/", "/data/"));
  EXPECT_FALSE(IsUnderRoot("/data2", "/data"));
  EXPECT_FALSE(IsUnderRoot("/dat", "/data"));
  EXPECT_FALSE(IsUnderRoot("/etc", "/data"));
  EXPECT_TRUE(IsUnderRoot("/anything", "/"));
  EXPECT_EQ(RootHolding("/mnt/b/x", {"/mnt/a", "/mnt/b"}), "/mnt/b");
  EXPECT_EQ(RootHolding("/mnt/c/x", {"/mnt/a", "/mnt/b"}), "");
  EXPECT_EQ(RootHolding("/mnt/a", {}), "");
  EXPECT_EQ(CollapseSlashes("//a///b//"), "/a/b");
  EXPECT_EQ(CollapseSlashes("/"), "/");
}

TEST(SmallFilesPathsTest, Names) {
  const std::string dir = RandomSmallFilesDirName();
  EXPECT_TRUE(IsSmallFilesDirName(dir)) << dir;
  EXPECT_NE(dir, RandomSmallFilesDirName());
  EXPECT_FALSE(IsSmallFilesDirName("fleetbench-smallfiles-"));
  EXPECT_FALSE(IsSmallFilesDirName("fleetbench-smallfiles-00000000000000AA"));
  EXPECT_FALSE(IsSmallFilesDirName("fleetbench-disk-00000000000000aa"));
  EXPECT_TRUE(IsSmallFilesDirName("fleetbench-smallfiles-00000000000000aa"));
  EXPECT_EQ(SmallFileName(12), "f0000012.bin");
}

TEST(SmallFilesPathsTest, ShuffleIsAPermutationAndDependsOnTheSeed) {
  const std::vector<int64_t> a = ShuffledOrder(1000, 1);
  const std::vector<int64_t> b = ShuffledOrder(1000, 2);
  EXPECT_EQ(std::set<int64_t>(a.begin(), a.end()).size(), 1000u);
  EXPECT_EQ(*std::min_element(a.begin(), a.end()), 0);
  EXPECT_EQ(*std::max_element(a.begin(), a.end()), 999);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, ShuffledOrder(1000, 1));
  // Not the identity, nor mostly in order: few fixed points.
  int fixed = 0;
  for (int64_t i = 0; i < 1000; ++i) fixed += a[static_cast<size_t>(i)] == i;
  EXPECT_LT(fixed, 10);
  EXPECT_TRUE(ShuffledOrder(0, 1).empty());
  EXPECT_EQ(ShuffledOrder(1, 1), std::vector<int64_t>{0});
}

}  // namespace
}  // namespace fleetbench::agent
