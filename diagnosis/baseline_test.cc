#include "diagnosis/baseline.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace fleetbench::diagnosis {
namespace {

TEST(RobustBaselineTest, EmptyOrNonFiniteGivesNothing) {
  EXPECT_FALSE(RobustBaseline({}).has_value());
  EXPECT_FALSE(RobustBaseline({std::nan(""), std::numeric_limits<double>::infinity()}));
}

TEST(RobustBaselineTest, MedianAndScaledMadOfCleanValues) {
  // Deviations from the median 10: 1, 1, 0, 1, 1 -> MAD 1, scaled 1.4826.
  std::optional<Baseline> b = RobustBaseline({9, 11, 10, 9, 11});
  ASSERT_TRUE(b);
  EXPECT_DOUBLE_EQ(b->median, 10);
  EXPECT_NEAR(b->mad, kMadToSigma, 1e-12);
  EXPECT_EQ(b->kept, 5);
  EXPECT_EQ(b->dropped, 0);
}

TEST(RobustBaselineTest, DropsOutliersAndRecomputesUntilStable) {
  // 100 is far out; once it is gone, 40 is too (the second round).
  std::optional<Baseline> b = RobustBaseline({10, 10.2, 9.8, 10.1, 9.9, 13, 100});
  ASSERT_TRUE(b);
  EXPECT_GE(b->dropped, 1);
  EXPECT_NEAR(b->median, 10, 0.11);
  EXPECT_LT(b->mad, 0.5);
  // The same without the outliers gives the same centre.
  std::optional<Baseline> clean = RobustBaseline({10, 10.2, 9.8, 10.1, 9.9});
  EXPECT_NEAR(b->median, clean->median, 1e-12);
}

TEST(RobustBaselineTest, ASecondRoundDropsWhatTheFirstHid) {
  // Round 1: median 5, MAD 1 -> drops 50; round 2 is tighter and drops 9.
  std::optional<Baseline> b = RobustBaseline({4, 5, 5, 5, 5, 6, 9, 50});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->dropped, 2);
  EXPECT_EQ(b->kept, 6);
  EXPECT_DOUBLE_EQ(b->median, 5);
}

TEST(RobustBaselineTest, ZeroSpreadDropsNothing) {
  std::optional<Baseline> b = RobustBaseline({3, 3, 3, 7});
  ASSERT_TRUE(b);
  EXPECT_DOUBLE_EQ(b->median, 3);
  EXPECT_DOUBLE_EQ(b->mad, 0);
  EXPECT_EQ(b->dropped, 0);
}

TEST(RobustBaselineTest, NeverKeepsFewerThanMinKept) {
  BaselineOptions o;
  o.min_kept = 3;
  o.drop_beyond_mads = 0.1;  // would drop almost everything
  std::optional<Baseline> b = RobustBaseline({1, 2, 3, 4, 5}, o);
  ASSERT_TRUE(b);
  EXPECT_GE(b->kept, 3);
}

TEST(RobustBaselineTest, TwoValuesAreTheirMeanAndHalfTheirGap) {
  std::optional<Baseline> b = RobustBaseline({1.0, 1.2});
  ASSERT_TRUE(b);
  EXPECT_DOUBLE_EQ(b->median, 1.1);
  EXPECT_NEAR(b->mad, 0.1 * kMadToSigma, 1e-12);
}

}  // namespace
}  // namespace fleetbench::diagnosis
