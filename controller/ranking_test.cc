#include "controller/ranking.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A metric as a plugin would declare it; the unit is the name's last part,
// as the project's metric names are written.
v1::MetricDescriptor Metric(const std::string& name, bool higher_is_better) {
  v1::MetricDescriptor m;
  m.set_name(name);
  m.set_unit(name.substr(name.rfind('.') + 1));
  m.set_direction(higher_is_better ? v1::METRIC_DIRECTION_HIGHER_IS_BETTER
                                   : v1::METRIC_DIRECTION_LOWER_IS_BETTER);
  return m;
}

NodeSeries Node(std::string name, std::vector<double> values,
                std::map<std::string, std::string> labels = {}) {
  return NodeSeries{std::move(name), std::move(labels), std::move(values)};
}

NodeSeries Priced(std::string name, std::vector<double> values,
                  std::string price,
                  std::map<std::string, std::string> labels = {}) {
  labels[kPriceLabel] = std::move(price);
  return Node(std::move(name), std::move(values), std::move(labels));
}

std::vector<std::string> Groups(const v1::RankResponse& response) {
  std::vector<std::string> groups;
  for (const v1::RankRow& row : response.rows()) groups.push_back(row.group());
  return groups;
}

void ExpectNoInfOrNan(const v1::RankResponse& response) {
  for (const v1::RankRow& row : response.rows()) {
    for (double v : {row.median(), row.p10(), row.p90(), row.price_per_hour(),
                     row.cost_per_unit()}) {
      EXPECT_TRUE(std::isfinite(v)) << row.group();
    }
  }
}

TEST(RankTest, SameThroughputCheaperFirst) {
  auto response = RankByCostPerThroughput(
      Metric("gemm.cpu.fp32.tflops", true), v1::RANK_GROUPING_NODE,
      {Priced("c", {2, 2, 2}, "4"), Priced("a", {2, 2}, "1"),
       Priced("b", {2}, "2")});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_THAT(Groups(*response), ElementsAre("a", "b", "c"));
  EXPECT_DOUBLE_EQ(response->rows(0).cost_per_unit(), 0.5);
  EXPECT_DOUBLE_EQ(response->rows(1).cost_per_unit(), 1.0);
  EXPECT_DOUBLE_EQ(response->rows(2).cost_per_unit(), 2.0);
  EXPECT_EQ(response->rows(2).run_count(), 3u);
  EXPECT_EQ(response->rows(2).node_count(), 1u);
  EXPECT_TRUE(response->rows(0).priced());
  EXPECT_EQ(response->metric(), "gemm.cpu.fp32.tflops");
  EXPECT_EQ(response->unit(), "tflops");
  EXPECT_EQ(response->by(), v1::RANK_GROUPING_NODE);
  EXPECT_TRUE(response->higher_is_better());
}

TEST(RankTest, CheaperButSlowerCanLose) {
  // 1 USD/h for 1 unit costs more per unit than 3 USD/h for 6 units.
  auto response = RankByCostPerThroughput(
      Metric("m.tflops", true), v1::RANK_GROUPING_NODE,
      {Priced("slow", {1}, "1"), Priced("fast", {6}, "3")});
  ASSERT_TRUE(response.ok());
  EXPECT_THAT(Groups(*response), ElementsAre("fast", "slow"));
  EXPECT_DOUBLE_EQ(response->rows(0).cost_per_unit(), 0.5);
}

TEST(RankTest, GroupStatisticsAreOverNodeMedians) {
  // n1 has many runs; grouping must count it once, by its median.
  std::vector<double> many(99, 10.0);
  auto response = RankByCostPerThroughput(
      Metric("m.tflops", true), v1::RANK_GROUPING_INSTANCE_TYPE,
      {Priced("n1", many, "2", {{"instance_type", "big"}}),
       Priced("n2", {1, 2, 3}, "4", {{"instance_type", "big"}}),
       Priced("n3", {4}, "3", {{"instance_type", "big"}}),
       Priced("s1", {5, 5}, "1", {{"instance_type", "small"}})});
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->rows_size(), 2);
  // big: node medians {10, 2, 4} -> median 4, price median of {2,4,3} = 3,
  // cost 0.75. small: median 5, price 1, cost 0.2.
  EXPECT_THAT(Groups(*response), ElementsAre("small", "big"));
  const v1::RankRow& big = response->rows(1);
  EXPECT_EQ(big.node_count(), 3u);
  EXPECT_EQ(big.run_count(), 103u);
  EXPECT_DOUBLE_EQ(big.median(), 4);
  EXPECT_DOUBLE_EQ(big.p10(), 2.4);  // {2,4,10}: 2 + 0.2·(4-2)
  EXPECT_DOUBLE_EQ(big.p90(), 8.8);  // 4 + 0.8·(10-4)
  EXPECT_DOUBLE_EQ(big.price_per_hour(), 3);
  EXPECT_DOUBLE_EQ(big.cost_per_unit(), 0.75);
  EXPECT_TRUE(big.priced());
}

