// Group runs end to end (docs/collectives.md): a real controller (the fleetbench
// binary) and real agent processes whose plugin is a tiny collective
// (tests/group_test_agent.cc). Rank 0 publishes a value through the
// controller's relay and the other members read it; a member killed
// mid-collective has the others cancelled, the run names it, no agent is
// left busy and the next group run works.
#include <signal.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/token.h"
#include "fleetbench/v1/fleet_service.grpc.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

class GroupE2eTest : public FleetTest {
 protected:
  void StartMember(const std::string& name) {
    members_[name] = std::make_unique<Process>(
        std::vector<std::string>{GROUP_TEST_AGENT, "--controller", address_, "--name", name,
                                 "--state-dir", dir_ + "/member-" + name},
        env_, dir_ + "/member-" + name + ".log");
  }
  std::unique_ptr<v1::Fleet::Stub> Stub() {
    return v1::Fleet::NewStub(grpc::CreateChannel(address_, Credentials()));
  }
  void Authorize(grpc::ClientContext* context) {
    context->AddMetadata(kAuthMetadataKey, "Bearer " + env_.at("FLEETBENCH_TOKEN"));
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  }
  std::string StartGroupRun(const std::vector<std::string>& nodes, bool hold = false) {
    v1::StartRunRequest request;
    v1::BenchmarkSpec* spec = request.add_benchmarks();
    spec->set_name("rendezvous_probe");
    if (hold) (*spec->mutable_params())["hold"] = "1";
    for (const std::string& n : nodes) request.add_nodes(n);
    request.mutable_group()->set_mode(v1::GROUP_MODE_GROUP);
    grpc::ClientContext context;
    Authorize(&context);
    v1::StartRunResponse response;
    grpc::Status s = Stub()->StartRun(&context, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response.run_id();
  }
  v1::Run GetRun(const std::string& run_id, bool samples = false) {
    v1::GetRunRequest request;
    request.set_run_id(run_id);
    request.set_include_samples(samples);
    grpc::ClientContext context;
    Authorize(&context);
    v1::Run run;
    grpc::Status s = Stub()->GetRun(&context, request, &run);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return run;
  }
  bool WaitForRunEnd(const std::string& run_id, absl::Duration timeout, v1::Run* run) {
    return WaitFor(
        [&] {
          *run = GetRun(run_id, true);
          return run->state() == v1::RUN_STATE_SUCCEEDED ||
                 run->state() == v1::RUN_STATE_FAILED ||
                 run->state() == v1::RUN_STATE_CANCELLED;
        },
        timeout);
  }
  // Checks one succeeded group run over `nodes`: every rank but 0 read what
  // rank 0 set.
  void ExpectMet(const v1::Run& run, const std::vector<std::string>& nodes) {
    EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << run.DebugString();
    ASSERT_EQ(run.groups_size(), 1);
    EXPECT_EQ(run.groups(0).state(), v1::TASK_STATE_SUCCEEDED);
    ASSERT_EQ(run.samples_size(), static_cast<int>(nodes.size())) << run.DebugString();
    for (const v1::Sample& s : run.samples()) {
      EXPECT_EQ(s.params().at("got"), "from-" + nodes[0]) << s.node();
      EXPECT_EQ(s.params().at("size"), absl::StrCat(nodes.size()));
    }
  }

  std::map<std::string, std::unique_ptr<Process>> members_;
};

TEST_F(GroupE2eTest, MembersMeetThroughTheControllersRelay) {
  StartController();
  for (const char* n : {"m1", "m2", "m3"}) StartMember(n);
  ASSERT_TRUE(WaitForOnlineNodes(3, absl::Seconds(30)));
  const std::string run_id = StartGroupRun({"m3", "m1", "m2"});
  v1::Run run;
  ASSERT_TRUE(WaitForRunEnd(run_id, absl::Seconds(60), &run)) << run.DebugString();
  ExpectMet(run, {"m1", "m2", "m3"});
  for (const v1::NodeTask& t : run.tasks()) {
    EXPECT_EQ(t.group_id(), run.groups(0).group_id());
    EXPECT_EQ(t.group_rank(), t.node() == "m1" ? 0 : t.node() == "m2" ? 1 : 2);
  }
}

// As a user runs it: `fleetbench run --group --wait` against the same
// controller, the run's JSON carrying the group.
TEST_F(GroupE2eTest, TheCliRunsAGroupAndWaitsForIt) {
  StartController();
  for (const char* n : {"m1", "m2"}) StartMember(n);
  ASSERT_TRUE(WaitForOnlineNodes(2, absl::Seconds(30)));
  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson({"run", "--bench", "rendezvous_probe", "--nodes", "m2,m1", "--group",
                       "--wait"},
                      &run, &code));
  EXPECT_EQ(code, 0);
  ASSERT_EQ(run.groups_size(), 1) << run.DebugString();
  EXPECT_EQ(run.groups(0).state(), v1::TASK_STATE_SUCCEEDED);
  EXPECT_EQ(run.group().mode(), v1::GROUP_MODE_GROUP);
  ExpectMet(GetRun(run.run_id(), true), {"m1", "m2"});
}

TEST_F(GroupE2eTest, AKilledMemberHasTheOthersCancelledAndTheNextRunWorks) {
  StartController();
  for (const char* n : {"m1", "m2", "m3"}) StartMember(n);
  ASSERT_TRUE(WaitForOnlineNodes(3, absl::Seconds(30)));
  const std::string run_id = StartGroupRun({"m1", "m2", "m3"}, /*hold=*/true);
  // Every member is in the collective (running) before one is killed.
  v1::Run run;
  ASSERT_TRUE(WaitFor(
      [&] {
        run = GetRun(run_id);
        int running = 0;
        for (const v1::NodeTask& t : run.tasks()) running += t.state() == v1::TASK_STATE_RUNNING;
        return running == 3;
      },
      absl::Seconds(30)))
      << run.DebugString();
  const absl::Time killed = absl::Now();
  members_["m2"]->Signal(SIGKILL);
  members_["m2"]->Wait();
  ASSERT_TRUE(WaitForRunEnd(run_id, absl::Seconds(60), &run)) << run.DebugString();
  // Well inside the group's deadline (60 s): the others were stopped, not
  // left to time out.
  EXPECT_LT(absl::Now() - killed, absl::Seconds(20));
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);
  ASSERT_EQ(run.groups_size(), 1);
  EXPECT_EQ(run.groups(0).state(), v1::TASK_STATE_LOST);
  EXPECT_NE(run.groups(0).reason().find("member m2 lost"), std::string::npos)
      << run.groups(0).reason();
  for (const v1::NodeTask& t : run.tasks()) {
    if (t.node() == "m2") {
      EXPECT_EQ(t.state(), v1::TASK_STATE_LOST);
      continue;
    }
    EXPECT_EQ(t.state(), v1::TASK_STATE_CANCELLED) << t.node();
    EXPECT_NE(t.reason().find("member m2 lost"), std::string::npos) << t.reason();
  }
  // No agent is left busy: m2 comes back and a new group of all three runs.
  StartMember("m2");
  ASSERT_TRUE(WaitForOnlineNodes(3, absl::Seconds(30)));
  const std::string next = StartGroupRun({"m1", "m2", "m3"});
  ASSERT_TRUE(WaitForRunEnd(next, absl::Seconds(60), &run)) << run.DebugString();
  ExpectMet(run, {"m1", "m2", "m3"});
}

}  // namespace
}  // namespace fleetbench::testing
