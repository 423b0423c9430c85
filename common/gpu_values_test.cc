#include "common/gpu_values.h"

#include <cstdint>
#include <optional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::gpu {
namespace {

using ::testing::ElementsAre;

TEST(GpuValuesTest, DecodesClockEventReasons) {
  EXPECT_TRUE(DecodeClockEventReasons(0).empty());
  EXPECT_THAT(DecodeClockEventReasons(kReasonSwPowerCap | kReasonGpuIdle),
              ElementsAre("gpu_idle", "sw_power_cap"));
  EXPECT_THAT(DecodeClockEventReasons(0x1ff),
              ElementsAre("gpu_idle", "applications_clocks_setting",
                          "sw_power_cap", "hw_slowdown", "sync_boost",
                          "sw_thermal_slowdown", "hw_thermal_slowdown",
                          "hw_power_brake_slowdown", "display_clock_setting"));
  EXPECT_THAT(DecodeClockEventReasons(uint64_t{1} << 40),
              ElementsAre("bit_40"));
}

TEST(GpuValuesTest, PciAddressesCompareAcrossSpellings) {
  const std::optional<PciAddress> nvml = ParsePciAddress("00000000:3B:00.0");
  ASSERT_TRUE(nvml.has_value());
  EXPECT_EQ(nvml->domain, 0u);
  EXPECT_EQ(nvml->bus, 0x3bu);
  EXPECT_EQ(nvml->device, 0u);
  EXPECT_EQ(nvml->function, 0u);
  EXPECT_TRUE(SamePciAddress("00000000:3B:00.0", "0000:3b:00.0"));
  EXPECT_TRUE(SamePciAddress("3b:00.0", "0000:3B:00.0"));
  EXPECT_FALSE(SamePciAddress("0000:3b:00.0", "0000:3c:00.0"));
  EXPECT_FALSE(SamePciAddress("0001:3b:00.0", "0000:3b:00.0"));
  EXPECT_FALSE(ParsePciAddress("").has_value());
  EXPECT_FALSE(ParsePciAddress("0000:3b:00").has_value());
  EXPECT_FALSE(ParsePciAddress("0000:zz:00.0").has_value());
  EXPECT_FALSE(ParsePciAddress("0000:3b:20.0").has_value());  // device > 31
  EXPECT_FALSE(SamePciAddress("junk", "junk"));
}

TEST(GpuValuesTest, FormatsCudaVersions) {
  EXPECT_EQ(FormatCudaVersion(12040), "12.4");
  EXPECT_EQ(FormatCudaVersion(13000), "13.0");
  EXPECT_EQ(FormatCudaVersion(11080), "11.8");
  EXPECT_EQ(FormatCudaVersion(0), "");
}

TEST(GpuValuesTest, PcieTheoreticalRatesPerDirection) {
  EXPECT_NEAR(PcieTheoreticalGBps(3, 16), 15.75, 0.01);
  EXPECT_NEAR(PcieTheoreticalGBps(4, 16), 31.5, 0.02);
  EXPECT_NEAR(PcieTheoreticalGBps(5, 16), 63.0, 0.03);
  EXPECT_NEAR(PcieTheoreticalGBps(4, 8), 15.75, 0.01);
  EXPECT_DOUBLE_EQ(PcieTheoreticalGBps(1, 16), 4.0);  // 8b/10b
  EXPECT_DOUBLE_EQ(PcieTheoreticalGBps(2, 16), 8.0);
  EXPECT_NEAR(PcieTheoreticalGBps(6, 16), 121.0, 0.05);
  EXPECT_EQ(PcieTheoreticalGBps(0, 16), 0);
  EXPECT_EQ(PcieTheoreticalGBps(7, 16), 0);
  EXPECT_EQ(PcieTheoreticalGBps(4, 0), 0);
}

TEST(GpuValuesTest, PcieLinksRoundTrip) {
  EXPECT_EQ(FormatPcieLink(4, 8), "Gen4 x8");
  EXPECT_EQ(ParsePcieLink(FormatPcieLink(5, 16)), std::make_pair(5, 16));
  for (const char* bad : {"", "Gen4", "Gen4 x", "gen4 x8", "Gen0 x8",
                          "Gen4 x-1", "unknown: not supported", "Gen4  x8"}) {
    EXPECT_EQ(ParsePcieLink(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace fleetbench::gpu
