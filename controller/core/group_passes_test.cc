// Group runs over passes and time: the next pass once a pass ended, the
// isolation walk with the real planner, cancelling a run of groups, a
// member that ignores the cancel, and groups across a controller restart.
#include "controller/core/group_test_fixture.h"
#include "gmock/gmock.h"

namespace fleetbench::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

TEST_F(GroupTest, TheNextPassIsPlannedWhenThePassEnded) {
  FleetOptions options = Options();
  std::vector<std::vector<v1::GroupResult>> asked;
  options.plan_next_groups = [&asked](const v1::GroupOptions& group,
                                      const std::vector<std::string>& nodes,
                                      const std::vector<v1::GroupResult>& done) {
    EXPECT_EQ(group.mode(), v1::GROUP_MODE_GROUP);
    EXPECT_THAT(nodes, ElementsAre("a", "b", "c"));
    asked.push_back(done);
    // One more pass: c with a, then nothing.
    if (done.size() == 1) return std::vector<GroupPlan>{GroupPlan{{"c", "a"}, 2}};
    return std::vector<GroupPlan>{};
  };
  RestartCore(options);
  std::string run_id;
  auto tasks = RunningGroup(&run_id);
  End(members_["a"], tasks["a"], v1::TASK_STATE_SUCCEEDED, "", 2.0);
  End(members_["b"], tasks["b"], v1::TASK_STATE_SUCCEEDED);
  EXPECT_TRUE(asked.empty());  // c still runs
  End(members_["c"], tasks["c"], v1::TASK_STATE_SUCCEEDED);
  ASSERT_EQ(asked.size(), 1u);
  ASSERT_EQ(asked[0].size(), 1u);
  EXPECT_DOUBLE_EQ(asked[0][0].busbw_gbps(), 2.0);
  EXPECT_EQ(GetRun(run_id).state(), v1::RUN_STATE_RUNNING);
  Sync();  // the dispatch of the new pass is posted
  ASSERT_EQ(GroupTasks(members_["c"]).size(), 2u);
  ASSERT_EQ(GroupTasks(members_["a"]).size(), 2u);
  const v1::RunTask c2 = GroupTasks(members_["c"])[1];
  const v1::RunTask a2 = GroupTasks(members_["a"])[1];
  EXPECT_EQ(c2.group().rank(), 0);
  EXPECT_EQ(a2.group().rank(), 1);
  EXPECT_EQ(GroupTasks(members_["b"]).size(), 1u);
  End(members_["c"], c2, v1::TASK_STATE_SUCCEEDED, "", 3.0);
  End(members_["a"], a2, v1::TASK_STATE_SUCCEEDED);
  ASSERT_EQ(asked.size(), 2u);
  const v1::Run run = GetRun(run_id);
  EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
  ASSERT_EQ(run.groups_size(), 2);
  EXPECT_EQ(run.groups(1).pass(), 2);
  EXPECT_THAT(run.groups(1).members(), ElementsAre("c", "a"));
  EXPECT_DOUBLE_EQ(run.groups(1).busbw_gbps(), 3.0);
}

