// Taking nodes out of the fleet: `nodes rm` and expiry (before them, 1,000
// hellos with new names made 1,000 permanent nodes).
#include "controller/core/fleet_core_fixture.h"

namespace fleetbench::controller {
namespace {

std::vector<std::string> NodeNames(FleetCore& core) {
  std::vector<std::string> names;
  absl::StatusOr<v1::ListNodesResponse> nodes = core.ListNodes();
  EXPECT_TRUE(nodes.ok()) << nodes.status();
  if (!nodes.ok()) return names;
  for (const v1::Node& n : nodes->nodes()) names.push_back(n.name());
  return names;
}

TEST_F(FleetCoreTest, AnOfflineNodeIsRemovedAndItsHistoryKeptWhenItRanTasks) {
  auto a = Connect("a");
  auto b = Connect("b");
  const std::string run = Start("gemm", {"a"});
  Finish(a, a->RunTasks()[0]);
  auto online = core_->RemoveNode("a");
  EXPECT_EQ(online.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(online.status().message().find("is online"), std::string::npos) << online.status();
  AdvanceAndSweep(absl::Seconds(16));  // both offline now
  auto kept = core_->RemoveNode("a");
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_TRUE(kept->history_kept());
  auto gone = core_->RemoveNode("b");
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_FALSE(gone->history_kept());
  EXPECT_TRUE(NodeNames(*core_).empty());
  EXPECT_EQ(core_->RemoveNode("b").status().code(), absl::StatusCode::kNotFound);
  // a's results stay readable.
  v1::GetRunRequest get;
  get.set_run_id(run);
  get.set_include_samples(true);
  EXPECT_EQ(core_->GetRun(get)->samples_size(), 1);
  // A later hello brings a node back.
  clock_.Advance(absl::Seconds(1));
  Connect("a");
  EXPECT_EQ(NodeNames(*core_), std::vector<std::string>{"a"});
}

TEST_F(FleetCoreTest, ANodeWithATaskInFlightIsNotRemoved) {
  auto a = Connect("a");
  const std::string run = Start("gemm");
  // After a restart nobody is connected: a is offline, its task in flight.
  RestartCore(Options());
  auto refused = core_->RemoveNode("a");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("run " + run), std::string::npos)
      << refused.status();
  EXPECT_EQ(core_->RemoveNode("").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(FleetCoreTest, NodesUnseenPastTheExpiryAreRemovedOthersStay) {
  FleetOptions options = Options();
  options.node_expiry = absl::Minutes(1);
  RestartCore(options);
  Connect("silent");
  auto chatty = Connect("chatty");
  auto beat = [&](absl::Duration total) {
    for (absl::Duration d; d < total; d += absl::Seconds(10)) {
      clock_.Advance(absl::Seconds(10));
      v1::AgentMessage m;
      m.mutable_heartbeat();
      core_->OnAgentMessage(chatty, m);
      Sync();
      Sync();
    }
  };
  beat(absl::Seconds(30));  // offline, but not for a minute yet
  EXPECT_EQ(NodeNames(*core_), (std::vector<std::string>{"chatty", "silent"}));
  beat(absl::Seconds(40));
  EXPECT_EQ(NodeNames(*core_), std::vector<std::string>{"chatty"});
}

TEST_F(FleetCoreTest, NodesNeverExpireByDefault) {
  Connect("silent");
  AdvanceAndSweep(absl::Hours(24 * 365));
  EXPECT_EQ(NodeNames(*core_), std::vector<std::string>{"silent"});
}

}  // namespace
}  // namespace fleetbench::controller

namespace fleetbench::controller {
namespace {

// The dashboard marks facts changes on a node's charts (FactsHistory).
TEST_F(FleetCoreTest, FactsHistoryListsEachChangeNewestFirst) {
  v1::Hello hello = MakeHello("n1");
  hello.mutable_facts()->set_kernel("6.1.0");
  ConnectWith(hello);
  clock_.Advance(absl::Minutes(5));
  ConnectWith(hello);  // the same facts: no new version
  clock_.Advance(absl::Minutes(5));
  hello.mutable_facts()->set_kernel("6.2.0");
  ConnectWith(hello);
  absl::StatusOr<std::vector<storage::FactsVersion>> versions = core_->FactsHistory("n1", 10);
  ASSERT_TRUE(versions.ok()) << versions.status();
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ((*versions)[0].facts.kernel(), "6.2.0");
  EXPECT_EQ((*versions)[1].facts.kernel(), "6.1.0");
  EXPECT_GT((*versions)[0].seen, (*versions)[1].seen);
  EXPECT_EQ(core_->FactsHistory("n1", 1)->size(), 1u);
  EXPECT_TRUE(absl::IsNotFound(core_->FactsHistory("nobody", 10).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(core_->FactsHistory("", 10).status()));
}

}  // namespace
}  // namespace fleetbench::controller
