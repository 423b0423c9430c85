#include "agent/benchmarks/gpu/gpu_math.h"

#include <cstdint>
#include <vector>

#include "agent/benchmarks/gemm_math.h"
#include "gtest/gtest.h"

namespace fleetbench::gpu {
namespace {

TEST(GpuMathTest, GemmFlopsOfTheDefaultSize) {
  // The GPU plugin shares the CPU plugin's FLOP count: 2·8192³.
  EXPECT_DOUBLE_EQ(agent::GemmFlops(8192, 8192, 8192), 2.0 * 8192 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(agent::TflopsFromSeconds(agent::GemmFlops(8192, 8192, 8192),
                                            1.1e-3),
                   2.0 * 8192 * 8192 * 8192 / 1.1e-3 / 1e12);
}

TEST(GpuMathTest, PercentOfPeak) {
  EXPECT_DOUBLE_EQ(PercentOfPeak(742, 989.5), 100.0 * 742 / 989.5);
  EXPECT_DOUBLE_EQ(PercentOfPeak(50, 100), 50);
  EXPECT_EQ(PercentOfPeak(50, 0), 0);
  EXPECT_EQ(PercentOfPeak(50, -1), 0);
}

TEST(GpuMathTest, BusBandwidthFactorsMatchNcclTests) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kReduceScatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllToAll, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kReduce, 1), 1.0);
  EXPECT_EQ(BusBandwidthFactor(Collective::kAllReduce, 1), 0);
  EXPECT_EQ(BusBandwidthFactor(Collective::kAllGather, 0), 0);
  EXPECT_DOUBLE_EQ(BusBandwidth(Collective::kAllReduce, 8, 100), 175);
}

TEST(GpuMathTest, ThrottleFraction) {
  EXPECT_EQ(ThrottleFraction({}), 0);
  // Idle and application clocks are not throttling.
  EXPECT_EQ(ThrottleFraction({kReasonGpuIdle, kReasonApplicationsClocksSetting}),
            0);
  EXPECT_DOUBLE_EQ(ThrottleFraction({0, kReasonSwPowerCap, 0,
                                     kReasonHwThermalSlowdown | kReasonGpuIdle}),
                   0.5);
  EXPECT_DOUBLE_EQ(ThrottleFraction({kReasonSyncBoost, 0}, kReasonSyncBoost), 0.5);
}

}  // namespace
}  // namespace fleetbench::gpu
