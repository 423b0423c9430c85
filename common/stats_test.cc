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

TEST(PercentileTest, AgreesWithSummarizeOnUnsortedInput) {
  std::vector<double> v;
  for (int i = 0; i < 101; ++i) v.push_back((i * 37) % 101);  // a permutation of 0..100
  const Summary s = Summarize(v);
  for (double q : {0.0, 0.1, 0.25, 0.5, 0.9, 0.999, 1.0}) {
    EXPECT_DOUBLE_EQ(Percentile(v, q), q * 100) << q;
  }
  EXPECT_DOUBLE_EQ(s.p10, 10);
  EXPECT_DOUBLE_EQ(s.p90, 90);
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

namespace fleetbench {
namespace {

TEST(PercentileOfCountsTest, IsPercentileOfTheExpandedList) {
  const std::vector<std::pair<double, uint64_t>> counted = {
      {3.0, 2}, {1.0, 1}, {7.5, 4}, {2.0, 0}, {-1.0, 3}};
  std::vector<double> expanded;
  for (const auto& [v, n] : counted) expanded.insert(expanded.end(), n, v);
  for (double q : {0.0, 0.1, 0.25, 0.5, 0.77, 0.9, 1.0}) {
    EXPECT_DOUBLE_EQ(PercentileOfCounts(counted, q), Percentile(expanded, q)) << q;
  }
  EXPECT_EQ(PercentileOfCounts({}, 0.5), 0);
  EXPECT_EQ(PercentileOfCounts({{4.0, 0}}, 0.5), 0);
  EXPECT_EQ(PercentileOfCounts({{4.0, 1'000'000'000'000}}, 0.5), 4.0);
}

}  // namespace
}  // namespace fleetbench
