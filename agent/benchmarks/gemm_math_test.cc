#include "agent/benchmarks/gemm_math.h"

#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

TEST(GemmFlopsTest, TwoMNK) {
  EXPECT_DOUBLE_EQ(GemmFlops(2, 3, 4), 48);
  EXPECT_DOUBLE_EQ(GemmFlops(4096, 4096, 4096), 2.0 * 4096 * 4096 * 4096);
  // 2·32768³ overflows no integer on the way: it is computed in double.
  EXPECT_DOUBLE_EQ(GemmFlops(32768, 32768, 32768), 70368744177664.0);
}

TEST(TflopsFromSecondsTest, FlopsPerSecondOverTenToTheTwelve) {
  EXPECT_DOUBLE_EQ(TflopsFromSeconds(2e12, 1), 2);
  EXPECT_DOUBLE_EQ(TflopsFromSeconds(GemmFlops(4096, 4096, 4096), 0.5),
                   2.0 * 4096 * 4096 * 4096 / 0.5 / 1e12);
}

TEST(TflopsFromSecondsTest, NonPositiveTimeIsZeroNotInf) {
  EXPECT_EQ(TflopsFromSeconds(1e12, 0), 0);
  EXPECT_EQ(TflopsFromSeconds(1e12, -1), 0);
}

TEST(EnoughRunsTest, StopsAtMaxRuns) {
  const RepetitionPolicy policy{.min_seconds = 100, .max_runs = 5};
  EXPECT_FALSE(EnoughRuns(policy, 4, 1));
  EXPECT_TRUE(EnoughRuns(policy, 5, 1));
}

TEST(EnoughRunsTest, NeedsMinSecondsAndThreeRuns) {
  const RepetitionPolicy policy{.min_seconds = 1, .max_runs = 50};
  EXPECT_FALSE(EnoughRuns(policy, 0, 0));
  EXPECT_FALSE(EnoughRuns(policy, 2, 10));  // long runs, but only two
  EXPECT_FALSE(EnoughRuns(policy, 10, 0.5));
  EXPECT_TRUE(EnoughRuns(policy, 3, 1));
}

TEST(EnoughRunsTest, FewerThanThreeWhenMaxRunsIsSmaller) {
  const RepetitionPolicy policy{.min_seconds = 0.01, .max_runs = 1};
  EXPECT_FALSE(EnoughRuns(policy, 0, 0));
  EXPECT_TRUE(EnoughRuns(policy, 1, 0));
}

TEST(RepetitionFractionTest, TracksWhicheverEndComesFirst) {
  const RepetitionPolicy policy{.min_seconds = 2, .max_runs = 50};
  EXPECT_DOUBLE_EQ(RepetitionFraction(policy, 0, 0), 0);
  EXPECT_DOUBLE_EQ(RepetitionFraction(policy, 25, 0.1), 0.5);  // by count
  EXPECT_DOUBLE_EQ(RepetitionFraction(policy, 2, 1), 0.5);     // by time
  // Time is up but a third run is still needed.
  EXPECT_DOUBLE_EQ(RepetitionFraction(policy, 2, 3), 2.0 / 3);
  EXPECT_DOUBLE_EQ(RepetitionFraction(policy, 3, 3), 1);
  EXPECT_DOUBLE_EQ(RepetitionFraction(policy, 50, 0), 1);
}

}  // namespace
}  // namespace fleetbench::agent
