#include "common/bus_bandwidth.h"

#include "gtest/gtest.h"

namespace fleetbench {
namespace {

TEST(BusBandwidthTest, FactorsMatchNcclTests) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kReduceScatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kAllToAll, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(Collective::kReduce, 1), 1.0);
}

TEST(BusBandwidthTest, OneRankMovesNothing) {
  EXPECT_EQ(BusBandwidthFactor(Collective::kAllReduce, 1), 0);
  EXPECT_EQ(BusBandwidthFactor(Collective::kAllGather, 1), 0);
  EXPECT_EQ(BusBandwidthFactor(Collective::kReduceScatter, 0), 0);
}

TEST(BusBandwidthTest, BusBandwidthScalesAlgbw) {
  EXPECT_DOUBLE_EQ(BusBandwidth(Collective::kAllReduce, 8, 100), 175);
  EXPECT_DOUBLE_EQ(BusBandwidth(Collective::kAllGather, 3, 30), 20);
}

}  // namespace
}  // namespace fleetbench