// With the real planner (controller/core/group_plan.h, diagnosis/isolation.h):
// the pairs of pass 1 run in rounds, the suspects' pass 2 is added when
// pass 1 ended, and the verdict names the one slow node.
TEST_F(GroupTest, IsolateRunsBothPassesAndNamesTheSlowNode) {
  for (const char* n : {"a", "b", "c", "d"}) ConnectMember(n);
  v1::StartRunRequest request;
  request.add_benchmarks()->set_name("allreduce");
  request.mutable_group()->set_mode(v1::GROUP_MODE_ISOLATE);
  auto started = core_->StartRun(request);
  ASSERT_TRUE(started.ok()) << started.status();
  std::set<std::string> ended;
  int max_in_flight = 0;
  for (int round = 0; round < 50; ++round) {
    std::vector<std::pair<std::string, v1::RunTask>> open;
    for (const auto& [name, link] : members_) {
      for (const v1::RunTask& t : GroupTasks(link)) {
        if (!ended.contains(t.task_id())) open.emplace_back(name, t);
      }
    }
    if (open.empty()) break;
    max_in_flight = std::max(max_in_flight, static_cast<int>(open.size()));
    for (const auto& [name, t] : open) {
      bool with_d = false;
      for (const auto& m : t.group().members()) with_d |= m.node() == "d";
      ASSERT_EQ(t.group().size(), 2);
      End(members_[name], t, v1::TASK_STATE_SUCCEEDED, "",
          t.group().rank() == 0 ? (with_d ? 1.0 : 10.0) : 0);
      ended.insert(t.task_id());
    }
    Sync();  // the next pass's dispatch is posted
  }
  // A node is in one pair at a time: two disjoint pairs (four tasks) at most.
  EXPECT_EQ(max_in_flight, 4);
  const v1::Run run = GetRun(started->run_id());
  EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
  int pass1 = 0, pass2 = 0;
  for (const v1::GroupResult& g : run.groups()) {
    pass1 += g.pass() == 1;
    pass2 += g.pass() == 2;
  }
  EXPECT_EQ(pass1, 6);  // every pair of four once
  EXPECT_GT(pass2, 0);
  EXPECT_TRUE(run.isolation().complete()) << run.isolation().DebugString();
  EXPECT_THAT(run.isolation().bad_nodes(), ElementsAre("d")) << run.isolation().DebugString();
  EXPECT_TRUE(run.isolation().bad_links().empty());
  // The verdict is d's interruption, and no one else's (a restart writes
  // what the core holds).
  RestartCore(Options());
  auto counts = store_->InterruptionCountsSince(absl::InfinitePast());
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_THAT(*counts, ElementsAre(Pair("d", ElementsAre(Pair("isolated", 1)))));
}

TEST_F(GroupTest, CancellingTheRunEndsItsGroupsAndPlansNoMore) {
  FleetOptions options = Options();
  int planned = 0;
  options.plan_next_groups = [&planned](const v1::GroupOptions&, const std::vector<std::string>&,
                                        const std::vector<v1::GroupResult>&) {
    ++planned;
    return std::vector<GroupPlan>{GroupPlan{{"a", "b"}, 2}};
  };
  RestartCore(options);
  std::string run_id;
  auto tasks = RunningGroup(&run_id);
  // A second group run, queued behind the first.
  auto queued = StartGroup({"a", "b"});
  ASSERT_TRUE(queued.ok()) << queued.status();
  ASSERT_TRUE(core_->CancelRun(queued->run_id()).ok());
  v1::Run second = GetRun(queued->run_id());
  EXPECT_EQ(second.state(), v1::RUN_STATE_CANCELLED);
  for (const v1::NodeTask& t : second.tasks()) {
    EXPECT_EQ(t.state(), v1::TASK_STATE_CANCELLED);
    EXPECT_THAT(t.reason(), HasSubstr(": cancelled by user"));
  }
  ASSERT_TRUE(core_->CancelRun(run_id).ok());
  for (const char* n : {"a", "b", "c"}) {
    EXPECT_THAT(members_[n]->Cancels(), testing::Contains(tasks[n].task_id())) << n;
  }
  End(members_["a"], tasks["a"], v1::TASK_STATE_CANCELLED, "allreduce: cancelled");
  End(members_["b"], tasks["b"], v1::TASK_STATE_SUCCEEDED);
  End(members_["c"], tasks["c"], v1::TASK_STATE_CANCELLED, "allreduce: cancelled");
  const v1::Run first = GetRun(run_id);
  EXPECT_EQ(first.state(), v1::RUN_STATE_CANCELLED);
  ASSERT_EQ(first.groups_size(), 1);
  EXPECT_EQ(first.groups(0).state(), v1::TASK_STATE_CANCELLED);
  EXPECT_THAT(first.groups(0).reason(), HasSubstr("cancelled by user"));
  EXPECT_EQ(planned, 0);
}

