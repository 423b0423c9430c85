// Report ingest: resends are idempotent, a node reports only its own tasks.
#include <cmath>

#include "controller/fleet_core_fixture.h"

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
  v1::Sample* s = r->add_samples();
  s->set_id(NewUlid());
  s->set_benchmark("gemm");
  s->set_metric("gemm.cpu.fp32.tflops");
  s->set_unit("tflops");
  s->set_value(2);
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
}

// One bad sample used to cost the whole report, silently: now the good ones
// are stored, the task fails with what was refused, and the agent is told.
v1::AgentMessage ReportWithOneBadSample(const v1::RunTask& task, bool finished) {
  v1::AgentMessage m;
  v1::Report* r = m.mutable_report();
  r->set_report_id(NewUlid());
  r->set_task_id(task.task_id());
  for (double value : {2.0, std::nan(""), 3.0}) {
    v1::Sample* s = r->add_samples();
    s->set_id(NewUlid());
    s->set_benchmark("gemm");
    s->set_metric("gemm.cpu.fp32.tflops");
    s->set_unit("tflops");
    s->set_value(value);
  }
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

}  // namespace
}  // namespace fleetbench::controller
