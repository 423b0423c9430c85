#include "agent/runtime/task_runner.h"

#include <map>
#include <thread>

#include "absl/status/status.h"
#include "common/reason.h"
#include "common/wire_limits.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

// A stand-in plugin with scripted behaviour: the runner's contract is what
// is tested here, the real plugins have their own tests.
class ScriptedBenchmark : public Benchmark {
 public:
  ScriptedBenchmark(std::string name, absl::Status probe, bool fail_run = false,
                    bool keep_evidence = false)
      : name_(std::move(name)),
        probe_(std::move(probe)),
        fail_run_(fail_run),
        keep_evidence_(keep_evidence),
        throughput_metric_(name_ + ".x.tflops"),
        faulty_metric_(name_ + ".faulty.count") {}
  std::string name() const override { return name_; }
  absl::Status Probe() const override { return probe_; }
  std::vector<MetricInfo> metrics() const override {
    return {{throughput_metric_.c_str(), "tflops", kHigherIsBetter, "scripted throughput"},
            {faulty_metric_.c_str(), "count", kLowerIsBetter, "scripted evidence"}};
  }
  absl::Status ValidateParams(const Params& params) const override {
    if (params.contains("bad")) return absl::InvalidArgumentError("bad param");
    if (auto it = params.find("quoted"); it != params.end()) {
      return absl::InvalidArgumentError("bad value '" + it->second + "'");
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<v1::Sample>> Run(const Params&, const RunContext& context) override {
    if (context.cancelled()) return absl::CancelledError("cancelled");
    context.KeepLog(name_ + " printed this");
    if (keep_evidence_) {
      v1::Sample evidence;
      evidence.set_metric(faulty_metric_);
      evidence.set_value(1);
      evidence.set_unit("count");
      context.KeepSamples({evidence});
    }
    if (fail_run_) return absl::InternalError("boom");
    context.ReportProgress(0.5, "half");
    v1::Sample s;
    s.set_metric(throughput_metric_);
    s.set_value(1);
    s.set_unit("tflops");
    return std::vector<v1::Sample>{s};
  }

 private:
  std::string name_;
  absl::Status probe_;
  bool fail_run_;
  bool keep_evidence_;
  // What metrics() points into.
  std::string throughput_metric_;
  std::string faulty_metric_;
};

TaskRunner MakeRunner() {
  std::vector<std::unique_ptr<Benchmark>> b;
  b.push_back(std::make_unique<ScriptedBenchmark>("ok", absl::OkStatus()));
  b.push_back(std::make_unique<ScriptedBenchmark>(
      "nogpu", absl::FailedPreconditionError("no NVIDIA driver")));
  b.push_back(std::make_unique<ScriptedBenchmark>("broken", absl::OkStatus(), true));
  b.push_back(std::make_unique<ScriptedBenchmark>("faulty", absl::OkStatus(), true, true));
  b.push_back(std::make_unique<ScriptedBenchmark>("noted", absl::OkStatus(), false, true));
  return TaskRunner(std::move(b), "/tmp");
}

v1::RunTask Task(std::vector<std::string> names) {
  v1::RunTask t;
  t.set_task_id("task1");
  t.set_run_id("run1");
  for (const auto& n : names) t.add_benchmarks()->set_name(n);
  return t;
}

std::vector<v1::Report> Execute(TaskRunner& runner, const v1::RunTask& task, bool cancel = false) {
  std::vector<v1::Report> reports;
  std::atomic<bool> cancelled{cancel};
  TaskRunner::Hooks hooks;
  hooks.report = [&](const v1::Report& r) { reports.push_back(r); };
  runner.Execute(task, cancelled, hooks);
  return reports;
}

TEST(TaskRunnerTest, SamplesGetIdsAndTheTaskEndsSucceeded) {
  TaskRunner runner = MakeRunner();
  auto reports = Execute(runner, Task({"ok"}));
  ASSERT_EQ(reports.size(), 2u);
  ASSERT_EQ(reports[0].samples_size(), 1);
  EXPECT_EQ(reports[0].samples(0).run_id(), "run1");
  EXPECT_EQ(reports[0].samples(0).benchmark(), "ok");
  EXPECT_EQ(reports[0].samples(0).id().size(), 26u);
  EXPECT_TRUE(reports[1].task_finished());
  EXPECT_EQ(reports[1].task_state(), v1::TASK_STATE_SUCCEEDED);
}

TEST(TaskRunnerTest, WhatTheBenchmarksKeptToBeReadIsTheFinalReportsLog) {
  TaskRunner runner = MakeRunner();
  auto reports = Execute(runner, Task({"ok", "broken", "nogpu"}));
  ASSERT_FALSE(reports.empty());
  const v1::Report& final_report = reports.back();
  ASSERT_TRUE(final_report.task_finished());
  EXPECT_EQ(final_report.task_log(),
            "== ok ==\nok printed this\n== broken ==\nbroken printed this\n");
}

TEST(TaskRunnerTest, ALogKeepsItsEndFromALineStartWithinTheBound) {
  std::string log;
  for (int i = 0; log.size() < 3 * kMaxTaskLogBytes; ++i) {
    log += "line " + std::to_string(i) + " \xC3\xA9t\xC3\xA9\n";  // "été": 2-byte chars
  }
  const std::string tail = LogTail(log);
  EXPECT_LE(tail.size(), kMaxTaskLogBytes);
  EXPECT_GT(tail.size(), kMaxTaskLogBytes - 64);
  EXPECT_TRUE(tail.starts_with("line ")) << tail.substr(0, 20);
  EXPECT_TRUE(log.ends_with(tail));

  // No line break to start from: a character start. Euro signs are 3
  // bytes, and 65,536 is not a multiple of 3: the plain cut would land
  // inside one.
  std::string euros;
  while (euros.size() < 2 * kMaxTaskLogBytes) euros += "\xE2\x82\xAC";
  const std::string cut = LogTail(euros);
  ASSERT_FALSE(cut.empty());
  EXPECT_EQ(static_cast<unsigned char>(cut.front()), 0xE2);
  EXPECT_EQ(cut.size() % 3, 0u);
  EXPECT_EQ(LogTail("short"), "short");
  // One line longer than the bound (a progress bar redrawn with '\r'):
  // its end, not nothing.
  const std::string bar = std::string(2 * kMaxTaskLogBytes, '#') + "\n";
  EXPECT_EQ(LogTail(bar).size(), kMaxTaskLogBytes);
  EXPECT_EQ(LogTail("bad \xff byte"), "bad \xef\xbf\xbd byte") << "made UTF-8";
}

TEST(TaskRunnerTest, ProbeFailureIsSkippedWithTheReason) {
  TaskRunner runner = MakeRunner();
  auto reports = Execute(runner, Task({"nogpu"}));
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].task_state(), v1::TASK_STATE_SKIPPED);
  ASSERT_EQ(reports[0].outcomes_size(), 1);
  EXPECT_EQ(reports[0].outcomes(0).reason(), "no NVIDIA driver");
}

