#include "controller/core/pairing.h"

#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

TEST(PlanPairsTest, Modes) {
  const std::vector<std::string> nodes = {"a", "b", "c", "d"};
  v1::BenchmarkSpec spec;
  spec.set_name("net");
  auto star = PlanPairs(spec, nodes);
  ASSERT_TRUE(star.ok());
  EXPECT_EQ(star->size(), 3u);
  EXPECT_EQ((*star)[0], std::make_pair(std::string("a"), std::string("b")));

  (*spec.mutable_params())["pairing"] = "all";
  EXPECT_EQ(PlanPairs(spec, nodes)->size(), 6u);
  (*spec.mutable_params())["pairing"] = "pair";
  EXPECT_EQ(PlanPairs(spec, nodes)->size(), 1u);
  (*spec.mutable_params())["pairing"] = "star";
  (*spec.mutable_params())["reference"] = "c";
  auto ref = PlanPairs(spec, nodes);
  ASSERT_TRUE(ref.ok());
  for (const auto& [server, client] : *ref) EXPECT_EQ(server, "c");
  (*spec.mutable_params())["reference"] = "zz";
  EXPECT_EQ(PlanPairs(spec, nodes).status().code(), absl::StatusCode::kInvalidArgument);
  (*spec.mutable_params())["pairing"] = "ring";
  EXPECT_EQ(PlanPairs(spec, nodes).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SplitPairSpecTest, EachHalfGetsItsRoleAndPeerInsteadOfThePairingParameters) {
  v1::BenchmarkSpec spec;
  spec.set_name("net");
  (*spec.mutable_params())["pairing"] = "star";
  (*spec.mutable_params())["reference"] = "a";
  (*spec.mutable_params())["streams"] = "2";
  const PairSpecs specs = SplitPairSpec(spec, "a", "b");
  for (const v1::BenchmarkSpec* s : {&specs.server, &specs.client}) {
    EXPECT_EQ(s->name(), "net");
    EXPECT_FALSE(s->params().contains("pairing"));
    EXPECT_FALSE(s->params().contains("reference"));
    EXPECT_EQ(s->params().at("streams"), "2");
  }
  EXPECT_EQ(specs.server.params().at("role"), "server");
  EXPECT_EQ(specs.server.params().at("peer_node"), "b");
  EXPECT_EQ(specs.client.params().at("role"), "client");
  EXPECT_EQ(specs.client.params().at("peer_node"), "a");
}

}  // namespace
}  // namespace fleetbench::controller
