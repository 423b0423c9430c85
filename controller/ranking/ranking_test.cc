#include "controller/ranking/ranking.h"

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "controller/ranking/price_catalog.h"
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
  return NodeSeries{std::move(name), std::move(labels), std::move(values), {}, {}, {}};
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

// --- Prices: labels, the catalog at the time of measurement, spot. ---

const absl::Time kJan = absl::FromUnixMillis(1'735'689'600'000);  // 2025-01-01
const absl::Time kFeb = absl::FromUnixMillis(1'738'368'000'000);  // 2025-02-01

v1::CatalogPrice Row(const std::string& type, absl::Time from, double price,
                     std::optional<double> spot = std::nullopt,
                     const std::string& currency = "USD") {
  v1::CatalogPrice p;
  p.set_provider("acme");
  p.set_region("us-east");
  p.set_instance_type(type);
  p.set_effective_from_unix_ms(absl::ToUnixMillis(from));
  p.set_price_per_hour(price);
  if (spot) p.set_spot_price_per_hour(*spot);
  p.set_currency(currency);
  return p;
}

// A node of an offer, measured at the given times (one value of 2 each).
NodeSeries Offer(std::string name, const std::string& type, std::vector<absl::Time> times,
                 std::map<std::string, std::string> labels = {}) {
  labels["provider"] = "acme";
  labels["region"] = "us-east";
  labels["instance_type"] = type;
  std::vector<double> values(times.size(), 2.0);
  return NodeSeries{std::move(name), std::move(labels), std::move(values), std::move(times), {}, {}};
}

TEST(RankPriceTest, TheCatalogPricesEachResultAtThePriceInForceWhenMeasured) {
  const PriceCatalog catalog({Row("h100x8", kJan, 26), Row("h100x8", kFeb, 24)});
  const absl::Duration day = absl::Hours(24);
  auto response = RankByCostPerThroughput(
      Metric("gemm.cpu.fp32.tflops", true), v1::RANK_GROUPING_NODE,
      {Offer("both", "h100x8", {kJan + 14 * day, kJan + 20 * day, kFeb + 9 * day, kFeb + 19 * day}),
       Offer("feb", "h100x8", {kFeb + day}), Offer("jan", "h100x8", {kJan + day})},
      {v1::PRICE_KIND_ON_DEMAND, &catalog});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->price(), v1::PRICE_KIND_ON_DEMAND);
  EXPECT_THAT(Groups(*response), ElementsAre("feb", "both", "jan"));
  const v1::RankRow& feb = response->rows(0);
  EXPECT_EQ(feb.price_per_hour(), 24);
  EXPECT_EQ(feb.cost_per_unit(), 12);
  EXPECT_EQ(feb.price_source(), kPriceFromCatalog);
  EXPECT_EQ(feb.currency(), "USD");
  EXPECT_EQ(feb.price_effective_from_unix_ms(), absl::ToUnixMillis(kFeb));
  const v1::RankRow& both = response->rows(1);
  EXPECT_EQ(both.price_per_hour(), 25);  // median of 26, 26, 24, 24
  EXPECT_EQ(both.price_effective_from_unix_ms(), absl::ToUnixMillis(kFeb));
  EXPECT_EQ(response->rows(2).price_per_hour(), 26);
  EXPECT_EQ(response->rows(2).price_effective_from_unix_ms(), absl::ToUnixMillis(kJan));
}

TEST(RankPriceTest, ALabelOverridesTheCatalogAndAGroupSaysItUsedBoth) {
  const PriceCatalog catalog({Row("h100x8", kJan, 26)});
  auto response = RankByCostPerThroughput(
      Metric("gemm.cpu.fp32.tflops", true), v1::RANK_GROUPING_INSTANCE_TYPE,
      {Offer("labelled", "h100x8", {kFeb}, {{kPriceLabel, "10"}}),
       Offer("listed", "h100x8", {kFeb})},
      {v1::PRICE_KIND_ON_DEMAND, &catalog});
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->rows_size(), 1);
  EXPECT_EQ(response->rows(0).price_per_hour(), 18);  // median of 10 and 26
  EXPECT_EQ(response->rows(0).price_source(), kPriceFromBoth);
  auto by_node = RankByCostPerThroughput(Metric("gemm.cpu.fp32.tflops", true),
                                         v1::RANK_GROUPING_NODE,
                                         {Offer("labelled", "h100x8", {kFeb}, {{kPriceLabel, "10"}})},
                                         {v1::PRICE_KIND_ON_DEMAND, &catalog});
  ASSERT_TRUE(by_node.ok()) << by_node.status();
  EXPECT_EQ(by_node->rows(0).price_per_hour(), 10);
  EXPECT_EQ(by_node->rows(0).price_source(), kPriceFromLabel);
  EXPECT_EQ(by_node->rows(0).price_effective_from_unix_ms(), 0);
}