TEST_F(GroupTest, AMemberThatIgnoresTheCancelEndsAHeartbeatTimeoutLater) {
  FleetOptions options = Options();
  options.heartbeat_timeout = absl::Hours(1);
  RestartCore(options);
  std::string run_id;
  auto tasks = RunningGroup(&run_id);
  End(members_["a"], tasks["a"], v1::TASK_STATE_FAILED, "allreduce: gloo: connection refused");
  EXPECT_THAT(members_["b"]->Cancels(), ElementsAre(tasks["b"].task_id()));
  End(members_["b"], tasks["b"], v1::TASK_STATE_CANCELLED, "cancelled");
  // c never answers; heartbeats keep it online.
  v1::AgentMessage beat;
  beat.mutable_heartbeat();
  AdvanceAndSweep(absl::Minutes(59));
  Send(members_["c"], beat);
  EXPECT_EQ(GetRun(run_id).state(), v1::RUN_STATE_RUNNING);
  AdvanceAndSweep(absl::Minutes(2));
  Send(members_["c"], beat);
  const v1::Run run = GetRun(run_id);
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);
  ASSERT_EQ(run.groups_size(), 1);
  EXPECT_EQ(run.groups(0).state(), v1::TASK_STATE_FAILED);
  EXPECT_THAT(run.groups(0).reason(), HasSubstr("member a failed (allreduce: gloo"));
}

TEST_F(GroupTest, AQueuedGroupSurvivesAControllerRestart) {
  auto a = ConnectMember("a");
  auto b = ConnectMember("b");
  Start("gemm", {"b"});
  auto started = StartGroup({"a", "b"});
  ASSERT_TRUE(started.ok()) << started.status();
  RestartCore(Options());
  members_.clear();
  auto a2 = ConnectMember("a");
  auto b2 = ConnectMember("b");
  // b's gemm was in flight: the agent (back with it) finishes it.
  ASSERT_TRUE(GroupTasks(a2).empty());
  const v1::Run before = GetRun(started->run_id());
  ASSERT_EQ(before.tasks_size(), 2);
  EXPECT_EQ(before.tasks(0).state(), v1::TASK_STATE_QUEUED);
  v1::RunTask gemm;
  gemm.set_task_id(b->RunTasks()[0].task_id());
  gemm.set_run_id(b->RunTasks()[0].run_id());
  Finish(b2, gemm);
  ASSERT_EQ(GroupTasks(a2).size(), 1u);
  ASSERT_EQ(GroupTasks(b2).size(), 1u);
  EXPECT_EQ(GroupTasks(a2)[0].group().rank(), 0);
  EXPECT_EQ(GroupTasks(b2)[0].group().rank(), 1);
  EXPECT_EQ(GroupTasks(b2)[0].group().members(0).node(), "a");
  const std::string group_id = GroupTasks(a2)[0].group().group_id();
  EXPECT_EQ(GroupTasks(b2)[0].group().group_id(), group_id);
  // The relay works for the restored group.
  Kv(a2, 1, GroupTasks(a2)[0].task_id(), v1::KvRequest::OP_SET, "k", "v");
  EXPECT_EQ(Answer(a2, 1)->code(), 0);
}

TEST_F(GroupTest, AGroupInFlightAtARestartEndsAndItsAgentsAreStopped) {
  std::string run_id;
  auto tasks = RunningGroup(&run_id);
  RestartCore(Options());
  const v1::Run run = GetRun(run_id);
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);
  for (const v1::NodeTask& t : run.tasks()) {
    EXPECT_EQ(t.state(), v1::TASK_STATE_FAILED) << t.node();
    EXPECT_THAT(t.reason(), HasSubstr("the controller restarted while the group ran"));
  }
  // An agent back with the task still running is told to stop.
  v1::Hello hello = MakeHello("a");
  hello.set_running_task_id(tasks["a"].task_id());
  auto a = ConnectWith(hello);
  EXPECT_THAT(a->Cancels(), ElementsAre(tasks["a"].task_id()));
}

}  // namespace
}  // namespace fleetbench::controller
