#include "common/stats.h"

#include "gtest/gtest.h"

namespace fleetbench {
namespace {

TEST(PercentileTest, InterpolatesBetweenRanks) {
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 0.0), 1);
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 1.0), 4);
  EXPECT_DOUBLE_EQ(Percentile({10, 20}, 0.1), 11);
}

TEST(PercentileTest, EmptyAndSingle) {
  EXPECT_DOUBLE_EQ(Percentile({}, 0.5), 0);
  EXPECT_DOUBLE_EQ(Median({7}), 7);
}

TEST(SummarizeTest, SpreadIsRangeOverMedian) {
  Summary s = Summarize({9, 10, 11});
  EXPECT_EQ(s.count, 3);
  EXPECT_DOUBLE_EQ(s.median, 10);
  EXPECT_DOUBLE_EQ(s.min, 9);
  EXPECT_DOUBLE_EQ(s.max, 11);
  EXPECT_DOUBLE_EQ(s.spread, 0.2);
}

}  // namespace
}  // namespace fleetbench