TEST(RankTest, PercentilesByNodeAreOverTheNodesRuns) {
  auto response = RankByCostPerThroughput(
      Metric("m.tflops", true), v1::RANK_GROUPING_NODE,
      {Priced("n", {10, 1, 7, 3, 5, 9, 2, 8, 4, 6, 11}, "1")});
  ASSERT_TRUE(response.ok());
  const v1::RankRow& row = response->rows(0);
  EXPECT_DOUBLE_EQ(row.median(), 6);
  EXPECT_DOUBLE_EQ(row.p10(), 2);   // rank 0.1·10 = 1 -> 2
  EXPECT_DOUBLE_EQ(row.p90(), 10);  // rank 0.9·10 = 9 -> 10
  EXPECT_EQ(row.run_count(), 11u);
}

TEST(RankTest, MissingLabelGoesToNoneGroup) {
  auto response = RankByCostPerThroughput(
      Metric("m.tflops", true), v1::RANK_GROUPING_REGION,
      {Priced("a", {1}, "1", {{"region", "eu"}}), Priced("b", {1}, "1"),
       Priced("c", {1}, "1", {{"region", ""}})});
  ASSERT_TRUE(response.ok());
  EXPECT_THAT(Groups(*response), ElementsAre("(none)", "eu"));
  EXPECT_EQ(response->rows(0).node_count(), 2u);
}

TEST(RankTest, MissingOrBadPriceIsUnpricedAndRanksAfterPriced) {
  auto response = RankByCostPerThroughput(
      Metric("m.tflops", true), v1::RANK_GROUPING_NODE,
      {Node("no-price", {100}), Priced("zero", {90}, "0"),
       Priced("negative", {80}, "-1"), Priced("text", {70}, "cheap"),
       Priced("nan", {60}, "nan"), Priced("inf", {50}, "inf"),
       Priced("priced", {1}, "10")});
  ASSERT_TRUE(response.ok());
  // The priced node is first although it is by far the slowest; unpriced
  // ones follow, fastest first.
  EXPECT_THAT(Groups(*response), ElementsAre("priced", "no-price", "zero",
                                             "negative", "text", "nan", "inf"));
  for (int i = 1; i < response->rows_size(); ++i) {
    EXPECT_FALSE(response->rows(i).priced());
    EXPECT_EQ(response->rows(i).price_per_hour(), 0);
    EXPECT_EQ(response->rows(i).cost_per_unit(), 0);
  }
  ExpectNoInfOrNan(*response);
}

TEST(RankTest, GroupIsPricedWhenAnyMemberIs) {
  auto response =
      RankByCostPerThroughput(Metric("m.tflops", true), v1::RANK_GROUPING_PROVIDER,
                              {Priced("a", {4}, "2", {{"provider", "p"}}),
                               Priced("b", {2}, "bad", {{"provider", "p"}}),
                               Node("c", {6}, {{"provider", "p"}})});
  ASSERT_TRUE(response.ok());
  const v1::RankRow& row = response->rows(0);
  EXPECT_TRUE(row.priced());
  EXPECT_EQ(row.node_count(), 3u);
  EXPECT_DOUBLE_EQ(row.price_per_hour(), 2);  // only a's price counts
  EXPECT_DOUBLE_EQ(row.median(), 4);          // all three nodes count
  EXPECT_DOUBLE_EQ(row.cost_per_unit(), 0.5);
}

