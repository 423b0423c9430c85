#include "common/units.h"

#include "gtest/gtest.h"

namespace fleetbench {
namespace {

// Moved from agent/benchmarks/stream/stream_math_test.cc.
TEST(UnitsTest, GigabytesAreDecimal) {
  EXPECT_DOUBLE_EQ(GigabytesPerSecond(2e9, 2), 1);
  EXPECT_DOUBLE_EQ(GigabytesPerSecond(1e9, 0), 0);
  EXPECT_DOUBLE_EQ(GigabytesPerSecond(1e9, -1), 0);
}

// Moved from agent/benchmarks/gpu/gpu_math_test.cc.
TEST(UnitsTest, GigabytesPerSecond) {
  EXPECT_DOUBLE_EQ(GigabytesPerSecond(256.0 * (1 << 20), 0.01),
                   256.0 * (1 << 20) / 0.01 / 1e9);
  EXPECT_EQ(GigabytesPerSecond(1e9, 0), 0);
}

// Moved from agent/benchmarks/net/tcp_engine_test.cc.
TEST(UnitsTest, GbpsIsDecimalBitsPerSecond) {
  EXPECT_DOUBLE_EQ(GbpsFromBytes(1'250'000'000, 1.0), 10.0);
  EXPECT_DOUBLE_EQ(GbpsFromBytes(125'000'000, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(GbpsFromBytes(0, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(GbpsFromBytes(1000, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(GbpsFromBytes(1000, -1.0), 0.0);
}

// Moved from agent/benchmarks/rdma/rdma_benchmark_test.cc.
TEST(UnitsTest, GbpsOfRdmaWrites) {
  EXPECT_DOUBLE_EQ(GbpsFromBytes(125'000'000, 1.0), 1.0);
  EXPECT_EQ(GbpsFromBytes(1, 0), 0);
}

TEST(UnitsTest, BinarySizes) {
  EXPECT_EQ(kMiB, 1024 * 1024);
  EXPECT_EQ(kGiB, 1024 * kMiB);
}

TEST(UnitsTest, FormatNumberKeepsSixSignificantDigits) {
  EXPECT_EQ(FormatNumber(12.345678), "12.3457");
  EXPECT_EQ(FormatNumber(3), "3");
  EXPECT_EQ(FormatNumber(0.5), "0.5");
  EXPECT_EQ(FormatNumber(1234567), "1.23457e+06");
  EXPECT_EQ(FormatNumber(0.0001), "0.0001");
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(-2.5), "-2.5");
}

}  // namespace
}  // namespace fleetbench
