// Tests of ranking by a profile (a weighted mix of metrics scored against the
// fleet median) and of the profile table itself.
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "controller/ranking/rank_profiles.h"
#include "controller/ranking/ranking.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::MetricDescriptor Metric(const std::string& name, const std::string& unit,
                            v1::MetricDirection direction) {
  v1::MetricDescriptor m;
  m.set_name(name);
  m.set_unit(unit);
  m.set_direction(direction);
  return m;
}

NodeSeries Node(const std::string& name, double value, const std::string& price,
                const std::string& type = "x") {
  return NodeSeries{name, {{kPriceLabel, price}, {"instance_type", type}}, {value}, {}, {}, {}};
}

// The worked example of docs/ranking.md, Profiles: GEMM (weight 3, higher is
// better) and a latency (weight 1, lower is better). Fleet medians: GEMM
// median{2, 4, 1, 2} = 2, latency median{100, 50, 100} = 100.
std::vector<ProfileInput> Example() {
  ProfileInput gemm{Metric("gemm.cpu.fp32.tflops", "tflops", v1::METRIC_DIRECTION_HIGHER_IS_BETTER),
                    3,
                    {Node("a", 2, "1"), Node("b", 4, "3"), Node("c", 1, "0.5", "y"),
                     Node("d", 2, "1", "y")}};
  ProfileInput latency{Metric("disk.rand_read_4k.p99_us", "us", v1::METRIC_DIRECTION_LOWER_IS_BETTER),
                       1,
                       {Node("a", 100, "1"), Node("b", 50, "3"), Node("c", 100, "0.5", "y")}};
  return {gemm, latency};
}

TEST(RankProfileTest, WorkedExampleByNode) {
  auto response = RankByProfileCost("example", Example(), v1::RANK_GROUPING_NODE);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->profile(), "example");
  EXPECT_EQ(response->unit(), "score");
  ASSERT_EQ(response->profile_metrics_size(), 2);
  EXPECT_EQ(response->profile_metrics(0).fleet_median(), 2);
  EXPECT_EQ(response->profile_metrics(0).node_count(), 4u);
  EXPECT_EQ(response->profile_metrics(1).fleet_median(), 100);
  EXPECT_FALSE(response->profile_metrics(1).higher_is_better());
  std::vector<std::string> groups;
  for (const auto& r : response->rows()) groups.push_back(r.group());
  // c: scores 0.5 and 1, mix 0.5^(3/4) = 0.5946, cost 0.5 / 0.5946 = 0.8409;
  // a: 1 and 1, cost 1; b: 2 and 2, cost 3 / 2 = 1.5; d lacks the latency.
  EXPECT_THAT(groups, ElementsAre("c", "a", "b", "d"));
  const v1::RankRow& c = response->rows(0);
  EXPECT_NEAR(c.median(), std::pow(0.5, 0.75), 1e-12);
  EXPECT_NEAR(c.cost_per_unit(), std::pow(0.5, 0.25), 1e-12);
  ASSERT_EQ(c.components_size(), 2);
  EXPECT_EQ(c.components(0).metric(), "gemm.cpu.fp32.tflops");
  EXPECT_EQ(c.components(0).score(), 0.5);
  EXPECT_EQ(c.components(1).score(), 1);
  EXPECT_TRUE(c.components(1).present());
  EXPECT_NEAR(response->rows(1).cost_per_unit(), 1, 1e-12);
  const v1::RankRow& b = response->rows(2);
  EXPECT_NEAR(b.median(), 2, 1e-12);
  EXPECT_EQ(b.components(1).score(), 2);  // 100 / 50: half the latency
  EXPECT_NEAR(b.cost_per_unit(), 1.5, 1e-12);
  const v1::RankRow& d = response->rows(3);
  EXPECT_FALSE(d.priced());
  EXPECT_EQ(d.median(), 0);
  EXPECT_EQ(d.price_per_hour(), 1);  // known, but there is no score to divide
  EXPECT_TRUE(d.components(0).present());
  EXPECT_FALSE(d.components(1).present());
  EXPECT_THAT(d.price_note(), HasSubstr("not scored, missing disk.rand_read_4k.p99_us"));
}

