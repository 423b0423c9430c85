// What an agent says is checked, not trusted (docs/protocol.md, "Bounds"), and a task
// declared lost is settled by its late final report (docs/protocol.md, "Late final reports").
#include <cmath>
#include <limits>

#include "controller/core/fleet_core_fixture.h"

namespace fleetbench::controller {
namespace {

v1::AgentMessage Started(const v1::RunTask& task) {
  v1::AgentMessage m;
  m.mutable_task_started()->set_task_id(task.task_id());
  return m;
}

v1::RunState RunState(FleetCore& core, const std::string& run_id) {
  v1::GetRunRequest get;
  get.set_run_id(run_id);
  auto run = core.GetRun(get);
  EXPECT_TRUE(run.ok()) << run.status();
  return run.ok() ? run->state() : v1::RUN_STATE_UNSPECIFIED;
}

TEST_F(FleetCoreTest, AFinalReportWithANonTerminalStateEndsTheTaskFailed) {
  auto link = Connect("a");
  const std::string run = Start("gemm");
  const v1::RunTask task = link->RunTasks()[0];
  Send(link, Started(task));
  v1::AgentMessage m;
  v1::Report* r = m.mutable_report();
  r->set_report_id(NewUlid());
  r->set_task_id(task.task_id());
  AddGemmSample(r, 2)->set_time_unix_ms(absl::ToUnixMillis(clock_.Now()));
  r->set_task_finished(true);
  r->set_task_state(v1::TASK_STATE_RUNNING);
  Send(link, m);
  const v1::NodeTask t = TaskOf(run, "a");
  EXPECT_EQ(t.state(), v1::TASK_STATE_FAILED);
  EXPECT_NE(t.reason().find("a final report must end its task, but its state is running"),
            std::string::npos)
      << t.reason();
  EXPECT_EQ(RunState(*core_, run), v1::RUN_STATE_FAILED);
  EXPECT_EQ(*store_->CountSamples(), 1);  // the good sample is kept
  ASSERT_EQ(link->AckErrors().size(), 1u);
  // Not wedged: the node takes the next task.
  Start("gemm");
  EXPECT_EQ(link->RunTasks().size(), 2u);
}

TEST_F(FleetCoreTest, SamplesDatedPastTheAllowedSkewAreRefusedWithTheirNeighboursKept) {
  auto link = Connect("a");
  const std::string run = Start("gemm");
  const v1::RunTask task = link->RunTasks()[0];
  v1::AgentMessage m;
  v1::Report* r = m.mutable_report();
  r->set_report_id(NewUlid());
  r->set_task_id(task.task_id());
  AddGemmSample(r, 2)->set_time_unix_ms(absl::ToUnixMillis(clock_.Now() + absl::Hours(23)));
  AddGemmSample(r, 3)->set_time_unix_ms(
      absl::ToUnixMillis(absl::FromCivil(absl::CivilSecond(3000, 1, 1), absl::UTCTimeZone())));
  r->set_task_finished(true);
  r->set_task_state(v1::TASK_STATE_SUCCEEDED);
  Send(link, m);
  EXPECT_EQ(*store_->CountSamples(), 1);
  ASSERT_EQ(link->AckErrors().size(), 1u);
  EXPECT_NE(link->AckErrors()[0].find("sample 1: time 3000-01-01"), std::string::npos)
      << link->AckErrors()[0];
  EXPECT_NE(link->AckErrors()[0].find("allowed skew"), std::string::npos);
  EXPECT_EQ(TaskOf(run, "a").state(), v1::TASK_STATE_FAILED);
}

TEST_F(FleetCoreTest, ProgressThatIsNotANumberIsNotStored) {
  auto link = Connect("a");
  const std::string run = Start("gemm");
  const v1::RunTask task = link->RunTasks()[0];
  Send(link, Started(task));
  auto progress = [&](double fraction) {
    v1::AgentMessage m;
    m.mutable_progress()->set_task_id(task.task_id());
    m.mutable_progress()->set_benchmark("gemm");
    m.mutable_progress()->set_fraction(fraction);
    Send(link, m);
  };
  progress(0.25);
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity()}) {
    progress(bad);
    const v1::NodeTask t = TaskOf(run, "a");
    EXPECT_TRUE(std::isfinite(t.progress_fraction())) << bad;
    EXPECT_EQ(t.progress_fraction(), 0.25) << bad;
  }
}

// A hello listing its running task as finished promises the final report.
// An agent that then sends nothing (but heartbeats) held the task, and its
// node, forever, and `cancel` did nothing.
class PromisedReportTest : public FleetCoreTest {
 protected:
  void PromiseAndGoSilent() {
    link_ = Connect("a");
    run_ = Start("gemm");
    task_ = link_->RunTasks()[0];
    Send(link_, Started(task_));
    v1::Hello hello = MakeHello("a");
    hello.add_finished_task_ids(task_.task_id());
    link_ = ConnectWith(hello);
    ASSERT_EQ(TaskOf(run_, "a").state(), v1::TASK_STATE_RUNNING);
  }
  void Heartbeat() {
    v1::AgentMessage beat;
    beat.mutable_heartbeat();
    Send(link_, beat);
  }
  std::shared_ptr<RecordingLink> link_;
  std::string run_;
  v1::RunTask task_;
};