TEST(TaskRunnerTest, FailureAndUnknownNamesFailTheTaskButOthersRun) {
  TaskRunner runner = MakeRunner();
  auto reports = Execute(runner, Task({"broken", "ok", "nope"}));
  ASSERT_EQ(reports.size(), 2u);  // one sample report, one final
  const v1::Report& last = reports.back();
  EXPECT_EQ(last.task_state(), v1::TASK_STATE_FAILED);
  EXPECT_EQ(last.outcomes(0).state(), v1::TASK_STATE_FAILED);
  EXPECT_EQ(last.outcomes(1).state(), v1::TASK_STATE_SUCCEEDED);
  EXPECT_EQ(last.outcomes(2).state(), v1::TASK_STATE_FAILED);
  EXPECT_NE(last.task_reason().find("boom"), std::string::npos);
}

// A failure's evidence (the stress probe's faulty.count of a GPU that gave
// a wrong answer) is stored before the failed outcome, not lost with it.
TEST(TaskRunnerTest, KeptSamplesSurviveAFailedRun) {
  TaskRunner runner = MakeRunner();
  auto reports = Execute(runner, Task({"faulty"}));
  ASSERT_EQ(reports.size(), 2u);
  ASSERT_EQ(reports[0].samples_size(), 1);
  EXPECT_EQ(reports[0].samples(0).metric(), "faulty.faulty.count");
  EXPECT_EQ(reports[0].samples(0).benchmark(), "faulty");
  EXPECT_EQ(reports[0].samples(0).run_id(), "run1");
  EXPECT_EQ(reports[0].samples(0).id().size(), 26u);
  EXPECT_EQ(reports[1].task_state(), v1::TASK_STATE_FAILED);
  EXPECT_NE(reports[1].task_reason().find("boom"), std::string::npos);
}

