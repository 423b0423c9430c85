// FleetCore's reliability record: time online from what it hears, one
// interruption per event with its kind (a critical finding once per run), nothing charged for the
// controller's own absence, and no new work for a node that is leaving.
#include <map>
#include <string>

#include "controller/core/fleet_core_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

class FleetCoreReliabilityTest : public FleetCoreTest {
 protected:
  void Beat(const std::shared_ptr<RecordingLink>& link) {
    v1::AgentMessage beat;
    beat.mutable_heartbeat();
    Send(link, beat);
  }
  // Every node's interruptions by kind, as stored (a restart of the core
  // writes what it holds first).
  std::map<std::string, std::map<std::string, int64_t>> Stored() {
    RestartCore(Options());
    auto counts = store_->InterruptionCountsSince(absl::InfinitePast());
    EXPECT_TRUE(counts.ok()) << counts.status();
    return counts.ok() ? *counts : std::map<std::string, std::map<std::string, int64_t>>{};
  }
  std::map<std::string, int64_t> Uptime() {
    auto uptime = store_->UptimeSince(0);
    EXPECT_TRUE(uptime.ok()) << uptime.status();
    return uptime.ok() ? *uptime : std::map<std::string, int64_t>{};
  }
};

TEST_F(FleetCoreReliabilityTest, TimeOnlineUntilSilentAndOneOfflineInterruption) {
  auto a = Connect("a");
  auto b = Connect("b");
  for (int i = 0; i < 12; ++i) {
    clock_.Advance(absl::Seconds(5));
    Beat(a);
    Beat(b);
  }
  // a falls silent; b goes on for 30 s more, and a sweep declares a gone.
  for (int i = 0; i < 6; ++i) {
    clock_.Advance(absl::Seconds(5));
    Beat(b);
  }
  AdvanceAndSweep(absl::Seconds(1));
  EXPECT_THAT(Stored(), ElementsAre(Pair("a", ElementsAre(Pair("offline", 1)))));
  EXPECT_THAT(Uptime(), ElementsAre(Pair("a", 60'000), Pair("b", 90'000)));
  auto listed = store_->InterruptionsSince(absl::InfinitePast(), 10);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].time, absl::FromUnixSeconds(1800000000) + absl::Seconds(60))
      << "dated when it was last heard";
}

