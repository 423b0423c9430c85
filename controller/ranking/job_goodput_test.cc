#include "controller/ranking/job_goodput.h"

#include <string>
#include <vector>

#include "controller/ranking/ranking.h"
#include "controller/ranking/reliability_table.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

// Two instance types: "fast" measures 20% more per dollar and is
// interrupted 4 times per 1,000 node-hours; "steady" once per 20,000.
struct Fleet {
  v1::RankResponse rank;
  std::vector<v1::ReliabilityGroup> reliability;
};

Fleet TwoTypes() {
  v1::MetricDescriptor metric;
  metric.set_name("workload.train.samples_per_s");
  metric.set_unit("samples/s");
  metric.set_direction(v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
  std::vector<NodeSeries> series = {
      {"f1", {{"instance_type", "fast"}, {kPriceLabel, "2.0"}}, {120}, {absl::Now()}, {}, {}},
      {"s1", {{"instance_type", "steady"}, {kPriceLabel, "2.0"}}, {100}, {absl::Now()}, {}, {}},
  };
  Fleet fleet;
  fleet.rank = *RankByCostPerThroughput(metric, v1::RANK_GROUPING_INSTANCE_TYPE, series);
  NodeReliability fast{"f1", {{"instance_type", "fast"}}, 5000, {}};
  fast.interruptions[v1::INTERRUPTION_KIND_OFFLINE] = 20;
  NodeReliability steady{"s1", {{"instance_type", "steady"}}, 20000, {}};
  steady.interruptions[v1::INTERRUPTION_KIND_OFFLINE] = 1;
  fleet.reliability =
      *GroupReliability({fast, steady}, v1::RANK_GROUPING_INSTANCE_TYPE, {});
  return fleet;
}

TEST(JobGoodputTest, TheFasterFlakierTypeWinsAloneAndLosesAtScale) {
  Fleet one = TwoTypes();
  AddJobGoodput(one.reliability, {1}, one.rank);
  ASSERT_EQ(one.rank.rows_size(), 2);
  EXPECT_EQ(one.rank.rows(0).group(), "fast");
  EXPECT_GT(one.rank.rows(0).job().goodput(), 0.99);
  EXPECT_EQ(one.rank.job().nodes(), 1u);

  Fleet big = TwoTypes();
  AddJobGoodput(big.reliability, {512}, big.rank);
  EXPECT_EQ(big.rank.rows(0).group(), "steady");
  EXPECT_EQ(big.rank.rows(1).group(), "fast");
  const v1::RankRow& fast = big.rank.rows(1);
  EXPECT_DOUBLE_EQ(fast.job().interruptions_per_1000_node_hours(), 4);
  EXPECT_LT(fast.job().goodput(), 0.5);
  EXPECT_NEAR(fast.job().effective_cost_per_unit(),
              fast.cost_per_unit() / fast.job().goodput(), 1e-12);
  EXPECT_EQ(big.rank.job().checkpoint_interval_ms(), 30 * 60 * 1000);
}

TEST(JobGoodputTest, AGroupWithoutARecordIsOptimisticAndSaysSo) {
  Fleet fleet = TwoTypes();
  AddJobGoodput({}, {512}, fleet.rank);
  for (const v1::RankRow& row : fleet.rank.rows()) {
    EXPECT_EQ(row.job().goodput(), 1.0);
    EXPECT_FALSE(row.job().enough_data());
  }
}

TEST(JobGoodputTest, CostCountsTheTimeInterruptionsLose) {
  Fleet fleet = TwoTypes();
  v1::CostResponse cost;
  v1::CostRow* row = cost.add_rows();
  row->set_group("fast");
  row->set_seconds(3600);
  row->set_cost(2.0);
  row->set_priced(true);
  AddJobGoodput(fleet.reliability, {512}, cost);
  const double goodput = cost.rows(0).job().goodput();
  EXPECT_NEAR(cost.rows(0).effective_seconds(), 3600 / goodput, 1e-9);
  EXPECT_NEAR(cost.rows(0).effective_cost(), 2.0 / goodput, 1e-12);
}

TEST(JobGoodputTest, JobShapeDefaultsAndRefusals) {
  v1::JobShape proto;
  proto.set_nodes(8);
  auto job = JobShapeOf(proto);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->checkpoint_interval, absl::Minutes(30));
  EXPECT_EQ(job->restart_cost, absl::Minutes(10));
  proto.set_restart_cost_ms(0);
  EXPECT_EQ(JobShapeOf(proto)->restart_cost, absl::ZeroDuration());
  proto.set_nodes(0);
  EXPECT_FALSE(JobShapeOf(proto).ok());
  proto.set_nodes(~uint64_t{0});
  EXPECT_FALSE(JobShapeOf(proto).ok());
  proto.set_nodes(2);
  proto.set_checkpoint_interval_ms(-1);
  EXPECT_FALSE(JobShapeOf(proto).ok());
}

}  // namespace
}  // namespace fleetbench::controller