TEST(TaskRunnerTest, KeptSamplesGoBesideTheReturnedOnes) {
  TaskRunner runner = MakeRunner();
  auto reports = Execute(runner, Task({"noted"}));
  ASSERT_EQ(reports.size(), 2u);
  ASSERT_EQ(reports[0].samples_size(), 2);
  EXPECT_EQ(reports[0].samples(0).metric(), "noted.faulty.count");
  EXPECT_EQ(reports[0].samples(1).metric(), "noted.x.tflops");
  EXPECT_NE(reports[0].samples(0).id(), reports[0].samples(1).id());
  EXPECT_EQ(reports[1].task_state(), v1::TASK_STATE_SUCCEEDED);
}

TEST(TaskRunnerTest, BadParamsFailBeforeRunning) {
  TaskRunner runner = MakeRunner();
  v1::RunTask task = Task({"ok"});
  (*task.mutable_benchmarks(0)->mutable_params())["bad"] = "1";
  auto reports = Execute(runner, task);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].task_state(), v1::TASK_STATE_FAILED);
}

// Regression: an error quoting a long parameter value made a final report the
// controller refused. The runner cuts both reasons to the shared limit.
TEST(TaskRunnerTest, ReasonsQuotingLongParamsAreCutToTheLimit) {
  TaskRunner runner = MakeRunner();
  v1::RunTask task = Task({"ok"});
  (*task.mutable_benchmarks(0)->mutable_params())["quoted"] = std::string(4100, 'x');
  auto reports = Execute(runner, task);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].task_state(), v1::TASK_STATE_FAILED);
  EXPECT_LE(reports[0].task_reason().size(), kMaxReasonLength);
  EXPECT_EQ(reports[0].task_reason().rfind("ok: bad value 'xxx", 0), 0u);
  EXPECT_NE(reports[0].task_reason().find(" bytes cut)"), std::string::npos);
  ASSERT_EQ(reports[0].outcomes_size(), 1);
  EXPECT_LE(reports[0].outcomes(0).reason().size(), kMaxReasonLength);
  EXPECT_NE(reports[0].outcomes(0).reason().find(" bytes cut)"), std::string::npos);
}

TEST(TaskRunnerTest, CancelledTaskEndsCancelled) {
  TaskRunner runner = MakeRunner();
  auto reports = Execute(runner, Task({"ok", "ok"}), /*cancel=*/true);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].task_state(), v1::TASK_STATE_CANCELLED);
}

TEST(TaskRunnerTest, CapabilitiesCarryProbeReasons) {
  TaskRunner runner = MakeRunner();
  auto caps = runner.Capabilities();
  ASSERT_EQ(caps.size(), 5u);
  EXPECT_EQ(caps[0].status(), v1::CAPABILITY_STATUS_AVAILABLE);
  EXPECT_EQ(caps[1].status(), v1::CAPABILITY_STATUS_UNAVAILABLE);
  EXPECT_EQ(caps[1].reason(), "no NVIDIA driver");
  EXPECT_EQ(caps[0].default_timeout_ms(), 30 * 60 * 1000);
}

