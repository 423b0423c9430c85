// FleetCore on a real SQLite file with a fake clock: heartbeat expiry,
// dispatch rules, pairs and report handling, deterministically. The agent
// end of each stream is a recording AgentLink (the wire is tested end to
// end in tests/e2e_test.cc).
#include "controller/fleet_core.h"

#include <filesystem>

#include "absl/synchronization/mutex.h"
#include "common/ulid.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

class RecordingLink : public AgentLink {
 public:
  void Send(const v1::ControllerMessage& message) override {
    absl::MutexLock lock(&mu_);
    sent_.push_back(message);
  }
  void Close() override {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  std::vector<v1::RunTask> RunTasks() {
    absl::MutexLock lock(&mu_);
    std::vector<v1::RunTask> out;
    for (const auto& m : sent_) {
      if (m.has_run_task()) out.push_back(m.run_task());
    }
    return out;
  }
  int Acks() {
    absl::MutexLock lock(&mu_);
    int n = 0;
    for (const auto& m : sent_) n += m.has_ack();
    return n;
  }
  bool GotWelcome() {
    absl::MutexLock lock(&mu_);
    return !sent_.empty() && sent_[0].has_welcome();
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::ControllerMessage> sent_;
  bool closed_ = false;
};

class FleetCoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("core_test_" + NewUlid());
    std::filesystem::create_directories(dir_);
    storage::SqliteOptions options;
    options.path = dir_ + "/h.db";
    auto store = storage::OpenSqliteStore(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    FleetOptions fleet;
    fleet.heartbeat_timeout = absl::Seconds(15);
    fleet.sweep_interval = absl::Milliseconds(1);
    core_ = std::make_unique<FleetCore>(store_.get(), &clock_, fleet);
    ASSERT_TRUE(core_->Start().ok());
  }
  void TearDown() override {
    core_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::shared_ptr<RecordingLink> Connect(const std::string& name, bool net = false) {
    auto link = std::make_shared<RecordingLink>();
    v1::Hello hello;
    hello.set_name(name);
    (*hello.mutable_labels())["price_per_hour"] = "1";
    v1::BenchmarkOutcome* gemm = hello.add_capabilities();
    gemm->set_benchmark("gemm");
    gemm->set_state(v1::TASK_STATE_SUCCEEDED);
    if (net) {
      v1::BenchmarkOutcome* n = hello.add_capabilities();
      n->set_benchmark("net");
      n->set_pairwise(true);
    }
    core_->OnHello(link, hello, "10.9.8." + std::to_string(links_.size() + 1));
    links_.push_back(link);
    Sync();
    return link;
  }
  // Waits until the actor has handled everything posted before (FIFO).
  void Sync() { ASSERT_TRUE(core_->ListNodes().ok()); }
  // A sweep runs after the actor's next batch; two round trips see it.
  void AdvanceAndSweep(absl::Duration d) {
    clock_.Advance(d);
    Sync();
    Sync();
  }

  std::string Start(const std::string& bench, std::vector<std::string> nodes = {},
                    uint32_t max_parallel = 0, std::map<std::string, std::string> params = {}) {
    v1::StartRunRequest request;
    v1::BenchmarkSpec* spec = request.add_benchmarks();
    spec->set_name(bench);
    for (const auto& [k, v] : params) (*spec->mutable_params())[k] = v;
    for (const auto& n : nodes) request.add_nodes(n);
    request.set_max_parallel(max_parallel);
    auto started = core_->StartRun(request);
    EXPECT_TRUE(started.ok()) << started.status();
    return started.ok() ? started->run_id() : "";
  }

  void Send(const std::shared_ptr<RecordingLink>& link, v1::AgentMessage m) {
    core_->OnAgentMessage(link, std::move(m));
    Sync();
  }
  void Finish(const std::shared_ptr<RecordingLink>& link, const v1::RunTask& task,
              int samples = 1) {
    v1::AgentMessage m;
    v1::Report* r = m.mutable_report();
    r->set_report_id(NewUlid());
    r->set_task_id(task.task_id());
    for (int i = 0; i < samples; ++i) {
      v1::Sample* s = r->add_samples();
      s->set_id(NewUlid());
      s->set_run_id(task.run_id());
      s->set_benchmark("gemm");
      s->set_metric("gemm.cpu.fp32.tflops");
      s->set_unit("tflops");
      s->set_value(1.0 + i);
      s->set_time_unix_ms(absl::ToUnixMillis(clock_.Now()));
    }
    r->set_task_finished(true);
    r->set_task_state(v1::TASK_STATE_SUCCEEDED);
    Send(link, m);
  }
  v1::NodeTask TaskOf(const std::string& run_id, const std::string& node) {
    v1::GetRunRequest request;
    request.set_run_id(run_id);
    auto run = core_->GetRun(request);
    EXPECT_TRUE(run.ok());
    for (const auto& t : run->tasks()) {
      if (t.node() == node) return t;
    }
    return {};
  }

  std::string dir_;
  FakeClock clock_{absl::FromUnixSeconds(1800000000)};
  std::unique_ptr<storage::Store> store_;
  std::unique_ptr<FleetCore> core_;
  std::vector<std::shared_ptr<RecordingLink>> links_;
};

TEST_F(FleetCoreTest, HelloIsWelcomedAndTheNodeIsOnline) {
  auto link = Connect("a");
  EXPECT_TRUE(link->GotWelcome());
  auto nodes = core_->ListNodes();
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->nodes_size(), 1);
  EXPECT_EQ(nodes->nodes(0).status(), "online");
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
  EXPECT_EQ(core_->ListNodes()->nodes(0).status(), "offline");
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
  EXPECT_EQ(core_->ListNodes()->nodes(0).status(), "online");
}

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
  EXPECT_EQ(done->state(), "succeeded");
  EXPECT_EQ(done->samples_size(), 3);
}

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
  EXPECT_EQ(core_->GetRun(get)->state(), "succeeded");  // nothing failed
}

TEST_F(FleetCoreTest, PairwiseNeedsTwoNodes) {
  Connect("a", true);
  v1::StartRunRequest request;
  request.add_benchmarks()->set_name("net");
  EXPECT_EQ(core_->StartRun(request).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(PlanPairsTest, Modes) {
  const std::vector<std::string> nodes = {"a", "b", "c", "d"};
  v1::BenchmarkSpec spec;
  spec.set_name("net");
  auto star = PlanPairs(spec, nodes);
  ASSERT_TRUE(star.ok());
  EXPECT_EQ(star->size(), 3u);
  EXPECT_EQ((*star)[0], std::make_pair(std::string("a"), std::string("b")));

  (*spec.mutable_params())["pairing"] = "all";
  EXPECT_EQ(PlanPairs(spec, nodes)->size(), 6u);
  (*spec.mutable_params())["pairing"] = "pair";
  EXPECT_EQ(PlanPairs(spec, nodes)->size(), 1u);
  (*spec.mutable_params())["pairing"] = "star";
  (*spec.mutable_params())["reference"] = "c";
  auto ref = PlanPairs(spec, nodes);
  ASSERT_TRUE(ref.ok());
  for (const auto& [server, client] : *ref) EXPECT_EQ(server, "c");
  (*spec.mutable_params())["reference"] = "zz";
  EXPECT_EQ(PlanPairs(spec, nodes).status().code(), absl::StatusCode::kInvalidArgument);
  (*spec.mutable_params())["pairing"] = "ring";
  EXPECT_EQ(PlanPairs(spec, nodes).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fleetbench::controller