TEST(RankPriceTest, SpotUsesSpotPricesAndSaysWhereThereAreNone) {
  const PriceCatalog catalog({Row("h100x8", kJan, 26, 9), Row("a10", kJan, 1.1)});
  auto response = RankByCostPerThroughput(
      Metric("gemm.cpu.fp32.tflops", true), v1::RANK_GROUPING_NODE,
      {// An on-demand label does not price spot: the catalog's spot price does.
       Offer("h100", "h100x8", {kFeb}, {{kPriceLabel, "30"}}),
       Offer("a10", "a10", {kFeb}),
       Offer("spot-label", "a10", {kFeb}, {{kSpotPriceLabel, "0.5"}})},
      {v1::PRICE_KIND_SPOT, &catalog});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->price(), v1::PRICE_KIND_SPOT);
  EXPECT_THAT(Groups(*response), ElementsAre("spot-label", "h100", "a10"));
  EXPECT_EQ(response->rows(0).price_per_hour(), 0.5);
  EXPECT_EQ(response->rows(0).price_source(), kPriceFromLabel);
  EXPECT_EQ(response->rows(1).price_per_hour(), 9);
  EXPECT_EQ(response->rows(1).price_source(), kPriceFromCatalog);
  const v1::RankRow& a10 = response->rows(2);
  EXPECT_FALSE(a10.priced());
  EXPECT_THAT(a10.price_note(), HasSubstr("no spot price for acme/us-east/a10"));
}

TEST(RankPriceTest, UnpricedNodesSayWhy) {
  const PriceCatalog catalog({Row("h100x8", kFeb, 24)});
  auto response = RankByCostPerThroughput(
      Metric("gemm.cpu.fp32.tflops", true), v1::RANK_GROUPING_NODE,
      {Offer("early", "h100x8", {kJan}), Offer("partly", "h100x8", {kJan, kFeb}),
       Offer("unlisted", "b200", {kFeb}), Node("bare", {2}),
       Offer("bad-label", "h100x8", {kFeb}, {{kPriceLabel, "cheap"}})},
      {v1::PRICE_KIND_ON_DEMAND, &catalog});
  ASSERT_TRUE(response.ok()) << response.status();
  std::map<std::string, v1::RankRow> rows;
  for (const v1::RankRow& r : response->rows()) rows[r.group()] = r;
  EXPECT_FALSE(rows["early"].priced());
  EXPECT_THAT(rows["early"].price_note(),
              HasSubstr("1 measured before the catalog's first row for acme/us-east/h100x8 "
                        "(2025-02-01)"));
  EXPECT_TRUE(rows["partly"].priced());
  EXPECT_EQ(rows["partly"].price_per_hour(), 24);
  EXPECT_THAT(rows["partly"].price_note(), HasSubstr("priced by 1 of 2 results"));
  EXPECT_THAT(rows["unlisted"].price_note(), HasSubstr("no catalog row for acme/us-east/b200"));
  EXPECT_THAT(rows["bare"].price_note(),
              HasSubstr("no provider, region and instance_type labels"));
  // A label that is not a price is the user's mistake, not a reason to
  // fall back to the catalog.
  EXPECT_FALSE(rows["bad-label"].priced());
  EXPECT_THAT(rows["bad-label"].price_note(), HasSubstr("price_per_hour='cheap'"));
  auto no_catalog = RankByCostPerThroughput(Metric("gemm.cpu.fp32.tflops", true),
                                            v1::RANK_GROUPING_NODE, {Node("bare", {2})});
  ASSERT_TRUE(no_catalog.ok());
  EXPECT_EQ(no_catalog->rows(0).price_note(), "no price_per_hour label and no price catalog");
}

TEST(RankPriceTest, ACurrencyLabelPricesInItsCurrencyAndMixedCurrenciesAreNotCompared) {
  const PriceCatalog catalog({Row("h100x8", kJan, 22, std::nullopt, "EUR")});
  auto response = RankByCostPerThroughput(
      Metric("gemm.cpu.fp32.tflops", true), v1::RANK_GROUPING_INSTANCE_TYPE,
      {Offer("eur", "h100x8", {kFeb}), Offer("usd", "h100x8", {kFeb}, {{kPriceLabel, "26"}}),
       Offer("eur-label", "a10", {kFeb}, {{kPriceLabel, "1"}, {kCurrencyLabel, "EUR"}}),
       Offer("odd", "l4", {kFeb}, {{kPriceLabel, "1"}, {kCurrencyLabel, "euro"}})},
      {v1::PRICE_KIND_ON_DEMAND, &catalog});
  ASSERT_TRUE(response.ok()) << response.status();
  std::map<std::string, v1::RankRow> rows;
  for (const v1::RankRow& r : response->rows()) rows[r.group()] = r;
  EXPECT_FALSE(rows["h100x8"].priced());
  EXPECT_EQ(rows["h100x8"].price_per_hour(), 0);
  EXPECT_THAT(rows["h100x8"].price_note(), HasSubstr("several currencies (EUR, USD)"));
  EXPECT_TRUE(rows["a10"].priced());
  EXPECT_EQ(rows["a10"].currency(), "EUR");
  EXPECT_FALSE(rows["l4"].priced());
  EXPECT_THAT(rows["l4"].price_note(), HasSubstr("currency='euro'"));
}

TEST(RankPriceTest, TimesMustMatchValues) {
  NodeSeries node = Offer("n", "h100x8", {kJan, kFeb});
  node.values.pop_back();
  auto response = RankByCostPerThroughput(Metric("gemm.cpu.fp32.tflops", true),
                                          v1::RANK_GROUPING_NODE, {node});
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(response.status().message(), HasSubstr("has 1 values and 2 times"));
}

}  // namespace
}  // namespace fleetbench::controller
