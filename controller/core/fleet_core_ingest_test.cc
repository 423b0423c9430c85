// Report ingest: resends are idempotent, a node reports only its own tasks.
#include <cmath>

#include "controller/core/fleet_core_fixture.h"
#include "controller/core/report_limits.h"

namespace fleetbench::controller {
namespace {

TEST_F(FleetCoreTest, ResentReportIsStoredOnceAndAckedTwice) {
  auto link = Connect("a");
  const std::string run = Start("gemm");
  v1::RunTask task = link->RunTasks()[0];
  v1::AgentMessage m;
  v1::Report* r = m.mutable_report();
  r->set_report_id(NewUlid());
  r->set_task_id(task.task_id());
  AddGemmSample(r, 2);
  Send(link, m);
  Send(link, m);
  EXPECT_EQ(link->Acks(), 2);
  EXPECT_EQ(*store_->CountSamples(), 1);
  EXPECT_EQ(core_->GetStats().samples_duplicate, 1);
}

TEST_F(FleetCoreTest, ANodeCannotReportForAnotherNodesTask) {
  auto a = Connect("a");
  auto b = Connect("b");
  Start("gemm", {"a"});
  Finish(b, a->RunTasks()[0]);  // b claims a's task
  EXPECT_EQ(*store_->CountSamples(), 0);
  EXPECT_EQ(b->Acks(), 1);  // acked so it stops resending, but not stored
  ASSERT_EQ(b->AckErrors().size(), 1u);  // and told so, not acked as stored
  EXPECT_NE(b->AckErrors()[0].find("belongs to node a"), std::string::npos);
}

// One bad sample used to cost the whole report, silently: now the good ones
// are stored, the task fails with what was refused, and the agent is told.
v1::AgentMessage ReportWithOneBadSample(const v1::RunTask& task, bool finished) {
  v1::AgentMessage m;
  v1::Report* r = m.mutable_report();
  r->set_report_id(NewUlid());
  r->set_task_id(task.task_id());
  for (double value : {2.0, std::nan(""), 3.0}) AddGemmSample(r, value);
  if (finished) {
    r->set_task_finished(true);
    r->set_task_state(v1::TASK_STATE_SUCCEEDED);
  }
  return m;
}

TEST_F(FleetCoreTest, FinalReportWithABadSampleKeepsTheGoodOnesAndFailsTheTask) {
  auto link = Connect("a");
  const std::string run = Start("gemm");
  const v1::RunTask task = link->RunTasks()[0];
  Send(link, ReportWithOneBadSample(task, /*finished=*/true));
  EXPECT_EQ(*store_->CountSamples(), 2);
  ASSERT_EQ(link->AckErrors().size(), 1u);
  EXPECT_EQ(link->AckErrors()[0], "1 of 3 samples refused; sample 1: value is not finite");
  const v1::NodeTask t = TaskOf(run, "a");
  EXPECT_EQ(t.state(), v1::TASK_STATE_FAILED);
  EXPECT_NE(t.reason().find("sample 1: value is not finite"), std::string::npos) << t.reason();
  v1::GetRunRequest get;
  get.set_run_id(run);
  EXPECT_EQ(core_->GetRun(get)->state(), v1::RUN_STATE_FAILED);
  EXPECT_TRUE(link->Cancels().empty());  // the agent had already finished
}

TEST_F(FleetCoreTest, ProgressReportWithABadSampleEndsTheTaskAndStopsTheAgent) {
  auto link = Connect("a");
  const std::string run = Start("gemm");
  const v1::RunTask task = link->RunTasks()[0];
  Send(link, ReportWithOneBadSample(task, /*finished=*/false));
  EXPECT_EQ(*store_->CountSamples(), 2);
  EXPECT_EQ(TaskOf(run, "a").state(), v1::TASK_STATE_FAILED);
  ASSERT_EQ(link->Cancels().size(), 1u);
  EXPECT_EQ(link->Cancels()[0], task.task_id());
  // The agent's own final report arrives late: its samples are kept, and
  // the failed state stays.
  Finish(link, task, 2);
  EXPECT_EQ(*store_->CountSamples(), 4);
  EXPECT_EQ(TaskOf(run, "a").state(), v1::TASK_STATE_FAILED);
}

// Regression: a final report whose reason was too long was refused yet acked,
// and its task stayed running forever, wedging the node. Now the refusal ends
// the task, its good samples are kept, the ack says what was refused, and
// the node takes the next task.
v1::AgentMessage ReportWithOverlongReason(const v1::RunTask& task, bool finished) {
  v1::AgentMessage m;
  v1::Report* r = m.mutable_report();
  r->set_report_id(NewUlid());
  r->set_task_id(task.task_id());
  AddGemmSample(r, 2);
  if (finished) {
    r->set_task_finished(true);
    r->set_task_state(v1::TASK_STATE_FAILED);
    r->set_task_reason(std::string(kMaxReasonLength + 10, 'x'));
  }
  v1::BenchmarkOutcome* o = r->add_outcomes();
  o->set_benchmark("gemm");
  o->set_state(v1::TASK_STATE_FAILED);
  o->set_reason(std::string(kMaxReasonLength + 10, 'y'));
  return m;
}

TEST_F(FleetCoreTest, FinalReportWithAnOverlongReasonEndsTheTaskFailed) {
  auto link = Connect("a");
  const std::string run = Start("gemm");
  const v1::RunTask task = link->RunTasks()[0];
  Send(link, ReportWithOverlongReason(task, /*finished=*/true));
  EXPECT_EQ(link->Acks(), 1);
  ASSERT_EQ(link->AckErrors().size(), 1u);
  EXPECT_NE(link->AckErrors()[0].find("report refused: task_reason too long"),
            std::string::npos)
      << link->AckErrors()[0];
  EXPECT_EQ(*store_->CountSamples(), 1);
  const v1::NodeTask t = TaskOf(run, "a");
  EXPECT_EQ(t.state(), v1::TASK_STATE_FAILED);
  EXPECT_LE(t.reason().size(), kMaxReasonLength);
  EXPECT_EQ(t.reason().rfind("report refused: task_reason too long", 0), 0u) << t.reason();
  ASSERT_EQ(t.outcomes_size(), 1);
  EXPECT_LE(t.outcomes(0).reason().size(), kMaxReasonLength);
  EXPECT_TRUE(link->Cancels().empty());  // the agent had already finished
  v1::GetRunRequest get;
  get.set_run_id(run);
  EXPECT_EQ(core_->GetRun(get)->state(), v1::RUN_STATE_FAILED);
  // Not wedged: the node is dispatched its next task.
  Start("gemm");
  EXPECT_EQ(link->RunTasks().size(), 2u);
}

TEST_F(FleetCoreTest, ProgressReportWithAnOverlongReasonEndsTheTaskAndStopsTheAgent) {
  auto link = Connect("a");
  const std::string run = Start("gemm");
  const v1::RunTask task = link->RunTasks()[0];
  Send(link, ReportWithOverlongReason(task, /*finished=*/false));
  ASSERT_EQ(link->AckErrors().size(), 1u);
  EXPECT_NE(link->AckErrors()[0].find("outcome field too long"), std::string::npos);
  EXPECT_EQ(TaskOf(run, "a").state(), v1::TASK_STATE_FAILED);
  ASSERT_EQ(link->Cancels().size(), 1u);
  EXPECT_EQ(link->Cancels()[0], task.task_id());
}

}  // namespace
}  // namespace fleetbench::controller