TEST_F(FleetCoreReliabilityTest, AControllerOutageChargesTheNodesNothing) {
  auto a = Connect("a");
  clock_.Advance(absl::Seconds(5));
  Beat(a);
  RestartCore(Options());  // the controller is down for an hour
  clock_.Advance(absl::Hours(1));
  AdvanceAndSweep(absl::Seconds(1));
  auto again = Connect("a");
  clock_.Advance(absl::Seconds(5));
  Beat(again);
  EXPECT_TRUE(Stored().empty());
  EXPECT_THAT(Uptime(), ElementsAre(Pair("a", 10'000)));
}

TEST_F(FleetCoreReliabilityTest, AnAgentRestartWhileATaskRanIsOneInterruption) {
  auto a = Connect("a");
  Start("gemm", {"a"});
  ASSERT_EQ(a->RunTasks().size(), 1u);
  v1::AgentMessage started;
  started.mutable_task_started()->set_task_id(a->RunTasks()[0].task_id());
  Send(a, started);
  clock_.Advance(absl::Seconds(3));
  Connect("a");  // back within the timeout, without the task
  EXPECT_THAT(Stored(), ElementsAre(Pair("a", ElementsAre(Pair("agent_restart", 1)))));
}

TEST_F(FleetCoreReliabilityTest, ATaskLostAcrossAControllerRestartIsNotTheNodes) {
  auto a = Connect("a");
  Start("gemm", {"a"});
  v1::AgentMessage started;
  started.mutable_task_started()->set_task_id(a->RunTasks()[0].task_id());
  Send(a, started);
  RestartCore(Options());
  clock_.Advance(absl::Seconds(3));
  Connect("a");  // the task is lost, but this controller never saw the node online
  EXPECT_TRUE(Stored().empty());
}

TEST_F(FleetCoreReliabilityTest, APreemptedNodeTakesNoWorkAndIsNotAlsoOffline) {
  auto a = Connect("a");
  v1::AgentMessage notice;
  notice.mutable_preempting()->set_source("http://169.254.169.254/spot");
  notice.mutable_preempting()->set_termination_unix_ms(1800000120000);
  notice.mutable_preempting()->set_noticed_unix_ms(1800000001000);
  Send(a, notice);
  Send(a, notice);  // said again: still one preemption
  a = Connect("a");  // a reconnect: still leaving, before it says so again
  v1::StartRunRequest early;
  early.add_benchmarks()->set_name("gemm");
  EXPECT_TRUE(absl::IsFailedPrecondition(core_->StartRun(early).status()));
  Send(a, notice);  // and again after the reconnect

  v1::StartRunRequest any;
  any.add_benchmarks()->set_name("gemm");
  EXPECT_TRUE(absl::IsFailedPrecondition(core_->StartRun(any).status()));
  v1::StartRunRequest on_a;
  on_a.add_benchmarks()->set_name("gemm");
  on_a.add_nodes("a");
  EXPECT_TRUE(absl::IsFailedPrecondition(core_->StartRun(on_a).status()));
  EXPECT_TRUE(a->RunTasks().empty());

  AdvanceAndSweep(absl::Seconds(20));  // it goes silent, as announced
  auto stored = Stored();
  EXPECT_THAT(stored, ElementsAre(Pair("a", ElementsAre(Pair("preempted", 1)))));
  auto listed = store_->InterruptionsSince(absl::InfinitePast(), 10);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_THAT((*listed)[0].detail, ::testing::HasSubstr("169.254.169.254"));
  EXPECT_THAT((*listed)[0].detail, ::testing::HasSubstr("2027-01-15"));
}

TEST_F(FleetCoreReliabilityTest, ARevokedNodeIsRevokedNotOffline) {
  Connect("a");
  core_->OnNodeRevoked("a");
  Sync();
  AdvanceAndSweep(absl::Seconds(20));
  EXPECT_THAT(Stored(), ElementsAre(Pair("a", ElementsAre(Pair("revoked", 1)))));
}

TEST_F(FleetCoreReliabilityTest, AfterItLeftAPreemptedNodeStartsAfresh) {
  auto a = Connect("a");
  v1::AgentMessage notice;
  notice.mutable_preempting()->set_source("file:/run/preempt");
  notice.mutable_preempting()->set_noticed_unix_ms(1800000001000);
  Send(a, notice);
  AdvanceAndSweep(absl::Seconds(20));  // gone, as announced
  auto again = Connect("a");           // a new instance under the same name
  Start("gemm", {"a"});
  EXPECT_EQ(again->RunTasks().size(), 1u);
  // A notice to that instance is a second preemption.
  notice.mutable_preempting()->set_noticed_unix_ms(1800000099000);
  Send(again, notice);
  EXPECT_THAT(Stored(), ElementsAre(Pair("a", ElementsAre(Pair("preempted", 2)))));
}

TEST_F(FleetCoreReliabilityTest, RevokingANodeAlreadyGoneIsNoSecondInterruption) {
  Connect("a");
  AdvanceAndSweep(absl::Seconds(20));  // offline: one interruption
  core_->OnNodeRevoked("a");
  core_->OnNodeRevoked("never-seen");
  Sync();
  EXPECT_THAT(Stored(), ElementsAre(Pair("a", ElementsAre(Pair("offline", 1)))));
}

// A node that says it has eight GPUs and shows none draws gpu.none, a
// critical node finding, on every run: one interruption per run, counted
// when the run has ended; its healthy peer draws none.
TEST_F(FleetCoreReliabilityTest, ACriticalFindingInARunIsOneInterruptionPerRun) {
  v1::Hello hello = MakeHello("g");
  (*hello.mutable_labels())["gpus"] = "8";
  auto g = ConnectWith(hello);
  auto a = Connect("a");
  for (int run = 0; run < 2; ++run) {
    Start("gemm", {"g", "a"});
    ASSERT_EQ(g->RunTasks().size(), static_cast<size_t>(run + 1));
    Finish(g, g->RunTasks().back());
    Finish(a, a->RunTasks().back());
  }
  EXPECT_THAT(Stored(), ElementsAre(Pair("g", ElementsAre(Pair("critical_finding", 2)))));
  auto listed = store_->InterruptionsSince(absl::InfinitePast(), 10);
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_THAT((*listed)[0].detail, ::testing::MatchesRegex("run [0-9A-Z]+: gpu\\.none"));
}

TEST_F(FleetCoreReliabilityTest, ReliabilityGroupsWhatWasStored) {
  v1::Hello hello = MakeHello("a");
  (*hello.mutable_labels())["instance_type"] = "spot-x";
  auto a = ConnectWith(hello);
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(absl::Seconds(5));
    Beat(a);
  }
  AdvanceAndSweep(absl::Seconds(20));
  Stored();
  v1::ReliabilityRequest request;
  request.set_by(v1::RANK_GROUPING_INSTANCE_TYPE);
  auto response = core_->Reliability(request);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->groups_size(), 1);
  const v1::ReliabilityGroup& g = response->groups(0);
  EXPECT_EQ(g.group(), "spot-x");
  EXPECT_NEAR(g.node_hours(), 50.0 / 3600, 1e-9);
  EXPECT_EQ(g.interruptions(), 1u);
  EXPECT_FALSE(g.enough_data());
  request.set_window_ms(-1);
  EXPECT_TRUE(absl::IsInvalidArgument(core_->Reliability(request).status()));
}

}  // namespace
}  // namespace fleetbench::controller
