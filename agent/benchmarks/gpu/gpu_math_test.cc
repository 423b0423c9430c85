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
