// Dispatch rules and pairs: one task per node, max_parallel, the client
// half of a pair and how it ends with its server.
#include "controller/core/fleet_core_fixture.h"

namespace fleetbench::controller {
namespace {

TEST_F(FleetCoreTest, ANodeRunsOneTaskAtATime) {
  auto link = Connect("a");
  Start("gemm");
  Start("gemm");
  ASSERT_EQ(link->RunTasks().size(), 1u);  // the second waits
  Finish(link, link->RunTasks()[0]);
  ASSERT_EQ(link->RunTasks().size(), 2u);
  EXPECT_NE(link->RunTasks()[0].run_id(), link->RunTasks()[1].run_id());
}

TEST_F(FleetCoreTest, MaxParallelLimitsNodesInFlight) {
  auto a = Connect("a");
  auto b = Connect("b");
  auto c = Connect("c");
  const std::string run = Start("gemm", {}, /*max_parallel=*/1);
  EXPECT_EQ(a->RunTasks().size() + b->RunTasks().size() + c->RunTasks().size(), 1u);
  Finish(a, a->RunTasks()[0]);
  EXPECT_EQ(b->RunTasks().size(), 1u);
  EXPECT_EQ(c->RunTasks().size(), 0u);
  Finish(b, b->RunTasks()[0]);
  Finish(c, c->RunTasks()[0]);
  v1::GetRunRequest request;
  request.set_run_id(run);
  request.set_include_samples(true);
  auto done = core_->GetRun(request);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(done->samples_size(), 3);
}

TEST_F(FleetCoreTest, PairedBenchmarkSendsTheClientThePublishedPort) {
  auto a = Connect("a", /*net=*/true);
  auto b = Connect("b", /*net=*/true);
  const std::string run = Start("net", {}, 0, {{"streams", "2"}});
  ASSERT_EQ(a->RunTasks().size(), 1u);  // "a" listens (the reference node)
  EXPECT_EQ(b->RunTasks().size(), 0u);  // "b" waits for the port
  const v1::RunTask server = a->RunTasks()[0];
  ASSERT_EQ(server.benchmarks_size(), 1) << server.DebugString();
  ASSERT_TRUE(server.benchmarks(0).params().contains("role")) << server.DebugString();
  EXPECT_EQ(server.benchmarks(0).params().at("role"), "server");
  EXPECT_EQ(server.benchmarks(0).params().at("streams"), "2");
  EXPECT_EQ(TaskOf(run, "b").state(), v1::TASK_STATE_DISPATCHED);

  v1::AgentMessage port;
  port.mutable_port_published()->set_task_id(server.task_id());
  port.mutable_port_published()->set_port(40123);
  Send(a, port);
  ASSERT_EQ(b->RunTasks().size(), 1u);
  ASSERT_EQ(b->RunTasks()[0].benchmarks_size(), 1) << b->RunTasks()[0].DebugString();
  const auto params = b->RunTasks()[0].benchmarks(0).params();
  EXPECT_EQ(params.at("role"), "client");
  EXPECT_EQ(params.at("peer"), "10.9.8.1:40123");  // where a's stream came from
  EXPECT_EQ(params.at("peer_node"), "a");
}

TEST_F(FleetCoreTest, ClientFailsWhenItsServerEndsBeforeListening) {
  auto a = Connect("a", true);
  auto b = Connect("b", true);
  const std::string run = Start("net");
  Finish(a, a->RunTasks()[0], 0);
  v1::NodeTask client = TaskOf(run, "b");
  EXPECT_EQ(client.state(), v1::TASK_STATE_FAILED);
  EXPECT_NE(client.reason().find("before it was listening"), std::string::npos);
  EXPECT_TRUE(b->RunTasks().empty());
}

TEST_F(FleetCoreTest, ASkippedListenerSkipsThePair) {
  auto a = Connect("a", true);
  auto b = Connect("b", true);
  const std::string run = Start("net");
  v1::AgentMessage m;
  v1::Report* r = m.mutable_report();
  r->set_report_id(NewUlid());
  r->set_task_id(a->RunTasks()[0].task_id());
  r->set_task_finished(true);
  r->set_task_state(v1::TASK_STATE_SKIPPED);
  v1::BenchmarkOutcome* o = r->add_outcomes();
  o->set_benchmark("net");
  o->set_state(v1::TASK_STATE_SKIPPED);
  o->set_reason("no RDMA device");
  Send(a, m);
  v1::NodeTask client = TaskOf(run, "b");
  EXPECT_EQ(client.state(), v1::TASK_STATE_SKIPPED);
  EXPECT_NE(client.reason().find("no RDMA device"), std::string::npos) << client.reason();
  v1::GetRunRequest get;
  get.set_run_id(run);
  EXPECT_EQ(core_->GetRun(get)->state(), v1::RUN_STATE_SUCCEEDED);  // nothing failed
}

TEST_F(FleetCoreTest, PairwiseNeedsTwoNodes) {
  Connect("a", true);
  v1::StartRunRequest request;
  request.add_benchmarks()->set_name("net");
  EXPECT_EQ(core_->StartRun(request).status().code(), absl::StatusCode::kFailedPrecondition);
}

// A run's state is stored after its last task's end, in its own
// transaction: a controller killed between the two must not leave the run
// running forever.
TEST_F(FleetCoreTest, ARunWhoseLastTaskEndedJustBeforeAStopIsSettledAtTheNextStart) {
  auto link = Connect("a");
  const std::string run_id = Start("gemm");
  ASSERT_EQ(link->RunTasks().size(), 1u);
  Finish(link, link->RunTasks()[0]);
  v1::GetRunRequest request;
  request.set_run_id(run_id);
  // The actor applies the report before this call, queued after it.
  ASSERT_EQ(core_->GetRun(request)->state(), v1::RUN_STATE_SUCCEEDED);
  core_.reset();
  // What the store holds after a stop between the two writes.
  ASSERT_TRUE(store_->SetRunState(run_id, "running", absl::InfinitePast()).ok());
  RestartCore(Options());
  absl::StatusOr<v1::Run> run = core_->GetRun(request);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(store_->GetRun(run_id)->state, "succeeded");
}

}  // namespace
}  // namespace fleetbench::controller
