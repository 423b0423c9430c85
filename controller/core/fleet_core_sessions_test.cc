// Node sessions: hello, heartbeats, expiry.
#include "controller/core/fleet_core_fixture.h"

namespace fleetbench::controller {
namespace {

TEST_F(FleetCoreTest, HelloIsWelcomedAndTheNodeIsOnline) {
  auto link = Connect("a");
  EXPECT_TRUE(link->GotWelcome());
  auto nodes = core_->ListNodes();
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->nodes_size(), 1);
  EXPECT_EQ(nodes->nodes(0).status(), v1::NODE_STATUS_ONLINE);
}

TEST_F(FleetCoreTest, SilentNodeGoesOfflineAndItsRunningTaskIsLost) {
  auto link = Connect("a");
  const std::string run = Start("gemm");
  ASSERT_EQ(link->RunTasks().size(), 1u);
  v1::AgentMessage started;
  started.mutable_task_started()->set_task_id(link->RunTasks()[0].task_id());
  Send(link, started);
  EXPECT_EQ(TaskOf(run, "a").state(), v1::TASK_STATE_RUNNING);

  AdvanceAndSweep(absl::Seconds(14));  // within the timeout: still fine
  EXPECT_EQ(TaskOf(run, "a").state(), v1::TASK_STATE_RUNNING);
  AdvanceAndSweep(absl::Seconds(2));
  v1::NodeTask task = TaskOf(run, "a");
  EXPECT_EQ(task.state(), v1::TASK_STATE_LOST);
  EXPECT_NE(task.reason().find("heartbeat"), std::string::npos) << task.reason();
  EXPECT_EQ(core_->ListNodes()->nodes(0).status(), v1::NODE_STATUS_OFFLINE);
}

TEST_F(FleetCoreTest, HeartbeatsKeepANodeOnline) {
  auto link = Connect("a");
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(absl::Seconds(10));
    v1::AgentMessage beat;
    beat.mutable_heartbeat();
    Send(link, beat);
  }
  AdvanceAndSweep(absl::Seconds(1));
  EXPECT_EQ(core_->ListNodes()->nodes(0).status(), v1::NODE_STATUS_ONLINE);
}

}  // namespace
}  // namespace fleetbench::controller