TEST(RankProfileTest, GroupsScoreTheirMedians) {
  auto response = RankByProfileCost("example", Example(), v1::RANK_GROUPING_INSTANCE_TYPE);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->rows_size(), 2);
  // y = {c, d}: GEMM median{1, 2} = 1.5 (score 0.75); d has no latency but c
  // has, so y is scored on the member that measured it: 100 (score 1).
  // Price median{0.5, 1} = 0.75.
  const v1::RankRow& y = response->rows(0);
  EXPECT_EQ(y.group(), "y");
  EXPECT_NEAR(y.median(), std::pow(0.75, 0.75), 1e-12);
  EXPECT_NEAR(y.cost_per_unit(), 0.75 / std::pow(0.75, 0.75), 1e-12);
  EXPECT_EQ(y.components(0).node_count(), 2u);
  EXPECT_EQ(y.components(1).node_count(), 1u);
  EXPECT_EQ(y.run_count(), 3u);
  // x = {a, b}: GEMM median 3 (score 1.5), latency median 75 (score 4/3),
  // price median{1, 3} = 2.
  const v1::RankRow& x = response->rows(1);
  EXPECT_EQ(x.group(), "x");
  const double mix = std::exp((3 * std::log(1.5) + std::log(4.0 / 3)) / 4);
  EXPECT_NEAR(x.median(), mix, 1e-12);
  EXPECT_NEAR(x.cost_per_unit(), 2 / mix, 1e-12);
  EXPECT_EQ(x.node_count(), 2u);
  EXPECT_EQ(x.run_count(), 4u);
}

TEST(RankProfileTest, AMetricNoAgentDeclaredIsMissingEverywhere) {
  std::vector<ProfileInput> inputs = Example();
  inputs.push_back({Metric("gemm.gpu.bf16.tflops", "", v1::METRIC_DIRECTION_UNSPECIFIED), 1, {}});
  auto response = RankByProfileCost("example", inputs, v1::RANK_GROUPING_NODE);
  ASSERT_TRUE(response.ok()) << response.status();
  for (const v1::RankRow& r : response->rows()) {
    EXPECT_FALSE(r.priced()) << r.group();
    EXPECT_THAT(r.price_note(), HasSubstr("gemm.gpu.bf16.tflops")) << r.group();
  }
  EXPECT_EQ(response->profile_metrics(2).node_count(), 0u);
}

TEST(RankProfileTest, BadWeightsAndEmptyProfilesAreRefused) {
  std::vector<ProfileInput> inputs = Example();
  inputs[1].weight = 0;
  EXPECT_EQ(RankByProfileCost("example", inputs, v1::RANK_GROUPING_NODE).status().code(),
            absl::StatusCode::kInvalidArgument);
  inputs[1].weight = std::nan("");
  EXPECT_EQ(RankByProfileCost("example", inputs, v1::RANK_GROUPING_NODE).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RankByProfileCost("example", {}, v1::RANK_GROUPING_NODE).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RankProfileTest, UnknownProfileNamesTheKnownOnes) {
  auto found = FindRankProfile("trainnig");
  EXPECT_EQ(found.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(found.status().message(), HasSubstr("known: cpu, io, training"));
  auto training = FindRankProfile("training");
  ASSERT_TRUE(training.ok());
  EXPECT_EQ((*training)->metrics.size(), 5u);
}

// Every profile's metrics exist: each is a row of docs/metrics.md.
TEST(RankProfileTest, EveryProfileMetricIsDocumented) {
  std::ifstream in(std::string(FLEETBENCH_SOURCE_DIR) + "/docs/metrics.md");
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_FALSE(text.str().empty());
  for (const RankProfile& p : RankProfiles()) {
    EXPECT_FALSE(p.description.empty()) << p.name;
    for (const ProfileWeight& w : p.metrics) {
      EXPECT_THAT(text.str(), HasSubstr("| `" + w.metric + "` |")) << p.name;
      EXPECT_GT(w.weight, 0) << p.name << " " << w.metric;
    }
  }
}

}  // namespace
}  // namespace fleetbench::controller
