// PlanGroups / PlanNextGroups / JudgeIsolation: the plans FleetCore turns
// into group tasks, and the refusals a user sees for options that do not
// fit the nodes.
#include "controller/core/group_plan.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::string> Nodes(int n) {
  std::vector<std::string> nodes;
  for (int i = 1; i <= n; ++i) nodes.push_back("n" + std::to_string(i));
  return nodes;
}

v1::GroupOptions Scaling(std::vector<uint32_t> sizes) {
  v1::GroupOptions options;
  options.set_mode(v1::GROUP_MODE_SCALING);
  for (uint32_t s : sizes) options.add_scaling(s);
  return options;
}

v1::GroupOptions Isolate() {
  v1::GroupOptions options;
  options.set_mode(v1::GROUP_MODE_ISOLATE);
  return options;
}

TEST(GroupPlanTest, ScalingIsNestedPrefixesInOrder) {
  auto plans = PlanGroups(Scaling({1, 2, 4, 8}), Nodes(8));
  ASSERT_TRUE(plans.ok()) << plans.status();
  ASSERT_EQ(plans->size(), 4u);
  EXPECT_THAT((*plans)[0].members, ElementsAre("n1"));
  EXPECT_THAT((*plans)[1].members, ElementsAre("n1", "n2"));
  EXPECT_THAT((*plans)[2].members, ElementsAre("n1", "n2", "n3", "n4"));
  EXPECT_EQ((*plans)[3].members, Nodes(8));
  for (const GroupPlan& p : *plans) EXPECT_EQ(p.pass, 0);
  EXPECT_THAT(PlanNextGroups(Scaling({1, 2, 4, 8}), Nodes(8), {}), IsEmpty());
}

TEST(GroupPlanTest, ScalingRefusesSizesThatDoNotFit) {
  struct Case {
    std::vector<uint32_t> sizes;
    std::string message;
  };
  for (const Case& c : {Case{{}, "at least one group size"},
                        Case{{1, 2, 8}, "scaling size 8 is outside 1..4"},
                        Case{{0, 2}, "scaling size 0 is outside 1..4"},
                        Case{{2, 2}, "strictly ascending; 2 follows 2"},
                        Case{{4, 2}, "strictly ascending; 2 follows 4"}}) {
    auto plans = PlanGroups(Scaling(c.sizes), Nodes(4));
    ASSERT_FALSE(plans.ok());
    EXPECT_EQ(plans.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(plans.status().message(), HasSubstr(c.message));
  }
}

TEST(GroupPlanTest, IsolateStartsWithTheRoundRobinPairs) {
  auto plans = PlanGroups(Isolate(), Nodes(5));
  ASSERT_TRUE(plans.ok()) << plans.status();
  EXPECT_EQ(plans->size(), 10u);
  for (const GroupPlan& p : *plans) {
    EXPECT_EQ(p.members.size(), 2u);
    EXPECT_EQ(p.pass, 1);
  }
}

TEST(GroupPlanTest, IsolateRefusesTooFewNodesAndBadFigures) {
  EXPECT_THAT(PlanGroups(Isolate(), Nodes(2)).status().message(),
              HasSubstr("needs at least 3 nodes"));
  v1::GroupOptions bisect = Isolate();
  bisect.set_bisect(true);
  EXPECT_THAT(PlanGroups(bisect, Nodes(3)).status().message(), HasSubstr("at least 4 nodes"));
  v1::GroupOptions threshold = Isolate();
  threshold.set_threshold(1.5);
  EXPECT_THAT(PlanGroups(threshold, Nodes(4)).status().message(),
              HasSubstr("threshold 1.5 is outside [0, 1)"));
  v1::GroupOptions expect = Isolate();
  expect.set_expect_busbw_gbps(-1);
  EXPECT_EQ(PlanGroups(expect, Nodes(4)).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(GroupPlanTest, IsolateSecondPassAndVerdictFromResults) {
  const auto nodes = Nodes(4);
  auto plans = PlanGroups(Isolate(), nodes);
  ASSERT_TRUE(plans.ok());
  std::vector<v1::GroupResult> done;
  auto run = [&](const std::vector<GroupPlan>& groups) {
    for (const GroupPlan& p : groups) {
      v1::GroupResult g;
      for (const auto& m : p.members) g.add_members(m);
      g.set_pass(p.pass);
      g.set_state(v1::TASK_STATE_SUCCEEDED);
      const bool slow = std::find(p.members.begin(), p.members.end(), "n4") != p.members.end();
      g.set_busbw_gbps(slow ? 1 : 9);
      done.push_back(g);
    }
  };
  run(*plans);
  EXPECT_FALSE(JudgeIsolation(Isolate(), nodes, done).complete());
  const std::vector<GroupPlan> second = PlanNextGroups(Isolate(), nodes, done);
  ASSERT_FALSE(second.empty());
  for (const GroupPlan& p : second) EXPECT_EQ(p.pass, 2);
  run(second);
  EXPECT_THAT(PlanNextGroups(Isolate(), nodes, done), IsEmpty());
  const v1::IsolationVerdict verdict = JudgeIsolation(Isolate(), nodes, done);
  EXPECT_TRUE(verdict.complete());
  EXPECT_THAT(verdict.bad_nodes(), ElementsAre("n4"));
  EXPECT_EQ(verdict.pair_tests(), static_cast<int>(done.size()));
}

TEST(GroupPlanTest, RoundRobinIsBoundedAndBisectionTakesOver) {
  EXPECT_EQ(PlanGroups(Isolate(), Nodes(128))->size(), 128u * 127 / 2);
  auto refused = PlanGroups(Isolate(), Nodes(129));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("add --bisect"));
  v1::GroupOptions bisect = Isolate();
  bisect.set_bisect(true);
  auto halves = PlanGroups(bisect, Nodes(1000));
  ASSERT_TRUE(halves.ok()) << halves.status();
  ASSERT_EQ(halves->size(), 2u);
  EXPECT_EQ((*halves)[0].members.size(), 500u);
}

TEST(GroupPlanTest, ANodeTwiceIsRefused) {
  auto plans = PlanGroups(Isolate(), {"n1", "n2", "n1", "n3"});
  ASSERT_FALSE(plans.ok());
  EXPECT_THAT(plans.status().message(), HasSubstr("names a node twice"));
}

TEST(GroupPlanTest, OtherModesHaveNoVerdict) {
  v1::GroupOptions group;
  group.set_mode(v1::GROUP_MODE_GROUP);
  EXPECT_FALSE(JudgeIsolation(group, Nodes(4), {}).complete());
  EXPECT_TRUE(JudgeIsolation(group, Nodes(4), {}).summary().empty());
}

}  // namespace
}  // namespace fleetbench::controller
