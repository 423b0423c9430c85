// RunningGroups on its own: members in rank order, a group that fails once,
// its members' ends shaped by the failure, and its relay ended with it.
// Dispatching and cancelling the members is tested through FleetCore
// (fleet_core_groups_test.cc, group_passes_test.cc).
#include "controller/core/running_groups.h"

#include <memory>
#include <string>

#include "controller/core/fleet_core_fixture.h"
#include "gmock/gmock.h"

namespace fleetbench::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

storage::TaskRecord Member(const std::string& group, int rank, const std::string& task_id,
                           v1::TaskState state) {
  storage::TaskRecord t;
  t.task_id = task_id;
  t.run_id = "r1";
  t.node = "n" + std::to_string(rank);
  t.state = state;
  t.group_id = group;
  t.group_rank = rank;
  t.group_members = {"n0", "n1", "n2"};
  return t;
}

TEST(RunningGroupsTest, MembersTakeTheirRankWhateverTheOrderTheyCome) {
  RunningGroups groups;
  groups.Register(Member("g1", 2, "t2", v1::TASK_STATE_QUEUED));
  groups.Register(Member("g1", 0, "t0", v1::TASK_STATE_QUEUED));
  groups.Register(Member("g1", 1, "t1", v1::TASK_STATE_QUEUED));
  storage::TaskRecord alone = Member("", 0, "t9", v1::TASK_STATE_QUEUED);
  groups.Register(alone);
  ASSERT_NE(groups.Find("g1"), nullptr);
  EXPECT_THAT(groups.Find("g1")->task_ids, ElementsAre("t0", "t1", "t2"));
  EXPECT_THAT(groups.OfRun("r1"), ElementsAre("g1")) << "a task outside a group makes none";
  EXPECT_FALSE(groups.Find("g1")->dispatched);
  groups.Dispatched("g1", kNow + absl::Minutes(5));
  EXPECT_TRUE(groups.Find("g1")->dispatched);
  EXPECT_EQ(groups.Find("g1")->deadline, kNow + absl::Minutes(5));
}

TEST(RunningGroupsTest, AGroupFailsOnceAndItsMembersEndWithItsReason) {
  RunningGroups groups;
  for (int rank = 0; rank < 3; ++rank) {
    groups.Register(Member("g1", rank, "t" + std::to_string(rank), v1::TASK_STATE_RUNNING));
  }
  EXPECT_TRUE(groups.Fail("g1", "group g1: member n1 failed", {"t1"}, kNow));
  EXPECT_FALSE(groups.Fail("g1", "group g1: member n2 failed", {"t2"}, kNow))
      << "the first failure names the group";
  EXPECT_FALSE(groups.Fail("g9", "unknown", {}, kNow));

  storage::TaskRecord at_fault = Member("g1", 1, "t1", v1::TASK_STATE_SUCCEEDED);
  at_fault.reason = "stopped";
  groups.ShapeMemberEnd(at_fault);
  EXPECT_EQ(at_fault.state, v1::TASK_STATE_FAILED) << "at fault: did not finish, whatever it says";
  EXPECT_EQ(at_fault.reason, "group g1: member n1 failed; stopped");

  storage::TaskRecord bystander = Member("g1", 2, "t2", v1::TASK_STATE_FAILED);
  groups.ShapeMemberEnd(bystander);
  EXPECT_EQ(bystander.state, v1::TASK_STATE_CANCELLED);
  EXPECT_EQ(bystander.reason, "group g1: member n1 failed");

  storage::TaskRecord done = Member("g1", 0, "t0", v1::TASK_STATE_SUCCEEDED);
  groups.ShapeMemberEnd(done);
  EXPECT_EQ(done.state, v1::TASK_STATE_SUCCEEDED) << "a member that finished keeps its result";
}

TEST(RunningGroupsTest, TheRelaysWaitersAreAnsweredWhenTheGroupFailsOrEnds) {
  RunningGroups groups;
  groups.Register(Member("g1", 0, "t0", v1::TASK_STATE_RUNNING));
  groups.Register(Member("g2", 0, "u0", v1::TASK_STATE_RUNNING));
  auto waiter = std::make_shared<RecordingLink>();
  v1::KvRequest get;
  get.set_request_id(7);
  get.set_op(v1::KvRequest::OP_GET);
  get.set_key("nccl_id");
  get.set_wait_ms(60'000);
  groups.Find("g1")->rendezvous.Handle(waiter, get, kNow, kNow + absl::Minutes(5));
  groups.Find("g2")->rendezvous.Handle(waiter, get, kNow, kNow + absl::Minutes(5));
  ASSERT_TRUE(waiter->KvResponses().empty()) << "the GET waits";

  groups.Fail("g1", "group g1: member n0 lost", {"t0"}, kNow);
  ASSERT_EQ(waiter->KvResponses().size(), 1u);
  EXPECT_THAT(waiter->KvResponses()[0].error(), HasSubstr("group g1: member n0 lost"));

  groups.End("g2");
  ASSERT_EQ(waiter->KvResponses().size(), 2u);
  EXPECT_THAT(waiter->KvResponses()[1].error(), HasSubstr("the group ended"));
  EXPECT_EQ(groups.Find("g2"), nullptr);
  EXPECT_NE(groups.Find("g1"), nullptr) << "a failed group stays until its members end";
}

}  // namespace
}  // namespace fleetbench::controller