TEST(TaskRunnerTest, CapabilitiesCarryEachPluginsMetrics) {
  TaskRunner runner = MakeRunner();
  auto caps = runner.Capabilities();
  ASSERT_EQ(caps.size(), 5u);
  // Declared whether or not the plugin can run here: the controller learns
  // what a metric is from any node that knows the plugin.
  for (const v1::Capability& c : caps) {
    ASSERT_EQ(c.metrics_size(), 2) << c.benchmark();
    EXPECT_EQ(c.metrics(0).name(), c.benchmark() + ".x.tflops");
    EXPECT_EQ(c.metrics(0).unit(), "tflops");
    EXPECT_EQ(c.metrics(0).direction(), v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
    EXPECT_EQ(c.metrics(0).description(), "scripted throughput");
    EXPECT_EQ(c.metrics(0).benchmark(), c.benchmark());
    EXPECT_EQ(c.metrics(1).name(), c.benchmark() + ".faulty.count");
    EXPECT_EQ(c.metrics(1).direction(), v1::METRIC_DIRECTION_LOWER_IS_BETTER);
    EXPECT_EQ(c.metrics(1).benchmark(), c.benchmark());
  }
  EXPECT_EQ(caps[1].status(), v1::CAPABILITY_STATUS_UNAVAILABLE);
}

TEST(TaskRunnerTest, OutcomesCarryTheirStatusCode) {
  TaskRunner runner = MakeRunner();
  v1::RunTask task = Task({"ok", "nogpu", "broken", "ok", "missing"});
  (*task.mutable_benchmarks(3)->mutable_params())["bad"] = "1";
  auto reports = Execute(runner, task);
  const v1::Report& last = reports.back();
  ASSERT_EQ(last.outcomes_size(), 5);
  EXPECT_EQ(last.outcomes(0).code(), v1::STATUS_CODE_OK);
  EXPECT_EQ(last.outcomes(1).code(), v1::STATUS_CODE_FAILED_PRECONDITION);
  EXPECT_EQ(last.outcomes(2).code(), v1::STATUS_CODE_INTERNAL);
  EXPECT_EQ(last.outcomes(3).code(), v1::STATUS_CODE_INVALID_ARGUMENT);
  EXPECT_EQ(last.outcomes(4).code(), v1::STATUS_CODE_NOT_FOUND);
}

// Runs until its context says stop, as a plugin that hangs on a dead peer
// would if it polled cancelled().
class UntilCancelledBenchmark : public Benchmark {
 public:
  std::string name() const override { return "hang"; }
  absl::Status Probe() const override { return absl::OkStatus(); }
  std::vector<MetricInfo> metrics() const override { return {}; }
  absl::Status ValidateParams(const Params&) const override { return absl::OkStatus(); }
  absl::Duration DefaultTimeout(const Params&) const override { return absl::Milliseconds(30); }
  absl::StatusOr<std::vector<v1::Sample>> Run(const Params&, const RunContext& context) override {
    while (!context.cancelled()) std::this_thread::yield();
    return absl::CancelledError("hang: cancelled");
  }
};

TaskRunner HangRunner() {
  std::vector<std::unique_ptr<Benchmark>> b;
  b.push_back(std::make_unique<UntilCancelledBenchmark>());
  return TaskRunner(std::move(b), "/tmp");
}

TEST(TaskRunnerTest, BenchmarkPastItsTimeoutEndsDeadlineExceeded) {
  TaskRunner runner = HangRunner();
  v1::RunTask task = Task({"hang"});
  task.mutable_benchmarks(0)->set_timeout_ms(20);
  auto reports = Execute(runner, task);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].task_state(), v1::TASK_STATE_FAILED);
  ASSERT_EQ(reports[0].outcomes_size(), 1);
  EXPECT_EQ(reports[0].outcomes(0).state(), v1::TASK_STATE_FAILED);
  EXPECT_EQ(reports[0].outcomes(0).code(), v1::STATUS_CODE_DEADLINE_EXCEEDED);
  EXPECT_NE(reports[0].outcomes(0).reason().find("timeout of 20ms"), std::string::npos)
      << reports[0].outcomes(0).reason();
}

TEST(TaskRunnerTest, PluginDefaultTimeoutAppliesWhenTheSpecSetsNone) {
  TaskRunner runner = HangRunner();
  auto reports = Execute(runner, Task({"hang"}));
  ASSERT_EQ(reports.size(), 1u);
  ASSERT_EQ(reports[0].outcomes_size(), 1);
  EXPECT_EQ(reports[0].outcomes(0).code(), v1::STATUS_CODE_DEADLINE_EXCEEDED);
  EXPECT_NE(reports[0].outcomes(0).reason().find("timeout of 30ms"), std::string::npos);
}

