#include "agent/benchmarks/pairwise/pair_params.h"

#include <string>

#include "gtest/gtest.h"

namespace fleetbench::agent::pairwise {
namespace {

bool Contains(const absl::Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

TEST(PairParamsTest, AServerNeedsNoPeer) {
  absl::StatusOr<PairSide> side =
      ParsePairSide({{"role", "server"}}, "net", "the port it published");
  ASSERT_TRUE(side.ok()) << side.status();
  EXPECT_TRUE(side->server);
  EXPECT_EQ(side->peer, "");
}

TEST(PairParamsTest, AClientDialsItsPeer) {
  absl::StatusOr<PairSide> side = ParsePairSide(
      {{"role", "client"}, {"peer", "10.0.0.5:5201"}, {"peer_node", "b"}},
      "rdma", "the TCP port it published");
  ASSERT_TRUE(side.ok()) << side.status();
  EXPECT_FALSE(side->server);
  EXPECT_EQ(side->peer, "10.0.0.5:5201");
  EXPECT_EQ(side->peer_address.host, "10.0.0.5");
  EXPECT_EQ(side->peer_address.port, 5201);
  EXPECT_EQ(side->peer_node, "b");
}

TEST(PairParamsTest, MessagesNameThePluginAndTheKey) {
  absl::Status s = ParsePairSide({}, "net", "x").status();
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_TRUE(Contains(s, "net: role: missing")) << s;
  s = ParsePairSide({{"role", "middle"}}, "rdma", "x").status();
  EXPECT_TRUE(Contains(s, "rdma: role: 'middle'")) << s;
  s = ParsePairSide({{"role", "client"}}, "net", "the port it published")
          .status();
  EXPECT_TRUE(Contains(s, "net: peer: missing")) << s;
  EXPECT_TRUE(Contains(s, "(the port it published)")) << s;
  s = ParsePairSide({{"role", "client"}, {"peer", "nowhere"}}, "net", "x")
          .status();
  EXPECT_TRUE(Contains(s, "net: peer: ")) << s;
}

TEST(PairParamsTest, BindDefaultsToEveryAddress) {
  absl::StatusOr<std::string> bind = ParseBindAddress({}, "net");
  ASSERT_TRUE(bind.ok()) << bind.status();
  EXPECT_EQ(*bind, "0.0.0.0");
  bind = ParseBindAddress({{"bind", "[::]"}}, "rdma");
  EXPECT_TRUE(absl::IsInvalidArgument(bind.status()));
  EXPECT_TRUE(Contains(bind.status(), "rdma: bind: '[::]'")) << bind.status();
}

}  // namespace
}  // namespace fleetbench::agent::pairwise