TEST_F(PromisedReportTest, ThePromisedTaskEndsLostAfterTheHeartbeatTimeout) {
  PromiseAndGoSilent();
  clock_.Advance(absl::Seconds(10));
  Heartbeat();
  AdvanceAndSweep(absl::Seconds(1));
  EXPECT_EQ(TaskOf(run_, "a").state(), v1::TASK_STATE_RUNNING);  // within its time
  clock_.Advance(absl::Seconds(5));
  Heartbeat();  // alive, just silent about the task
  AdvanceAndSweep(absl::Milliseconds(1));
  const v1::NodeTask t = TaskOf(run_, "a");
  EXPECT_EQ(t.state(), v1::TASK_STATE_LOST);
  EXPECT_NE(t.reason().find("sent no final report"), std::string::npos) << t.reason();
  EXPECT_EQ(RunState(*core_, run_), v1::RUN_STATE_FAILED);
  EXPECT_EQ(core_->ListNodes()->nodes(0).status(), v1::NODE_STATUS_ONLINE);
}

TEST_F(PromisedReportTest, CancelEndsThePromisedTaskAtOnce) {
  PromiseAndGoSilent();
  ASSERT_TRUE(core_->CancelRun(run_).ok());
  EXPECT_EQ(TaskOf(run_, "a").state(), v1::TASK_STATE_CANCELLED);
  EXPECT_EQ(RunState(*core_, run_), v1::RUN_STATE_CANCELLED);
  Start("gemm");
  EXPECT_EQ(link_->RunTasks().size(), 1u);  // the new link's first task
}

TEST_F(PromisedReportTest, ThePromisedReportArrivingInTimeEndsTheTaskAsItSays) {
  PromiseAndGoSilent();
  clock_.Advance(absl::Seconds(10));
  Finish(link_, task_);
  AdvanceAndSweep(absl::Seconds(10));
  EXPECT_EQ(TaskOf(run_, "a").state(), v1::TASK_STATE_SUCCEEDED);
}

// Regression: an agent out of reach past the heartbeat timeout had its
// task declared lost, and the run failed, even when the agent finished and
// every sample arrived later.
class LateFinalReportTest : public FleetCoreTest {
 protected:
  void LoseTheRunningTask() {
    link_ = Connect("a");
    run_ = Start("gemm");
    task_ = link_->RunTasks()[0];
    Send(link_, Started(task_));
    AdvanceAndSweep(absl::Seconds(16));
    ASSERT_EQ(TaskOf(run_, "a").state(), v1::TASK_STATE_LOST);
    ASSERT_EQ(RunState(*core_, run_), v1::RUN_STATE_FAILED);
  }
  std::shared_ptr<RecordingLink> link_;
  std::string run_;
  v1::RunTask task_;
};

TEST_F(LateFinalReportTest, TheLateFinalReportSettlesTheTaskSucceededWithANote) {
  LoseTheRunningTask();
  // The agent comes back still running it: it is not told to stop.
  v1::Hello hello = MakeHello("a");
  hello.set_running_task_id(task_.task_id());
  link_ = ConnectWith(hello);
  EXPECT_TRUE(link_->Cancels().empty());
  Finish(link_, task_, 2);
  const v1::NodeTask t = TaskOf(run_, "a");
  EXPECT_EQ(t.state(), v1::TASK_STATE_SUCCEEDED);
  EXPECT_NE(t.reason().find("final report arrived late"), std::string::npos) << t.reason();
  EXPECT_NE(t.reason().find("heartbeat"), std::string::npos) << t.reason();
  EXPECT_EQ(RunState(*core_, run_), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(*store_->CountSamples(), 2);
  EXPECT_EQ(link_->Acks(), 1);
  EXPECT_TRUE(link_->AckErrors().empty());
  // Stored, not only in memory: a new core reads the same.
  RestartCore(Options());
  EXPECT_EQ(TaskOf(run_, "a").state(), v1::TASK_STATE_SUCCEEDED);
  EXPECT_EQ(RunState(*core_, run_), v1::RUN_STATE_SUCCEEDED);
}

TEST_F(LateFinalReportTest, ALateFinalReportThatFailedLeavesTheRunFailed) {
  LoseTheRunningTask();
  link_ = Connect("a");
  v1::AgentMessage m;
  v1::Report* r = m.mutable_report();
  r->set_report_id(NewUlid());
  r->set_task_id(task_.task_id());
  r->set_task_finished(true);
  r->set_task_state(v1::TASK_STATE_FAILED);
  r->set_task_reason("gemm: out of memory");
  Send(link_, m);
  const v1::NodeTask t = TaskOf(run_, "a");
  EXPECT_EQ(t.state(), v1::TASK_STATE_FAILED);
  EXPECT_NE(t.reason().find("gemm: out of memory"), std::string::npos) << t.reason();
  EXPECT_EQ(RunState(*core_, run_), v1::RUN_STATE_FAILED);
}

TEST_F(LateFinalReportTest, OnlyALostTaskIsSettledAndOnlyByItsOwnNode) {
  LoseTheRunningTask();
  auto other = Connect("b");
  Finish(other, task_);  // b claims a's lost task
  EXPECT_EQ(TaskOf(run_, "a").state(), v1::TASK_STATE_LOST);
  ASSERT_EQ(other->AckErrors().size(), 1u);
  EXPECT_NE(other->AckErrors()[0].find("belongs to node a"), std::string::npos);
  // A task that ended otherwise (cancelled, failed) keeps its end.
  link_ = Connect("a");
  const std::string second = Start("gemm", {"a"});
  const v1::RunTask next = link_->RunTasks().back();
  ASSERT_TRUE(core_->CancelRun(second).ok());
  v1::AgentMessage cancelled;
  v1::Report* r = cancelled.mutable_report();
  r->set_report_id(NewUlid());
  r->set_task_id(next.task_id());
  r->set_task_finished(true);
  r->set_task_state(v1::TASK_STATE_CANCELLED);
  Send(link_, cancelled);
  Finish(link_, next);  // a late "succeeded" after the cancel
  EXPECT_EQ(TaskOf(second, "a").state(), v1::TASK_STATE_CANCELLED);
}

}  // namespace
}  // namespace fleetbench::controller
