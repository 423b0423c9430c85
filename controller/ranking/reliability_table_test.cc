#include "controller/ranking/reliability_table.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

NodeReliability Node(const std::string& name, const std::string& type, double hours,
                     int64_t offline, int64_t preempted = 0) {
  NodeReliability n{name, {{"instance_type", type}}, hours, {}};
  if (offline > 0) n.interruptions[v1::INTERRUPTION_KIND_OFFLINE] = offline;
  if (preempted > 0) n.interruptions[v1::INTERRUPTION_KIND_PREEMPTED] = preempted;
  return n;
}

TEST(ReliabilityTableTest, GroupsSumNodeHoursAndCountByKind) {
  auto groups = GroupReliability(
      {Node("a1", "flaky", 500, 3, 1), Node("a2", "flaky", 500, 1), Node("b1", "solid", 1000, 0)},
      v1::RANK_GROUPING_INSTANCE_TYPE, {});
  ASSERT_TRUE(groups.ok()) << groups.status();
  ASSERT_EQ(groups->size(), 2u);
  const v1::ReliabilityGroup& flaky = (*groups)[0];
  EXPECT_EQ(flaky.group(), "flaky");
  EXPECT_EQ(flaky.node_count(), 2u);
  EXPECT_DOUBLE_EQ(flaky.node_hours(), 1000);
  EXPECT_EQ(flaky.interruptions(), 5u);
  ASSERT_EQ(flaky.by_kind_size(), 2);
  EXPECT_EQ(flaky.by_kind(0).kind(), v1::INTERRUPTION_KIND_OFFLINE);
  EXPECT_EQ(flaky.by_kind(0).count(), 4u);
  EXPECT_EQ(flaky.by_kind(1).kind(), v1::INTERRUPTION_KIND_PREEMPTED);
  EXPECT_DOUBLE_EQ(flaky.per_1000_node_hours(), 5);
  EXPECT_LT(flaky.per_1000_node_hours_lower(), 5);
  EXPECT_GT(flaky.per_1000_node_hours_upper(), 5);
  EXPECT_DOUBLE_EQ(flaky.mtbf_hours(), 200);
  EXPECT_TRUE(flaky.enough_data());
  const v1::ReliabilityGroup& solid = (*groups)[1];
  EXPECT_EQ(solid.interruptions(), 0u);
  EXPECT_EQ(solid.mtbf_hours(), 0);
  // No interruption in 1,000 node-hours still allows ~3 per 1,000.
  EXPECT_NEAR(solid.per_1000_node_hours_upper(), 2.9957, 1e-3);
}

TEST(ReliabilityTableTest, FewNodeHoursReadAsNotEnoughDataAndComeLast) {
  auto groups = GroupReliability({Node("new", "fresh", 2, 0), Node("old", "known", 100, 1)},
                                 v1::RANK_GROUPING_INSTANCE_TYPE, {});
  ASSERT_TRUE(groups.ok());
  ASSERT_EQ(groups->size(), 2u);
  EXPECT_EQ((*groups)[0].group(), "known");
  EXPECT_EQ((*groups)[1].group(), "fresh");
  EXPECT_FALSE((*groups)[1].enough_data());
  EXPECT_GT((*groups)[1].per_1000_node_hours_upper(), 1000);
}

TEST(ReliabilityTableTest, ARepeatOffenderIsALemonAmongQuietPeers) {
  std::vector<NodeReliability> nodes;
  for (int i = 0; i < 9; ++i) nodes.push_back(Node("n" + std::to_string(i), "t", 200, i == 0));
  nodes.push_back(Node("lemon", "t", 200, 8));
  auto groups = GroupReliability(nodes, v1::RANK_GROUPING_INSTANCE_TYPE, {});
  ASSERT_TRUE(groups.ok());
  ASSERT_EQ((*groups)[0].lemons_size(), 1);
  const v1::LemonNode& lemon = (*groups)[0].lemons(0);
  EXPECT_EQ(lemon.node(), "lemon");
  EXPECT_EQ(lemon.interruptions(), 8u);
  EXPECT_LT(lemon.tail_probability(), 0.01);
  // By node, the fleet is the peer group: still the lemon, alone.
  auto by_node = GroupReliability(nodes, v1::RANK_GROUPING_NODE, {});
  int lemons = 0;
  for (const auto& g : *by_node) lemons += g.lemons_size();
  EXPECT_EQ(lemons, 1);
}

TEST(ReliabilityTableTest, EvenlyFlakyNodesAreNoLemons) {
  std::vector<NodeReliability> nodes;
  for (int i = 0; i < 10; ++i) nodes.push_back(Node("n" + std::to_string(i), "t", 200, 3));
  auto groups = GroupReliability(nodes, v1::RANK_GROUPING_INSTANCE_TYPE, {});
  ASSERT_TRUE(groups.ok());
  EXPECT_EQ((*groups)[0].lemons_size(), 0);
}

TEST(ReliabilityTableTest, RefusesBadInput) {
  EXPECT_FALSE(GroupReliability({Node("a", "t", 1, 0), Node("a", "t", 1, 0)},
                                v1::RANK_GROUPING_NODE, {})
                   .ok());
  EXPECT_FALSE(GroupReliability({}, static_cast<v1::RankGrouping>(99), {}).ok());
  EXPECT_FALSE(GroupReliability({}, v1::RANK_GROUPING_NODE, {.confidence = 1}).ok());
  EXPECT_FALSE(GroupReliability({}, v1::RANK_GROUPING_NODE, {.min_node_hours = -1}).ok());
}

}  // namespace
}  // namespace fleetbench::controller