TEST(RankTest, LowerIsBetterMultipliesPriceByMedian) {
  auto response = RankByCostPerThroughput(
      Metric("nccl.allreduce.latency.us", false), v1::RANK_GROUPING_NODE,
      {Priced("fast-dear", {10}, "4"), Priced("slow-cheap", {30}, "1"),
       Priced("slow-dear", {30}, "4"), Node("fastest-unpriced", {5}),
       Node("slow-unpriced", {50})});
  ASSERT_TRUE(response.ok());
  // Costs: slow-cheap 30, fast-dear 40, slow-dear 120; unpriced: lower first.
  EXPECT_THAT(Groups(*response),
              ElementsAre("slow-cheap", "fast-dear", "slow-dear",
                          "fastest-unpriced", "slow-unpriced"));
  EXPECT_DOUBLE_EQ(response->rows(0).cost_per_unit(), 30);
  EXPECT_DOUBLE_EQ(response->rows(1).cost_per_unit(), 40);
  EXPECT_EQ(response->unit(), "us");
  EXPECT_FALSE(response->higher_is_better());
}

TEST(RankTest, NonPositiveMedianIsUnpricedAtTheEnd) {
  auto response = RankByCostPerThroughput(
      Metric("m.tflops", true), v1::RANK_GROUPING_NODE,
      {Priced("zero", {0, 0, 0}, "1"), Priced("neg", {-1}, "1"),
       Priced("ok", {1}, "100"), Node("unpriced", {0.5})});
  ASSERT_TRUE(response.ok());
  EXPECT_THAT(Groups(*response), ElementsAre("ok", "unpriced", "zero", "neg"));
  for (const char* name : {"zero", "neg"}) {
    for (const v1::RankRow& row : response->rows()) {
      if (row.group() != name) continue;
      EXPECT_FALSE(row.priced());
      EXPECT_EQ(row.cost_per_unit(), 0);
      EXPECT_DOUBLE_EQ(row.price_per_hour(), 1);  // still shown
    }
  }
  ExpectNoInfOrNan(*response);
}

TEST(RankTest, ZeroLatencyIsNotFree) {
  auto response = RankByCostPerThroughput(
      Metric("m.us", false), v1::RANK_GROUPING_NODE,
      {Priced("zero", {0}, "1"), Priced("real", {10}, "1")});
  ASSERT_TRUE(response.ok());
  EXPECT_THAT(Groups(*response), ElementsAre("real", "zero"));
  EXPECT_FALSE(response->rows(1).priced());
}

TEST(RankTest, OverflowingCostIsNotPrinted) {
  auto response = RankByCostPerThroughput(Metric("m.tflops", true), v1::RANK_GROUPING_NODE,
                                          {Priced("tiny", {1e-310}, "1e300")});
  ASSERT_TRUE(response.ok());
  EXPECT_FALSE(response->rows(0).priced());
  ExpectNoInfOrNan(*response);
}

TEST(RankTest, NodesWithoutValuesAreLeftOut) {
  auto response = RankByCostPerThroughput(
      Metric("m.tflops", true), v1::RANK_GROUPING_INSTANCE_TYPE,
      {Priced("empty", {}, "1", {{"instance_type", "x"}}),
       Priced("nan-only", {std::nan("")}, "1", {{"instance_type", "y"}}),
       Priced("mixed", {std::nan(""), 2, INFINITY}, "1",
              {{"instance_type", "z"}})});
  ASSERT_TRUE(response.ok());
  EXPECT_THAT(Groups(*response), ElementsAre("z"));
  EXPECT_EQ(response->rows(0).run_count(), 1u);
  EXPECT_DOUBLE_EQ(response->rows(0).median(), 2);
}

TEST(RankTest, EmptyInputGivesNoRows) {
  auto response = RankByCostPerThroughput(Metric("m.tflops", true), v1::RANK_GROUPING_NODE, {});
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->rows_size(), 0);
}

TEST(RankTest, BadByListsAllowedValues) {
  auto response =
      RankByCostPerThroughput(Metric("m.tflops", true), static_cast<v1::RankGrouping>(99), {Node("a", {1})});
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(response.status().message()),
              HasSubstr("grouping 99; use one of node, instance_type, "
                        "region, provider"));
}

