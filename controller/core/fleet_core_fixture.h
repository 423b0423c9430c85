// controller/core/fleet_core_fixture.h — FleetCore on a real SQLite file with a
// fake clock, for the fleet_core_*_test.cc files: heartbeat expiry, dispatch
// rules, pairs and report handling, deterministically. The agent end of each
// stream is a recording AgentLink (the wire is tested end to end in
// tests/e2e_test.cc).
#ifndef FLEETBENCH_CONTROLLER_CORE_FLEET_CORE_FIXTURE_H_
#define FLEETBENCH_CONTROLLER_CORE_FLEET_CORE_FIXTURE_H_

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/ulid.h"
#include "controller/core/fleet_core.h"
#include "gtest/gtest.h"
#include "storage/sqlite_store.h"

namespace fleetbench::controller {

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
  // The error of every ack that had one, in order.
  std::vector<std::string> AckErrors() {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const auto& m : sent_) {
      if (m.has_ack() && !m.ack().error().empty()) out.push_back(m.ack().error());
    }
    return out;
  }
  std::vector<std::string> Cancels() {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const auto& m : sent_) {
      if (m.has_cancel_task()) out.push_back(m.cancel_task().task_id());
    }
    return out;
  }
  std::vector<v1::KvResponse> KvResponses() {
    absl::MutexLock lock(&mu_);
    std::vector<v1::KvResponse> out;
    for (const auto& m : sent_) {
      if (m.has_kv_response()) out.push_back(m.kv_response());
    }
    return out;
  }
  bool GotWelcome() {
    absl::MutexLock lock(&mu_);
    return !sent_.empty() && sent_[0].has_welcome();
  }
  bool closed() {
    absl::MutexLock lock(&mu_);
    return closed_;
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::ControllerMessage> sent_;
  bool closed_ = false;
};

// Appends a gemm sample with a fresh id, as an agent's plugin reports it.
inline v1::Sample* AddGemmSample(v1::Report* report, double value) {
  v1::Sample* s = report->add_samples();
  s->set_id(NewUlid());
  s->set_benchmark("gemm");
  s->set_metric("gemm.cpu.fp32.tflops");
  s->set_unit("tflops");
  s->set_value(value);
  return s;
}

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
    RestartCore(Options());
  }
  // The options every test starts with; tests change a copy.
  static FleetOptions Options() {
    FleetOptions fleet;
    fleet.heartbeat_timeout = absl::Seconds(15);
    fleet.sweep_interval = absl::Milliseconds(1);
    return fleet;
  }
  // A fresh core on the same store (sessions are forgotten).
  void RestartCore(FleetOptions fleet) {
    core_.reset();
    core_ = std::make_unique<FleetCore>(store_.get(), &clock_, std::move(fleet));
    ASSERT_TRUE(core_->Start().ok());
  }
  void TearDown() override {
    core_.reset();
    std::filesystem::remove_all(dir_);
  }

  // A metric as a plugin declares it in a hello.
  static void Declare(v1::Capability* capability, const std::string& metric,
                      const std::string& unit, v1::MetricDirection direction) {
    v1::MetricDescriptor* d = capability->add_metrics();
    d->set_name(metric);
    d->set_unit(unit);
    d->set_direction(direction);
    d->set_description("declared by the test");
    d->set_benchmark(capability->benchmark());
  }
  // What an agent with the gemm plugin (and, with `net`, the net plugin)
  // says, with the metrics those plugins declare.
  static v1::Hello MakeHello(const std::string& name, bool net = false) {
    v1::Hello hello;
    hello.set_name(name);
    (*hello.mutable_labels())["price_per_hour"] = "1";
    v1::Capability* gemm = hello.add_capabilities();
    gemm->set_benchmark("gemm");
    gemm->set_status(v1::CAPABILITY_STATUS_AVAILABLE);
    Declare(gemm, "gemm.cpu.fp32.tflops", "tflops", v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
    Declare(gemm, "gemm.cpu.fp64.tflops", "tflops", v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
    if (net) {
      v1::Capability* n = hello.add_capabilities();
      n->set_benchmark("net");
      n->set_pairwise(true);
      Declare(n, "net.tcp.Gbps", "Gbps", v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
      Declare(n, "net.tcp.rtt_p50_us", "us", v1::METRIC_DIRECTION_LOWER_IS_BETTER);
    }
    return hello;
  }
  std::shared_ptr<RecordingLink> Connect(const std::string& name, bool net = false) {
    return ConnectWith(MakeHello(name, net));
  }
  std::shared_ptr<RecordingLink> ConnectWith(const v1::Hello& hello) {
    auto link = std::make_shared<RecordingLink>();
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
      v1::Sample* s = AddGemmSample(r, 1.0 + i);
      s->set_run_id(task.run_id());
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

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_FLEET_CORE_FIXTURE_H_
