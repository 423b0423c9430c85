// Tests of the time and cost of a given amount of work at measured rates.
#include "controller/ranking/work_cost.h"

#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

using ::testing::HasSubstr;

v1::RankRow* AddRow(v1::RankResponse& rank, const std::string& group, double median,
                    double price) {
  v1::RankRow* row = rank.add_rows();
  row->set_group(group);
  row->set_median(median);
  row->set_node_count(1);
  if (price > 0) {
    row->set_price_per_hour(price);
    row->set_currency("USD");
    row->set_price_source("catalog");
  }
  return row;
}

TEST(WorkCostTest, AnExaFlopAtMeasuredTflops) {
  v1::RankResponse rank;
  rank.set_metric("gemm.gpu.bf16.tflops");
  rank.set_unit("tflops");
  AddRow(rank, "h100", 800, 24);   // 1e18 / 8e14 = 1250 s, 1250/3600*24 = 8.333 USD
  AddRow(rank, "a10", 100, 1.1);   // 10000 s, 3.056 USD
  AddRow(rank, "unpriced", 400, 0);
  auto cost = CostOfWork(rank, 1e18);
  ASSERT_TRUE(cost.ok()) << cost.status();
  EXPECT_EQ(cost->work_unit(), "FLOP");
  EXPECT_EQ(cost->work(), 1e18);
  ASSERT_EQ(cost->rows_size(), 3);
  EXPECT_EQ(cost->rows(0).group(), "a10");
  EXPECT_NEAR(cost->rows(0).seconds(), 10000, 1e-9);
  EXPECT_NEAR(cost->rows(0).rate_per_second(), 1e14, 1);
  EXPECT_NEAR(cost->rows(0).cost(), 10000.0 / 3600 * 1.1, 1e-9);
  EXPECT_EQ(cost->rows(0).currency(), "USD");
  EXPECT_EQ(cost->rows(1).group(), "h100");
  EXPECT_NEAR(cost->rows(1).seconds(), 1250, 1e-9);
  EXPECT_NEAR(cost->rows(1).cost(), 1250.0 / 3600 * 24, 1e-9);
  EXPECT_EQ(cost->rows(2).group(), "unpriced");
  EXPECT_FALSE(cost->rows(2).priced());
  EXPECT_NEAR(cost->rows(2).seconds(), 2500, 1e-9);
}

TEST(WorkCostTest, RatesFollowTheUnit) {
  for (const auto& [unit, median, work, seconds] :
       std::vector<std::tuple<std::string, double, double, double>>{
           {"GBps", 2, 1e12, 500},       // a TB at 2 GB/s
           {"MBps", 500, 1e9, 2},        // a GB at 500 MB/s
           {"Gbps", 10, 1e10, 1},        // 10 Gbit at 10 Gbit/s
           {"iops", 1000, 1e6, 1000},    // a million reads at 1000/s
           {"us", 250, 4000, 1},         // 4000 operations of 250 us each
           {"samples/s", 2000, 1e6, 500}}) {  // a workload's million samples
    v1::RankResponse rank;
    rank.set_metric("m");
    rank.set_unit(unit);
    AddRow(rank, "g", median, 3.6);
    auto cost = CostOfWork(rank, work);
    ASSERT_TRUE(cost.ok()) << unit << ": " << cost.status();
    EXPECT_NEAR(cost->rows(0).seconds(), seconds, 1e-9 * seconds) << unit;
    EXPECT_NEAR(cost->rows(0).cost(), seconds / 1000, 1e-12) << unit;
  }
}

TEST(WorkCostTest, RefusesWorkThatIsNotAnAmountAndUnitsThatAreNotRates) {
  v1::RankResponse rank;
  rank.set_metric("net.tcp.retransmits.count");
  rank.set_unit("count");
  EXPECT_THAT(CostOfWork(rank, 1).status().message(), HasSubstr("not a rate of work"));
  rank.set_unit("/s");
  EXPECT_THAT(CostOfWork(rank, 1).status().message(), HasSubstr("not a rate of work"))
      << "a rate of nothing";
  rank.set_unit("tflops");
  for (double work : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
    EXPECT_EQ(CostOfWork(rank, work).status().code(), absl::StatusCode::kInvalidArgument) << work;
  }
}

TEST(WorkCostTest, AZeroRateHasNoTime) {
  v1::RankResponse rank;
  rank.set_metric("m");
  rank.set_unit("tflops");
  AddRow(rank, "dead", 0, 1);
  AddRow(rank, "slow", 1e-310, 1);  // the time overflows
  auto cost = CostOfWork(rank, 1e18);
  ASSERT_TRUE(cost.ok()) << cost.status();
  for (const v1::CostRow& row : cost->rows()) {
    EXPECT_FALSE(row.priced()) << row.group();
    EXPECT_EQ(row.seconds(), 0) << row.group();
    EXPECT_TRUE(std::isfinite(row.cost())) << row.group();
  }
}

TEST(WorkCostTest, AWorkloadsSetUpIsCostedApartAtEachGroupsPrice) {
  EXPECT_EQ(WorkloadSetupMetric("workload.train.samples_per_s"), "workload.train.setup_s");
  EXPECT_EQ(WorkloadSetupMetric("workload.train.setup_s"), "");
  EXPECT_EQ(WorkloadSetupMetric("workload.train"), "");
  EXPECT_EQ(WorkloadSetupMetric("gemm.cpu.fp32.tflops"), "");

  v1::RankResponse rank;
  rank.set_metric("workload.train.samples_per_s");
  rank.set_unit("samples/s");
  AddRow(rank, "big", 4000, 2);
  AddRow(rank, "small", 1000, 0);
  AddRow(rank, "none", 500, 1);
  auto cost = CostOfWork(rank, 3.6e6);
  ASSERT_TRUE(cost.ok()) << cost.status();
  v1::RankResponse setups;
  setups.set_metric("workload.train.setup_s");
  AddRow(setups, "big", 90, 2);    // 90 s at 2 USD/h: 0.05 USD
  AddRow(setups, "small", 30, 0);  // unpriced: time only
  AddSetupCost(setups, *cost);
  std::map<std::string, v1::CostRow> rows;
  for (const v1::CostRow& r : cost->rows()) rows[r.group()] = r;
  EXPECT_EQ(rows["big"].setup_seconds(), 90);
  EXPECT_NEAR(rows["big"].setup_cost(), 0.05, 1e-12);
  EXPECT_NEAR(rows["big"].cost(), 0.5, 1e-12) << "the work's cost is unchanged";
  EXPECT_EQ(rows["small"].setup_seconds(), 30);
  EXPECT_EQ(rows["small"].setup_cost(), 0);
  EXPECT_EQ(rows["none"].setup_seconds(), 0) << "no set-up measured there";
}

}  // namespace
}  // namespace fleetbench::controller
