// NodeSessions on its own: the newest stream wins, a disconnect keeps the
// node online until the heartbeat timeout, a silent node goes offline with
// its link closed, and a node expected back after a restart. What a
// session's end does to its tasks is tested through FleetCore
// (fleet_core_sessions_test.cc).
#include "controller/core/node_sessions.h"

#include <memory>
#include <string>

#include "controller/core/fleet_core_fixture.h"
#include "gmock/gmock.h"

namespace fleetbench::controller {
namespace {

using ::testing::ElementsAre;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);
const absl::Duration kTimeout = absl::Seconds(15);

v1::Hello HelloOf(const std::string& name, const std::string& advertise = "") {
  v1::Hello hello;
  hello.set_name(name);
  hello.set_advertise_addr(advertise);
  (*hello.mutable_labels())["zone"] = "a";
  v1::Capability* gemm = hello.add_capabilities();
  gemm->set_benchmark("gemm");
  v1::Capability* tcp = hello.add_capabilities();
  tcp->set_benchmark("tcp");
  tcp->set_pairwise(true);
  return hello;
}

TEST(NodeSessionsTest, ANewStreamOfTheSameNodeClosesTheOldOne) {
  NodeSessions sessions(kTimeout);
  auto first = std::make_shared<RecordingLink>();
  auto second = std::make_shared<RecordingLink>();
  sessions.Open(first, HelloOf("n1"), "10.0.0.1", kNow);
  EXPECT_EQ(sessions.NodeOf(first), "n1");
  EXPECT_EQ(sessions.Find("n1")->address, "10.0.0.1") << "no advertised address: the peer's";

  const NodeSessions::Session& s = sessions.Open(second, HelloOf("n1", "n1.lab:0"), "10.0.0.2",
                                                 kNow + absl::Seconds(1));
  EXPECT_TRUE(first->closed());
  EXPECT_FALSE(second->closed());
  EXPECT_EQ(sessions.NodeOf(first), "") << "a replaced stream speaks for nobody";
  EXPECT_EQ(sessions.NodeOf(second), "n1");
  EXPECT_EQ(s.address, "n1.lab:0");
  EXPECT_EQ(s.labels.at("zone"), "a");
  EXPECT_EQ(sessions.online_count(), 1);
}

TEST(NodeSessionsTest, ADisconnectKeepsTheNodeOnlineUntilTheHeartbeatTimeout) {
  NodeSessions sessions(kTimeout);
  auto link = std::make_shared<RecordingLink>();
  sessions.Open(link, HelloOf("n1"), "h", kNow);
  sessions.DropLink("n1");
  EXPECT_TRUE(sessions.Online("n1"));
  EXPECT_FALSE(sessions.Reachable("n1")) << "no stream to send on";
  EXPECT_FALSE(sessions.Send("n1", v1::ControllerMessage()));

  EXPECT_TRUE(sessions.Sweep(kNow + kTimeout).empty()) << "at the timeout, not past it";
  const auto silent = sessions.Sweep(kNow + kTimeout + absl::Seconds(1));
  ASSERT_EQ(silent.size(), 1u);
  EXPECT_EQ(silent[0].node, "n1");
  EXPECT_EQ(silent[0].silent_for, kTimeout + absl::Seconds(1));
  EXPECT_FALSE(sessions.Online("n1"));
  EXPECT_EQ(sessions.online_count(), 0);

  EXPECT_TRUE(sessions.Heard("n1", kNow + absl::Seconds(20))) << "back online";
  EXPECT_FALSE(sessions.Heard("n1", kNow + absl::Seconds(21))) << "was online already";
}

TEST(NodeSessionsTest, ASilentNodeGoesOfflineWithItsStreamClosed) {
  NodeSessions sessions(kTimeout);
  auto quiet = std::make_shared<RecordingLink>();
  auto chatty = std::make_shared<RecordingLink>();
  sessions.Open(quiet, HelloOf("n1"), "h", kNow);
  sessions.Open(chatty, HelloOf("n2"), "h", kNow);
  sessions.Touch("n2", kNow + absl::Seconds(10));
  const auto silent = sessions.Sweep(kNow + absl::Seconds(20));
  ASSERT_EQ(silent.size(), 1u);
  EXPECT_EQ(silent[0].node, "n1");
  EXPECT_TRUE(quiet->closed());
  EXPECT_FALSE(chatty->closed());
  EXPECT_EQ(sessions.NodeOf(quiet), "");
  EXPECT_THAT(sessions.OnlineNodes(), ElementsAre("n2"));
}

TEST(NodeSessionsTest, ANodeExpectedBackAfterARestartIsOfflineUntilItsGraceEnds) {
  NodeSessions sessions(kTimeout);
  const absl::Duration grace = kTimeout + absl::Seconds(30);
  sessions.ExpectBack("n1", kNow, grace);
  ASSERT_NE(sessions.Find("n1"), nullptr);
  EXPECT_FALSE(sessions.Online("n1"));
  // A heartbeat timeout is not enough: its backoff may have grown meanwhile.
  EXPECT_TRUE(sessions.Sweep(kNow + kTimeout + absl::Seconds(1)).empty());
  EXPECT_TRUE(sessions.Sweep(kNow + grace).empty());
  EXPECT_EQ(sessions.Sweep(kNow + grace + absl::Seconds(1)).size(), 1u);

  // Back in time, then silent: one heartbeat timeout from its hello, the
  // grace is spent.
  sessions.ExpectBack("n3", kNow, grace);
  sessions.Open(std::make_shared<RecordingLink>(), HelloOf("n3"), "h", kNow + absl::Seconds(1));
  EXPECT_TRUE(sessions.Sweep(kNow + absl::Seconds(1) + kTimeout).empty());
  EXPECT_EQ(sessions.Sweep(kNow + absl::Seconds(2) + kTimeout).size(), 1u);

  // A node already known keeps its session.
  auto link = std::make_shared<RecordingLink>();
  sessions.Open(link, HelloOf("n2"), "h", kNow);
  sessions.ExpectBack("n2", kNow + absl::Seconds(5), grace);
  EXPECT_TRUE(sessions.Reachable("n2"));
  EXPECT_EQ(sessions.Find("n2")->last_seen, kNow);
}

TEST(NodeSessionsTest, DeclaredBenchmarksComeFromEveryHelloOnlineOrNot) {
  NodeSessions sessions(kTimeout);
  v1::Hello other = HelloOf("n2");
  other.mutable_capabilities(0)->set_benchmark("disk");
  sessions.Open(std::make_shared<RecordingLink>(), HelloOf("n1"), "h", kNow);
  sessions.Open(std::make_shared<RecordingLink>(), other, "h", kNow + absl::Seconds(30));
  ASSERT_EQ(sessions.Sweep(kNow + absl::Seconds(30)).size(), 1u);  // n1 went offline
  EXPECT_THAT(sessions.DeclaredBenchmarks(false), ElementsAre("disk", "gemm", "tcp"));
  EXPECT_THAT(sessions.DeclaredBenchmarks(true), ElementsAre("tcp"));
  sessions.Remove("n1");
  EXPECT_THAT(sessions.DeclaredBenchmarks(false), ElementsAre("disk", "tcp"));
}

}  // namespace
}  // namespace fleetbench::controller
