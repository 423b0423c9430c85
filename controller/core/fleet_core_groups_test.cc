// Group tasks: a collective benchmark in a group run is one task
// per member, dispatched all at once only when every member is idle; the
// core's rendezvous relay (set, get, wait, deadline, refusals); one deadline
// and one failure per group (group_passes_test.cc has the passes and
// restarts).
#include "controller/core/group_test_fixture.h"
#include "gmock/gmock.h"

namespace fleetbench::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_F(GroupTest, AGroupRunNeedsACollectiveBenchmark) {
  ConnectMember("a");
  ConnectMember("b");
  auto started = StartGroup({"a", "b"}, "gemm");
  EXPECT_EQ(started.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(started.status().message(), HasSubstr("collective"));
}

TEST_F(GroupTest, NodesThatCannotTakePartAreNamed) {
  ConnectMember("a");
  Connect("plain");  // gemm only
  v1::Hello broken = MakeHello("broken");
  v1::Capability* c = broken.add_capabilities();
  c->set_benchmark("allreduce");
  c->set_collective(true);
  c->set_status(v1::CAPABILITY_STATUS_UNAVAILABLE);
  c->set_reason("libgloo missing");
  ConnectWith(broken);
  auto started = StartGroup({"a", "plain", "broken"});
  EXPECT_EQ(started.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(started.status().message(), HasSubstr("plain (allreduce not installed)"));
  EXPECT_THAT(started.status().message(), HasSubstr("broken (allreduce: libgloo missing)"));
  EXPECT_THAT(started.status().message(), Not(HasSubstr("a (")));
}

TEST_F(GroupTest, DispatchesAllMembersAtOnceOnlyWhenAllAreIdle) {
  auto a = ConnectMember("a");
  auto b = ConnectMember("b");
  auto c = ConnectMember("c");
  Start("gemm", {"b"});  // b is busy
  ASSERT_EQ(b->RunTasks().size(), 1u);
  const v1::RunTask busy = b->RunTasks()[0];
  auto started = StartGroup({"c", "a", "b"});
  ASSERT_TRUE(started.ok()) << started.status();
  EXPECT_THAT(started->nodes(), ElementsAre("a", "b", "c"));
  EXPECT_TRUE(GroupTasks(a).empty());
  EXPECT_TRUE(GroupTasks(c).empty());
  // The group holds a and c: a later single-node run waits behind it.
  Start("gemm", {"a"});
  EXPECT_TRUE(a->RunTasks().empty());

  Finish(b, busy);
  ASSERT_EQ(GroupTasks(a).size(), 1u);
  ASSERT_EQ(GroupTasks(b).size(), 1u);
  ASSERT_EQ(GroupTasks(c).size(), 1u);
  int rank = 0;
  for (const auto& link : {a, b, c}) {
    const v1::RunTask t = GroupTasks(link)[0];
    EXPECT_EQ(t.run_id(), started->run_id());
    ASSERT_EQ(t.benchmarks_size(), 1);
    EXPECT_EQ(t.benchmarks(0).name(), "allreduce");
    const v1::GroupAssignment& g = t.group();
    EXPECT_EQ(g.rank(), rank++);  // stable: sorted names
    EXPECT_EQ(g.size(), 3);
    EXPECT_EQ(g.group_id(), GroupTasks(a)[0].group().group_id());
    ASSERT_EQ(g.members_size(), 3);
    EXPECT_EQ(g.members(0).node(), "a");
    EXPECT_EQ(g.members(0).address(), "10.9.8.1");
    EXPECT_EQ(g.members(2).node(), "c");
    EXPECT_EQ(g.deadline_unix_ms(), absl::ToUnixMillis(clock_.Now()) + kTimeoutMs);
  }
  // The gemm run on a still waits: a member never overlaps another task.
  EXPECT_EQ(a->RunTasks().size(), 1u);
  const v1::Run run = GetRun(started->run_id());
  ASSERT_EQ(run.tasks_size(), 3);
  EXPECT_EQ(run.tasks(1).group_rank(), 1);
  EXPECT_EQ(run.tasks(1).group_id(), GroupTasks(a)[0].group().group_id());
  EXPECT_EQ(run.group().mode(), v1::GROUP_MODE_GROUP);
  ASSERT_EQ(run.groups_size(), 1);
  EXPECT_THAT(run.groups(0).members(), ElementsAre("a", "b", "c"));
  EXPECT_EQ(run.groups(0).state(), v1::TASK_STATE_RUNNING);
}

TEST_F(GroupTest, AGroupWaitsForAMemberThatIsOffline) {
  auto a = ConnectMember("a");
  auto b = ConnectMember("b");
  core_->OnDisconnect(b);
  Sync();
  ASSERT_TRUE(StartGroup({"a", "b"}).ok());
  EXPECT_TRUE(GroupTasks(a).empty());
  // Not reserved while a member is away: a runs other work meanwhile.
  Start("gemm", {"a"});
  EXPECT_EQ(a->RunTasks().size(), 1u);
}

TEST_F(GroupTest, DisjointGroupsRunAtOnceAndOverlappingOnesInTurn) {
  for (const char* n : {"a", "b", "c", "d"}) ConnectMember(n);
  ASSERT_TRUE(StartGroup({"a", "b"}).ok());
  ASSERT_TRUE(StartGroup({"c", "d"}).ok());
  ASSERT_TRUE(StartGroup({"b", "c"}).ok());
  for (const char* n : {"a", "b", "c", "d"}) EXPECT_EQ(GroupTasks(members_[n]).size(), 1u) << n;
  End(members_["a"], GroupTasks(members_["a"])[0], v1::TASK_STATE_SUCCEEDED);
  End(members_["b"], GroupTasks(members_["b"])[0], v1::TASK_STATE_SUCCEEDED);
  EXPECT_EQ(GroupTasks(members_["b"]).size(), 1u);  // c is still in its group
  End(members_["c"], GroupTasks(members_["c"])[0], v1::TASK_STATE_SUCCEEDED);
  ASSERT_EQ(GroupTasks(members_["b"]).size(), 2u);
  ASSERT_EQ(GroupTasks(members_["c"]).size(), 2u);
  EXPECT_EQ(GroupTasks(members_["b"])[1].group().group_id(),
            GroupTasks(members_["c"])[1].group().group_id());
}

TEST_F(GroupTest, MaxParallelCountsMembers) {
  auto a = ConnectMember("a");
  auto b = ConnectMember("b");
  v1::StartRunRequest request;
  request.add_benchmarks()->set_name("gemm");
  request.add_benchmarks()->set_name("allreduce");
  request.mutable_group()->set_mode(v1::GROUP_MODE_GROUP);
  request.set_max_parallel(2);
  auto started = core_->StartRun(request);
  ASSERT_TRUE(started.ok()) << started.status();
  // The per-node gemm tasks go first (two in flight); the group of two waits
  // for both to end.
  ASSERT_EQ(a->RunTasks().size(), 1u);
  EXPECT_EQ(a->RunTasks()[0].benchmarks(0).name(), "gemm");
  EXPECT_FALSE(a->RunTasks()[0].has_group());
  Finish(a, a->RunTasks()[0]);
  EXPECT_TRUE(GroupTasks(a).empty());
  Finish(b, b->RunTasks()[0]);
  EXPECT_EQ(GroupTasks(a).size(), 1u);
  EXPECT_EQ(GroupTasks(b).size(), 1u);
}

TEST_F(GroupTest, RelaySetsGetsAndWakesWaiters) {
  auto tasks = RunningGroup();
  auto a = members_["a"], b = members_["b"], c = members_["c"];
  Kv(b, 1, tasks["b"].task_id(), v1::KvRequest::OP_GET, "nccl_id");
  ASSERT_TRUE(Answer(b, 1).has_value());
  EXPECT_EQ(Answer(b, 1)->code(), static_cast<int>(absl::StatusCode::kNotFound));
  Kv(c, 2, tasks["c"].task_id(), v1::KvRequest::OP_GET, "nccl_id", "", 30000);
  EXPECT_FALSE(Answer(c, 2).has_value());  // waits, on the actor's list
  Kv(a, 3, tasks["a"].task_id(), v1::KvRequest::OP_SET, "nccl_id", std::string("\0id", 3));
  ASSERT_TRUE(Answer(a, 3).has_value());
  EXPECT_EQ(Answer(a, 3)->code(), 0);
  ASSERT_TRUE(Answer(c, 2).has_value());
  EXPECT_EQ(Answer(c, 2)->code(), 0);
  EXPECT_EQ(Answer(c, 2)->value(), std::string("\0id", 3));
  Kv(b, 4, tasks["b"].task_id(), v1::KvRequest::OP_GET, "nccl_id");
  EXPECT_EQ(Answer(b, 4)->value(), std::string("\0id", 3));
  // A second SET replaces the value.
  Kv(b, 5, tasks["b"].task_id(), v1::KvRequest::OP_SET, "nccl_id", "v2");
  Kv(c, 6, tasks["c"].task_id(), v1::KvRequest::OP_GET, "nccl_id");
  EXPECT_EQ(Answer(c, 6)->value(), "v2");
}

TEST_F(GroupTest, AWaitEndsAtItsTimeoutAndAtTheGroupDeadline) {
  auto tasks = RunningGroup();
  auto b = members_["b"];
  Kv(b, 1, tasks["b"].task_id(), v1::KvRequest::OP_GET, "k", "", 1000);
  Kv(b, 2, tasks["b"].task_id(), v1::KvRequest::OP_GET, "k", "", 10 * kTimeoutMs);
  AdvanceAndSweep(absl::Milliseconds(999));
  EXPECT_FALSE(Answer(b, 1).has_value());
  AdvanceAndSweep(absl::Milliseconds(2));
  ASSERT_TRUE(Answer(b, 1).has_value());
  EXPECT_EQ(Answer(b, 1)->code(), static_cast<int>(absl::StatusCode::kDeadlineExceeded));
  EXPECT_FALSE(Answer(b, 2).has_value());
  // The long wait is capped by the group's deadline.
  AdvanceAndSweep(absl::Milliseconds(kTimeoutMs));
  ASSERT_TRUE(Answer(b, 2).has_value());
  EXPECT_EQ(Answer(b, 2)->code(), static_cast<int>(absl::StatusCode::kDeadlineExceeded));
}

TEST_F(GroupTest, RelayRefusesOutsidersBadBoundsAndLateRequests) {
  std::string run_id;
  auto tasks = RunningGroup(&run_id);
  auto a = members_["a"], b = members_["b"], c = members_["c"];
  auto outsider = ConnectMember("d");
  const auto code = [](const std::optional<v1::KvResponse>& r) {
    return r.has_value() ? r->code() : -1;
  };
  constexpr int kDenied = static_cast<int>(absl::StatusCode::kPermissionDenied);
  constexpr int kInvalid = static_cast<int>(absl::StatusCode::kInvalidArgument);
  // A node outside the group, even naming a member's task.
  Kv(outsider, 1, tasks["a"].task_id(), v1::KvRequest::OP_GET, "k");
  EXPECT_EQ(code(Answer(outsider, 1)), kDenied);
  // A member naming another member's task.
  Kv(b, 2, tasks["a"].task_id(), v1::KvRequest::OP_SET, "k", "v");
  EXPECT_EQ(code(Answer(b, 2)), kDenied);
  Kv(b, 3, "no-such-task", v1::KvRequest::OP_GET, "k");
  EXPECT_EQ(code(Answer(b, 3)), kDenied);
  // Bounds.
  Kv(a, 4, tasks["a"].task_id(), v1::KvRequest::OP_SET, "", "v");
  EXPECT_EQ(code(Answer(a, 4)), kInvalid);
  Kv(a, 5, tasks["a"].task_id(), v1::KvRequest::OP_SET, std::string(257, 'k'), "v");
  EXPECT_EQ(code(Answer(a, 5)), kInvalid);
  Kv(a, 6, tasks["a"].task_id(), v1::KvRequest::OP_SET, "k", std::string((64 << 10) + 1, 'v'));
  EXPECT_EQ(code(Answer(a, 6)), kInvalid);
  Kv(a, 7, tasks["a"].task_id(), v1::KvRequest::OP_SET, "k", std::string(64 << 10, 'v'));
  EXPECT_EQ(code(Answer(a, 7)), 0);
  Kv(a, 8, tasks["a"].task_id(), v1::KvRequest::OP_GET, "k", "", -1);
  EXPECT_EQ(code(Answer(a, 8)), 0);  // set: answered whatever the wait
  Kv(a, 9, tasks["a"].task_id(), v1::KvRequest::OP_UNSPECIFIED, "k");
  EXPECT_EQ(code(Answer(a, 9)), kInvalid);
  // 8 MiB per group: 127 more values of 64 KiB fit, the next does not.
  uint64_t id = 100;
  for (int i = 0; i < 126; ++i) {
    Kv(a, ++id, tasks["a"].task_id(), v1::KvRequest::OP_SET, absl::StrCat("big", i),
       std::string(64 << 10, 'v'));
    ASSERT_EQ(code(Answer(a, id)), 0) << i;
  }
  Kv(a, ++id, tasks["a"].task_id(), v1::KvRequest::OP_SET, "one-too-many",
     std::string(64 << 10, 'v'));
  EXPECT_EQ(code(Answer(a, id)), kInvalid);
  EXPECT_THAT(Answer(a, id)->error(), HasSubstr("8388608 bytes"));

  // After the group ended, its members' requests are refused.
  End(a, tasks["a"], v1::TASK_STATE_SUCCEEDED);
  End(b, tasks["b"], v1::TASK_STATE_SUCCEEDED);
  Kv(c, 10, tasks["c"].task_id(), v1::KvRequest::OP_GET, "k");
  EXPECT_EQ(code(Answer(c, 10)), 0);  // c still runs: the group is on
  End(c, tasks["c"], v1::TASK_STATE_SUCCEEDED);
  Kv(c, 11, tasks["c"].task_id(), v1::KvRequest::OP_GET, "k");
  EXPECT_EQ(code(Answer(c, 11)), kDenied);
  EXPECT_EQ(GetRun(run_id).state(), v1::RUN_STATE_SUCCEEDED);
}

TEST_F(GroupTest, ALostMemberHasTheOthersCancelledAndIsNamed) {
  std::string run_id;
  auto tasks = RunningGroup(&run_id);
  auto a = members_["a"], b = members_["b"], c = members_["c"];
  Kv(a, 1, tasks["a"].task_id(), v1::KvRequest::OP_GET, "k", "", 30000);
  core_->OnDisconnect(b);
  Sync();
  // The waiter is told the group ended; the others are asked to stop.
  ASSERT_TRUE(Answer(a, 1).has_value());
  EXPECT_EQ(Answer(a, 1)->code(), static_cast<int>(absl::StatusCode::kAborted));
  EXPECT_THAT(a->Cancels(), ElementsAre(tasks["a"].task_id()));
  EXPECT_THAT(c->Cancels(), ElementsAre(tasks["c"].task_id()));
  Kv(c, 2, tasks["c"].task_id(), v1::KvRequest::OP_GET, "k");
  EXPECT_EQ(Answer(c, 2)->code(), static_cast<int>(absl::StatusCode::kAborted));
  // Each agent reports its task ended (what the plugin said on its way out).
  End(a, tasks["a"], v1::TASK_STATE_CANCELLED, "allreduce: cancelled");
  End(c, tasks["c"], v1::TASK_STATE_FAILED, "allreduce: connection reset by peer");
  const v1::Run run = GetRun(run_id);
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);
  const std::string group_id = tasks["a"].group().group_id();
  const std::string why = absl::StrCat("group ", group_id, ": member b lost (disconnected)");
  for (const v1::NodeTask& t : run.tasks()) {
    if (t.node() == "b") {
      EXPECT_EQ(t.state(), v1::TASK_STATE_LOST);
    } else {
      EXPECT_EQ(t.state(), v1::TASK_STATE_CANCELLED) << t.node();
      EXPECT_EQ(t.reason(), why) << t.node();
    }
  }
  ASSERT_EQ(run.groups_size(), 1);
  EXPECT_EQ(run.groups(0).state(), v1::TASK_STATE_LOST);
  EXPECT_EQ(run.groups(0).reason(), why);
  // The nodes are free again: the next run works.
  Start("gemm", {"a"});
  EXPECT_EQ(a->RunTasks().size(), 2u);
}

// The deadline follows the run's parameters where the binary can say how
// long they take (the plugins' DefaultTimeout(params)); the spec's own
// timeout still wins, and the agent's declared default is the fallback.
TEST_F(GroupTest, TheDeadlineFollowsTheParameters) {
  FleetOptions options = Options();
  options.spec_timeout = [](const v1::BenchmarkSpec& spec) {
    auto it = spec.params().find("max_bytes");
    return it != spec.params().end() && it->second == "16M" ? absl::Seconds(126)
                                                             : absl::ZeroDuration();
  };
  RestartCore(options);
  auto a = ConnectMember("a"), b = ConnectMember("b");
  auto start = [&](const std::map<std::string, std::string>& params, int64_t timeout_ms) {
    v1::StartRunRequest request;
    v1::BenchmarkSpec* spec = request.add_benchmarks();
    spec->set_name("allreduce");
    spec->set_timeout_ms(timeout_ms);
    for (const auto& [k, v] : params) (*spec->mutable_params())[k] = v;
    request.add_nodes("a");
    request.add_nodes("b");
    request.mutable_group()->set_mode(v1::GROUP_MODE_GROUP);
    ASSERT_TRUE(core_->StartRun(request).ok());
  };
  const int64_t now = absl::ToUnixMillis(clock_.Now());
  start({{"max_bytes", "16M"}}, 0);
  ASSERT_EQ(GroupTasks(a).size(), 1u);
  EXPECT_EQ(GroupTasks(a)[0].group().deadline_unix_ms(), now + 126000);
  for (const auto& link : {a, b}) End(link, GroupTasks(link).back(), v1::TASK_STATE_SUCCEEDED);
  start({{"max_bytes", "1G"}}, 0);  // not known to the hook: the agent's default
  ASSERT_EQ(GroupTasks(a).size(), 2u);
  EXPECT_EQ(GroupTasks(a)[1].group().deadline_unix_ms(), now + kTimeoutMs);
  for (const auto& link : {a, b}) End(link, GroupTasks(link).back(), v1::TASK_STATE_SUCCEEDED);
  start({{"max_bytes", "16M"}}, 5000);  // the spec's own timeout
  ASSERT_EQ(GroupTasks(a).size(), 3u);
  EXPECT_EQ(GroupTasks(a)[2].group().deadline_unix_ms(), now + 5000);
}

TEST_F(GroupTest, MembersPastTheDeadlineAreCancelledAndNamed) {
  FleetOptions options = Options();
  options.heartbeat_timeout = absl::Hours(1);  // the deadline, not silence
  RestartCore(options);
  std::string run_id;
  auto tasks = RunningGroup(&run_id);
  auto a = members_["a"], b = members_["b"], c = members_["c"];
  End(a, tasks["a"], v1::TASK_STATE_SUCCEEDED, "", 4.5);
  AdvanceAndSweep(absl::Milliseconds(kTimeoutMs - 1));
  EXPECT_TRUE(b->Cancels().empty());
  AdvanceAndSweep(absl::Milliseconds(2));
  EXPECT_THAT(b->Cancels(), ElementsAre(tasks["b"].task_id()));
  EXPECT_THAT(c->Cancels(), ElementsAre(tasks["c"].task_id()));
  EXPECT_TRUE(a->Cancels().empty());
  End(b, tasks["b"], v1::TASK_STATE_CANCELLED, "allreduce: cancelled");
  End(c, tasks["c"], v1::TASK_STATE_CANCELLED, "allreduce: cancelled");
  const v1::Run run = GetRun(run_id);
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);
  const std::string why = absl::StrCat("group ", tasks["a"].group().group_id(),
                                       ": members b, c did not finish by the group deadline");
  for (const v1::NodeTask& t : run.tasks()) {
    if (t.node() == "a") {
      EXPECT_EQ(t.state(), v1::TASK_STATE_SUCCEEDED);
    } else {
      EXPECT_EQ(t.state(), v1::TASK_STATE_FAILED) << t.node();
      EXPECT_THAT(t.reason(), HasSubstr(why)) << t.node();
    }
  }
  ASSERT_EQ(run.groups_size(), 1);
  EXPECT_EQ(run.groups(0).state(), v1::TASK_STATE_FAILED);
  EXPECT_THAT(run.groups(0).reason(), HasSubstr(why));
  // Rank 0's headline is the group's, whatever became of the others.
  EXPECT_DOUBLE_EQ(run.groups(0).busbw_gbps(), 4.5);
  EXPECT_EQ(run.groups(0).metric(), "allreduce.gloo.busbw_GBps");
}

TEST_F(GroupTest, ASucceededGroupCarriesRankZerosBusbw) {
  std::string run_id;
  auto tasks = RunningGroup(&run_id);
  End(members_["b"], tasks["b"], v1::TASK_STATE_SUCCEEDED, "", 1.0);  // not rank 0
  End(members_["a"], tasks["a"], v1::TASK_STATE_SUCCEEDED, "", 7.25);
  End(members_["c"], tasks["c"], v1::TASK_STATE_SUCCEEDED);
  const v1::Run run = GetRun(run_id);
  EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
  ASSERT_EQ(run.groups_size(), 1);
  EXPECT_EQ(run.groups(0).state(), v1::TASK_STATE_SUCCEEDED);
  EXPECT_EQ(run.groups(0).reason(), "");
  EXPECT_DOUBLE_EQ(run.groups(0).busbw_gbps(), 7.25);
}

}  // namespace
}  // namespace fleetbench::controller