TEST(TaskRunnerTest, NegativeTimeoutIsRefused) {
  TaskRunner runner = MakeRunner();
  v1::RunTask task = Task({"ok"});
  task.mutable_benchmarks(0)->set_timeout_ms(-1);
  auto reports = Execute(runner, task);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].outcomes(0).code(), v1::STATUS_CODE_INVALID_ARGUMENT);
}

// A collective plugin that records the group it was given.
class GroupProbe : public Benchmark {
 public:
  explicit GroupProbe(bool collective) : collective_(collective) {}
  std::string name() const override { return collective_ ? "coll" : "solo"; }
  bool collective() const override { return collective_; }
  absl::Status Probe() const override { return absl::OkStatus(); }
  absl::Status ValidateParams(const Params&) const override { return absl::OkStatus(); }
  std::vector<MetricInfo> metrics() const override { return {}; }
  absl::StatusOr<std::vector<v1::Sample>> Run(const Params&, const RunContext& context) override {
    saw_group = context.group() != nullptr;
    if (saw_group) {
      seen = *context.group();
      EXPECT_TRUE(seen.rendezvous->Set("k", "v").ok());
    }
    return std::vector<v1::Sample>{};
  }
  bool saw_group = false;
  GroupContext seen;

 private:
  bool collective_;
};

// An in-process store for the runner test (the stream-backed one has its
// own tests).
class MapRendezvous : public Rendezvous {
 public:
  absl::Status Set(const std::string& key, const std::string& value) override {
    values[key] = value;
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> Get(const std::string& key, absl::Duration) override {
    auto it = values.find(key);
    if (it == values.end()) return absl::NotFoundError(key);
    return it->second;
  }
  std::map<std::string, std::string> values;
};

TEST(TaskRunnerTest, CollectiveBenchmarksOfAGroupTaskSeeTheirGroup) {
  auto coll = std::make_unique<GroupProbe>(true);
  auto solo = std::make_unique<GroupProbe>(false);
  GroupProbe* c = coll.get();
  GroupProbe* s = solo.get();
  std::vector<std::unique_ptr<Benchmark>> b;
  b.push_back(std::move(coll));
  b.push_back(std::move(solo));
  TaskRunner runner(std::move(b), "/tmp");
  EXPECT_TRUE(runner.Capabilities()[0].collective());
  EXPECT_FALSE(runner.Capabilities()[1].collective());

  v1::RunTask task = Task({"coll", "solo"});
  v1::GroupAssignment* g = task.mutable_group();
  g->set_group_id("g1");
  g->set_rank(1);
  g->set_size(2);
  for (const char* n : {"a", "b"}) {
    v1::GroupMember* m = g->add_members();
    m->set_node(n);
    m->set_address(std::string("10.0.0.") + (n[0] == 'a' ? "1" : "2"));
  }
  g->set_deadline_unix_ms(1800000000000);
  MapRendezvous rendezvous;
  std::atomic<bool> cancelled{false};
  TaskRunner::Hooks hooks;
  std::vector<v1::Report> reports;
  hooks.report = [&](const v1::Report& r) { reports.push_back(r); };
  hooks.rendezvous = &rendezvous;
  runner.Execute(task, cancelled, hooks);
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back().task_state(), v1::TASK_STATE_SUCCEEDED);
  ASSERT_TRUE(c->saw_group);
  EXPECT_EQ(c->seen.group_id, "g1");
  EXPECT_EQ(c->seen.rank, 1);
  EXPECT_EQ(c->seen.size, 2);
  EXPECT_EQ(c->seen.member_nodes, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c->seen.member_addresses[1], "10.0.0.2");
  EXPECT_EQ(c->seen.deadline, absl::FromUnixMillis(1800000000000));
  EXPECT_EQ(rendezvous.values["k"], "v");
  EXPECT_FALSE(s->saw_group);  // not collective: runs as alone

  // Alone (no group in the task), the collective one has no group either.
  c->saw_group = true;
  runner.Execute(Task({"coll"}), cancelled, hooks);
  EXPECT_FALSE(c->saw_group);

  // A group task with no relay to meet through is skipped, not run.
  hooks.rendezvous = nullptr;
  reports.clear();
  runner.Execute(task, cancelled, hooks);
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back().outcomes(0).state(), v1::TASK_STATE_SKIPPED);
}

}  // namespace
}  // namespace fleetbench::agent
