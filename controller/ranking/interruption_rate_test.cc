#include "controller/ranking/interruption_rate.h"

#include <cmath>

#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

// Reference values: chi-square quantiles halved (R's qchisq(p, 2k) / 2,
// the same as qgamma(p, k)).
TEST(InterruptionRateTest, GammaQuantileMatchesTables) {
  EXPECT_NEAR(GammaQuantile(1, 0.95), -std::log(0.05), 1e-9);
  EXPECT_NEAR(GammaQuantile(1, 0.05), -std::log(0.95), 1e-9);
  EXPECT_NEAR(GammaQuantile(2, 0.95), 4.743865, 1e-6);
  EXPECT_NEAR(GammaQuantile(10, 0.05), 5.425406, 1e-6);
  EXPECT_NEAR(GammaQuantile(11, 0.95), 16.962219, 1e-6);
  EXPECT_NEAR(GammaQuantile(100, 0.5), 99.66687, 1e-4);
  EXPECT_NEAR(GammaQuantile(0.5, 0.5), 0.2274682, 1e-6);
}

TEST(InterruptionRateTest, RegularizedGammaOnBothSidesOfTheSplit) {
  // P(1, x) = 1 - e^-x; P(k, x) for integer k is a Poisson tail.
  for (double x : {0.1, 1.0, 1.9, 2.1, 5.0, 30.0}) {
    EXPECT_NEAR(RegularizedGammaP(1, x), 1 - std::exp(-x), 1e-12) << x;
  }
  EXPECT_NEAR(RegularizedGammaP(3, 2.0), 1 - std::exp(-2.0) * (1 + 2.0 + 2.0), 1e-12);
  EXPECT_NEAR(RegularizedGammaP(3, 6.0), 1 - std::exp(-6.0) * (1 + 6.0 + 18.0), 1e-12);
  EXPECT_EQ(RegularizedGammaP(2, 0), 0);
}

TEST(InterruptionRateTest, PoissonTail) {
  EXPECT_EQ(PoissonUpperTail(0, 3.0), 1);
  EXPECT_NEAR(PoissonUpperTail(1, 3.0), 1 - std::exp(-3.0), 1e-12);
  // 8 events where 1 was expected: rare.
  EXPECT_LT(PoissonUpperTail(8, 1.0), 1e-4);
}

TEST(InterruptionRateTest, GarwoodIntervalPerNodeHour) {
  // 10 interruptions over 1,000 node-hours.
  RateInterval r = PoissonRateInterval(10, 1000, 0.9);
  EXPECT_DOUBLE_EQ(r.rate, 0.01);
  EXPECT_NEAR(r.lower, 5.425406 / 1000, 1e-8);
  EXPECT_NEAR(r.upper, 16.962219 / 1000, 1e-8);
}

TEST(InterruptionRateTest, NoInterruptionsIsNotAPerfectRecord) {
  RateInterval shortly = PoissonRateInterval(0, 10, 0.9);
  EXPECT_EQ(shortly.rate, 0);
  EXPECT_EQ(shortly.lower, 0);
  EXPECT_NEAR(shortly.upper, -std::log(0.05) / 10, 1e-9);
  // More exposure, a tighter bound.
  EXPECT_LT(PoissonRateInterval(0, 1000, 0.9).upper, shortly.upper / 50);
}

}  // namespace
}  // namespace fleetbench::controller