TEST(RankTest, EmptyMetricAndDuplicateNodeAreRejected) {
  EXPECT_EQ(RankByCostPerThroughput(Metric("", true), v1::RANK_GROUPING_NODE, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto response = RankByCostPerThroughput(Metric("m.tflops", true), v1::RANK_GROUPING_NODE,
                                          {Node("a", {1}), Node("a", {2})});
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(response.status().message()),
              HasSubstr("'a' is listed twice"));
}

TEST(RankTest, TiesBreakByMedianThenNameWhateverTheInputOrder) {
  // Equal cost 0.01: 2/200 and 1/100; the faster one wins the tie. Equal
  // cost and median: by name. Unpriced with equal median: by name.
  std::vector<NodeSeries> nodes = {
      Priced("b", {100}, "1"), Priced("a", {100}, "1"),
      Priced("fast", {200}, "2"), Node("z", {5}), Node("y", {5})};
  const std::vector<std::string> want = {"fast", "a", "b", "y", "z"};
  for (int i = 0; i < 5; ++i) {
    std::rotate(nodes.begin(), nodes.begin() + 1, nodes.end());
    auto response = RankByCostPerThroughput(Metric("m.tflops", true), v1::RANK_GROUPING_NODE, nodes);
    ASSERT_TRUE(response.ok());
    EXPECT_EQ(Groups(*response), want);
  }
  std::reverse(nodes.begin(), nodes.end());
  auto response = RankByCostPerThroughput(Metric("m.tflops", true), v1::RANK_GROUPING_NODE, nodes);
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(Groups(*response), want);
}

// The worked example of docs/ranking.md; keep the two in step.
TEST(RankTest, WorkedExampleFromDocs) {
  const std::vector<NodeSeries> nodes = {
      Priced("a1", {1.20, 1.22, 1.18, 1.21, 1.19}, "0.68",
             {{"instance_type", "c7.4x"}}),
      Priced("a2", {1.10, 1.14, 1.12}, "0.68", {{"instance_type", "c7.4x"}}),
      Priced("b1", {2.50, 2.46, 2.54}, "1.60", {{"instance_type", "m7.8x"}}),
      Node("b2", {2.30}, {{"instance_type", "m7.8x"}}),
      Priced("b3", {2.40, 2.42}, "1.60", {{"instance_type", "m7.8x"}}),
      Node("c1", {0.61, 0.60, 0.62}, {{"instance_type", "r7.2x"}}),
  };
  auto response = RankByCostPerThroughput(Metric("gemm.cpu.fp32.tflops", true), v1::RANK_GROUPING_INSTANCE_TYPE, nodes);
  ASSERT_TRUE(response.ok());
  EXPECT_THAT(Groups(*response), ElementsAre("c7.4x", "m7.8x", "r7.2x"));
  const v1::RankRow& c7 = response->rows(0);
  EXPECT_EQ(c7.node_count(), 2u);
  EXPECT_EQ(c7.run_count(), 8u);
  EXPECT_NEAR(c7.median(), 1.16, 1e-12);
  EXPECT_NEAR(c7.p10(), 1.128, 1e-12);
  EXPECT_NEAR(c7.p90(), 1.192, 1e-12);
  EXPECT_NEAR(c7.price_per_hour(), 0.68, 1e-12);
  EXPECT_NEAR(c7.cost_per_unit(), 0.68 / 1.16, 1e-12);
  const v1::RankRow& m7 = response->rows(1);
  EXPECT_EQ(m7.node_count(), 3u);
  EXPECT_EQ(m7.run_count(), 6u);
  EXPECT_NEAR(m7.median(), 2.41, 1e-12);
  EXPECT_NEAR(m7.p10(), 2.322, 1e-12);
  EXPECT_NEAR(m7.p90(), 2.482, 1e-12);
  EXPECT_NEAR(m7.price_per_hour(), 1.60, 1e-12);
  EXPECT_NEAR(m7.cost_per_unit(), 1.60 / 2.41, 1e-12);
  const v1::RankRow& r7 = response->rows(2);
  EXPECT_FALSE(r7.priced());
  EXPECT_NEAR(r7.median(), 0.61, 1e-12);

  auto by_node =
      RankByCostPerThroughput(Metric("gemm.cpu.fp32.tflops", true), v1::RANK_GROUPING_NODE, nodes);
  ASSERT_TRUE(by_node.ok());
  EXPECT_THAT(Groups(*by_node),
              ElementsAre("a1", "a2", "b1", "b3", "b2", "c1"));
  const v1::RankRow& a1 = by_node->rows(0);
  EXPECT_NEAR(a1.median(), 1.20, 1e-12);
  EXPECT_NEAR(a1.p10(), 1.184, 1e-12);
  EXPECT_NEAR(a1.p90(), 1.216, 1e-12);
  EXPECT_NEAR(a1.cost_per_unit(), 0.68 / 1.20, 1e-12);
}

}  // namespace
}  // namespace fleetbench::controller
