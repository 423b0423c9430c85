// Report ingest: resends are idempotent, a node reports only its own tasks.
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

}  // namespace
}  // namespace fleetbench::controller
