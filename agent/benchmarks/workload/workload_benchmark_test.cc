// The workload plugin with real processes (/bin/sh): metric lines become
// samples with their declared unit and direction, wall and set-up time
// come with every run, and a malformed line, a failing command or the
// deadline fail the run while the good samples are kept; the bounds on
// what one run's output becomes hold; a LoadGen summary is this run's own.
#include "agent/benchmarks/workload/workload_benchmark.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/ulid.h"
#include "gmock/gmock.h"

namespace fleetbench::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string MetricLine(const std::string& name, const std::string& value, const std::string& unit,
                       const std::string& direction) {
  return "FLEETBENCH_METRIC {\"name\": \"" + name + "\", \"value\": " + value +
         ", \"unit\": \"" + unit + "\", \"direction\": \"" + direction + "\"}";
}

// A workload running `script` with /bin/sh; {rate} takes 1..6 digits.
Workload ShellWorkload(const std::string& name, const std::string& script) {
  Workload w;
  w.name = name;
  w.manifest.add_command("/bin/sh");
  w.manifest.add_command("-c");
  w.manifest.add_command(script);
  v1::WorkloadParam rate;
  rate.set_default_("100");
  rate.set_pattern("[0-9]{1,6}");
  (*w.manifest.mutable_params())["rate"] = rate;
  w.manifest.set_work_unit("samples");
  (*w.manifest.mutable_env())["WORKLOAD_GREETING"] = "hello";
  return w;
}

class WorkloadBenchmarkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = std::filesystem::temp_directory_path() / ("workload_" + NewUlid());
    std::filesystem::create_directories(scratch_);
  }
  void TearDown() override { std::filesystem::remove_all(scratch_); }

  // Runs `params` on `plugin` with a context that records what it keeps
  // and declares; `timeout` becomes the context's deadline.
  absl::StatusOr<std::vector<v1::Sample>> Run(WorkloadBenchmark& plugin, const Params& params,
                                              absl::Duration timeout = absl::Seconds(30)) {
    kept_.clear();
    declared_.clear();
    RunContext context(
        scratch_.string(), &cancelled_, [](double, const std::string&) {}, nullptr,
        [this](std::vector<v1::Sample> s) { kept_.insert(kept_.end(), s.begin(), s.end()); },
        [this](const v1::MetricDescriptor& d) { declared_[d.name()] = d; });
    context.set_deadline(absl::Now() + timeout);
    log_.clear();
    context.set_keep_log([this](std::string text) { log_ += text; });
    return plugin.Run(params, context);
  }

  std::filesystem::path scratch_;
  std::atomic<bool> cancelled_{false};
  std::vector<v1::Sample> kept_;
  std::map<std::string, v1::MetricDescriptor> declared_;
  std::string log_;
};

TEST_F(WorkloadBenchmarkTest, MetricLinesBecomeSamplesWithTheirOwnUnitAndDirection) {
  WorkloadBenchmark plugin({ShellWorkload(
      "train_step", "echo loading; echo \"greeting=$WORKLOAD_GREETING\"; echo '" +
                        MetricLine("samples_per_s", "{rate}.5", "samples/s", "higher") + "'; echo '" +
                        MetricLine("step_ms", "12", "ms", "lower") + "'; pwd")});
  ASSERT_TRUE(plugin.Probe().ok());
  absl::StatusOr<std::vector<v1::Sample>> samples =
      Run(plugin, {{"name", "train_step"}, {"rate", "1234"}});
  ASSERT_TRUE(samples.ok()) << samples.status();
  std::map<std::string, v1::Sample> by_metric;
  for (const v1::Sample& s : *samples) by_metric[s.metric()] = s;
  ASSERT_TRUE(by_metric.contains("workload.train_step.samples_per_s"));
  const v1::Sample& rate = by_metric["workload.train_step.samples_per_s"];
  EXPECT_DOUBLE_EQ(rate.value(), 1234.5);
  EXPECT_EQ(rate.unit(), "samples/s");
  EXPECT_EQ(rate.params().at("rate"), "1234");
  EXPECT_EQ(rate.params().at("work_unit"), "samples");
  EXPECT_DOUBLE_EQ(by_metric["workload.train_step.step_ms"].value(), 12);
  ASSERT_TRUE(by_metric.contains("workload.train_step.wall_s"));
  ASSERT_TRUE(by_metric.contains("workload.train_step.setup_s"));
  ASSERT_TRUE(by_metric.contains("workload.train_step.cpu_cores"));
  ASSERT_TRUE(by_metric.contains("workload.train_step.peak_rss_mb"));
  EXPECT_GT(by_metric["workload.train_step.peak_rss_mb"].value(), 0.1) << "a shell is resident";
  EXPECT_GE(by_metric["workload.train_step.wall_s"].value(),
            by_metric["workload.train_step.setup_s"].value());

  ASSERT_TRUE(declared_.contains("workload.train_step.samples_per_s"));
  EXPECT_EQ(declared_["workload.train_step.samples_per_s"].direction(),
            v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
  EXPECT_EQ(declared_["workload.train_step.step_ms"].direction(),
            v1::METRIC_DIRECTION_LOWER_IS_BETTER);
  EXPECT_EQ(declared_["workload.train_step.wall_s"].unit(), "s");
  for (const auto& [name, d] : declared_) {
    EXPECT_TRUE(name.starts_with(plugin.dynamic_metric_prefix())) << name;
  }
}

TEST_F(WorkloadBenchmarkTest, AMalformedMetricLineFailsTheRunNamingItAndKeepsTheGoodSamples) {
  WorkloadBenchmark plugin({ShellWorkload(
      "w", "echo '" + MetricLine("good", "1", "x/s", "higher") +
               "'; echo 'FLEETBENCH_METRIC {\"name\": \"bad\", \"value\": \"fast\"}'")});
  absl::StatusOr<std::vector<v1::Sample>> samples = Run(plugin, {{"name", "w"}});
  ASSERT_FALSE(samples.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(samples.status())) << samples.status();
  EXPECT_THAT(samples.status().message(), HasSubstr("stdout line 2"));
  std::vector<std::string> metrics;
  for (const v1::Sample& s : kept_) metrics.push_back(s.metric());
  EXPECT_THAT(metrics, ::testing::Contains("workload.w.good"));
}

TEST_F(WorkloadBenchmarkTest, AFailingCommandsReasonMasksItsSecrets) {
  Workload w = ShellWorkload("w", "echo \"auth failed for $API_TOKEN\"; exit 1");
  (*w.manifest.mutable_env())["API_TOKEN"] = "tok_0123456789";
  WorkloadBenchmark plugin({w});
  absl::StatusOr<std::vector<v1::Sample>> samples = Run(plugin, {{"name", "w"}});
  ASSERT_FALSE(samples.ok());
  EXPECT_THAT(samples.status().message(), HasSubstr("auth failed for (secret)"));
  EXPECT_THAT(samples.status().message(), Not(HasSubstr("tok_0123456789")));
}

TEST_F(WorkloadBenchmarkTest, AFailingCommandFailsWithTheEndOfItsOutput) {
  WorkloadBenchmark plugin({ShellWorkload(
      "w", "echo '" + MetricLine("partial", "3", "x/s", "higher") +
               "'; echo 'CUDA out of memory' >&2; exit 3")});
  absl::StatusOr<std::vector<v1::Sample>> samples = Run(plugin, {{"name", "w"}});
  ASSERT_FALSE(samples.ok());
  EXPECT_THAT(samples.status().message(), HasSubstr("exited with status 3"));
  EXPECT_THAT(samples.status().message(), HasSubstr("CUDA out of memory"));
  ASSERT_FALSE(kept_.empty()) << "what it measured before failing is kept";
}

TEST_F(WorkloadBenchmarkTest, TheDeadlineStopsTheCommand) {
  WorkloadBenchmark plugin({ShellWorkload("w", "echo started; sleep 30")});
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<v1::Sample>> samples =
      Run(plugin, {{"name", "w"}}, absl::Milliseconds(500));
  EXPECT_TRUE(absl::IsCancelled(samples.status())) << samples.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(20)) << "not the 30 s the command wanted";
}

TEST_F(WorkloadBenchmarkTest, OnlyDeclaredWorkloadsAndValuesTheirPatternsTakeAreRun) {
  WorkloadBenchmark plugin({ShellWorkload("w", "true")});
  EXPECT_THAT(plugin.ValidateParams({}).message(), HasSubstr("which workload?"));
  EXPECT_THAT(plugin.ValidateParams({{"name", "other"}}).message(),
              HasSubstr("no workload 'other' on this node; it declares w"));
  EXPECT_THAT(plugin.ValidateParams({{"name", "w"}, {"rate", "1;reboot"}}).message(),
              HasSubstr("does not match"));
  EXPECT_THAT(plugin.ValidateParams({{"name", "w"}, {"cmd", "x"}}).message(),
              HasSubstr("has no parameter 'cmd'"));
  EXPECT_TRUE(plugin.ValidateParams({{"name", "w"}, {"rate", "7"}}).ok());

  WorkloadBenchmark controllers_copy({});
  EXPECT_TRUE(absl::IsFailedPrecondition(controllers_copy.Probe()));
  EXPECT_TRUE(controllers_copy.ValidateParams({{"name", "anything"}}).ok())
      << "the controller checks the nodes' declarations instead";
  EXPECT_FALSE(controllers_copy.ValidateParams({{"name", "Bad Name"}}).ok());

  v1::Capability capability;
  plugin.Describe(&capability);
  ASSERT_EQ(capability.workloads_size(), 1);
  EXPECT_EQ(capability.workloads(0).name(), "w");
  EXPECT_EQ(capability.workloads(0).params().at("rate").pattern(), "[0-9]{1,6}");
  EXPECT_EQ(capability.workloads(0).work_unit(), "samples");
}

TEST_F(WorkloadBenchmarkTest, AnMlperfTrainingLogGivesThroughputWithoutChangesToTheCode) {
  WorkloadBenchmark plugin({ShellWorkload(
      "mlperf",
      "echo ':::MLLOG {\"namespace\": \"\", \"time_ms\": 1000, \"event_type\": \"INTERVAL_START\", "
      "\"key\": \"run_start\", \"value\": null, \"metadata\": {}}'; "
      "echo ':::MLLOG {\"namespace\": \"\", \"time_ms\": 5000, \"event_type\": \"POINT_IN_TIME\", "
      "\"key\": \"throughput\", \"value\": {\"throughput\": 2500.0}, \"metadata\": {}}'; "
      "echo ':::MLLOG {\"namespace\": \"\", \"time_ms\": 61000, \"event_type\": \"INTERVAL_END\", "
      "\"key\": \"run_stop\", \"value\": null, \"metadata\": {\"status\": \"success\"}}'")});
  absl::StatusOr<std::vector<v1::Sample>> samples = Run(plugin, {{"name", "mlperf"}});
  ASSERT_TRUE(samples.ok()) << samples.status();
  std::map<std::string, double> values;
  for (const v1::Sample& s : *samples) values[s.metric()] = s.value();
  EXPECT_DOUBLE_EQ(values["workload.mlperf.throughput"], 2500.0);
  EXPECT_DOUBLE_EQ(values["workload.mlperf.run_time_s"], 60.0);
}

TEST_F(WorkloadBenchmarkTest, AnMlperfLoadgenSummaryTheCommandWritesBecomesMetrics) {
  Workload w = ShellWorkload(
      "resnet_offline",
      "printf '%s\\n' '================================================' 'MLPerf Results Summary' "
      "'================================================' 'SUT name : ResNet50' "
      "'Scenario : Offline' 'Mode     : PerformanceOnly' 'Samples per second: 91234.5' "
      "'Result is : INVALID' > mlperf_log_summary.txt");
  w.manifest.set_loadgen_summary("mlperf_log_summary.txt");
  WorkloadBenchmark plugin({w});
  absl::StatusOr<std::vector<v1::Sample>> samples = Run(plugin, {{"name", "resnet_offline"}});
  ASSERT_TRUE(samples.ok()) << samples.status();
  bool found = false;
  for (const v1::Sample& s : *samples) {
    if (s.metric() != "workload.resnet_offline.samples_per_s") continue;
    found = true;
    EXPECT_DOUBLE_EQ(s.value(), 91234.5);
    EXPECT_EQ(s.params().at("loadgen_result"), "INVALID") << "kept, and says so";
    EXPECT_EQ(s.params().at("loadgen_scenario"), "Offline");
  }
  EXPECT_TRUE(found);

  w.manifest.set_loadgen_summary("never_written.txt");
  WorkloadBenchmark missing({w});
  absl::StatusOr<std::vector<v1::Sample>> none = Run(missing, {{"name", "resnet_offline"}});
  EXPECT_THAT(none.status().message(), HasSubstr("no LoadGen summary"));
}

TEST_F(WorkloadBenchmarkTest, ALoadgenSummaryIsThisRunsOwnAndNeverALink) {
  // A run that writes no summary, after one that did: the earlier file is
  // gone before the command starts, so the run fails instead of passing
  // the old figures off as its own.
  Workload w = ShellWorkload("lg", "true");
  w.manifest.set_cwd(scratch_.string());
  w.manifest.set_loadgen_summary("summary.txt");
  {
    std::ofstream old(scratch_ / "summary.txt");
    old << "Scenario : Offline\nSamples per second: 5\nResult is : VALID\n";
  }
  WorkloadBenchmark plugin({w});
  absl::StatusOr<std::vector<v1::Sample>> stale = Run(plugin, {{"name", "lg"}});
  EXPECT_THAT(stale.status().message(), HasSubstr("no LoadGen summary"));

  // A summary that is a link (to a file the agent can read) is refused.
  const std::filesystem::path secret = scratch_ / "elsewhere.txt";
  {
    std::ofstream out(secret);
    out << "Scenario : Offline\nSamples per second: 5\nResult is : VALID\n";
  }
  Workload linker = ShellWorkload("lg", "ln -s " + secret.string() + " summary.txt");
  linker.manifest.set_cwd(scratch_.string());
  linker.manifest.set_loadgen_summary("summary.txt");
  WorkloadBenchmark linking({linker});
  absl::StatusOr<std::vector<v1::Sample>> linked = Run(linking, {{"name", "lg"}});
  ASSERT_FALSE(linked.ok());
  EXPECT_THAT(linked.status().message(), HasSubstr("is a symbolic link"));
  for (const v1::Sample& s : kept_) EXPECT_NE(s.metric(), "workload.lg.samples_per_s");

  // A command that fails leaves its summary unread.
  Workload failing = ShellWorkload(
      "lg", "printf 'Scenario : Offline\\nSamples per second: 5\\n' > summary.txt; exit 1");
  failing.manifest.set_cwd(scratch_.string());
  failing.manifest.set_loadgen_summary("summary.txt");
  WorkloadBenchmark fails({failing});
  absl::StatusOr<std::vector<v1::Sample>> failed = Run(fails, {{"name", "lg"}});
  EXPECT_THAT(failed.status().message(), HasSubstr("exited with status 1"));
  for (const v1::Sample& s : kept_) EXPECT_NE(s.metric(), "workload.lg.samples_per_s");
}

TEST_F(WorkloadBenchmarkTest, WhatOneRunsOutputBecomesIsBounded) {
  // A fixed name, then a unit change: each fails the run, naming its line.
  WorkloadBenchmark fixed({ShellWorkload(
      "w", "echo '" + MetricLine("wall_s", "1", "s", "lower") + "'")});
  absl::StatusOr<std::vector<v1::Sample>> samples = Run(fixed, {{"name", "w"}});
  EXPECT_THAT(samples.status().message(), HasSubstr("stdout line 1"));
  EXPECT_THAT(samples.status().message(), HasSubstr("the plugin's own"));

  WorkloadBenchmark units({ShellWorkload(
      "w", "echo '" + MetricLine("step", "1", "s", "lower") + "'; echo '" +
               MetricLine("step", "1000", "ms", "lower") + "'")});
  samples = Run(units, {{"name", "w"}});
  EXPECT_THAT(samples.status().message(), HasSubstr("stdout line 2"));
  EXPECT_THAT(samples.status().message(), HasSubstr("came in s before, now in ms"));
  int steps = 0;
  for (const v1::Sample& s : kept_) steps += s.metric() == "workload.w.step";
  EXPECT_EQ(steps, 1) << "the first line's sample is kept";

  // More names than the bound, and more lines: the rest are dropped.
  WorkloadBenchmark names({ShellWorkload(
      "w", "i=0; while [ $i -lt 40 ]; do printf 'FLEETBENCH_METRIC {\"name\": \"m%d\", "
           "\"value\": 1, \"unit\": \"x\", \"direction\": \"higher\"}\\n' $i; i=$((i+1)); done")});
  samples = Run(names, {{"name", "w"}});
  EXPECT_THAT(samples.status().message(), HasSubstr("more than 32 metric names"));
  std::set<std::string> own;
  for (const v1::Sample& s : kept_) {
    if (s.metric().starts_with("workload.w.m")) own.insert(s.metric());
  }
  EXPECT_EQ(own.size(), kMaxWorkloadMetricNames);

  WorkloadBenchmark lines({ShellWorkload(
      "w", "i=0; while [ $i -lt 1200 ]; do echo '" + MetricLine("x", "1", "x", "higher") +
               "'; i=$((i+1)); done")});
  samples = Run(lines, {{"name", "w"}});
  EXPECT_THAT(samples.status().message(), HasSubstr("more than 1000 metric lines"));
  size_t lines_kept = 0;
  for (const v1::Sample& s : kept_) lines_kept += s.metric() == "workload.w.x";
  EXPECT_EQ(lines_kept, kMaxWorkloadSamples);
}

TEST_F(WorkloadBenchmarkTest, ItsOutputIsKeptAsTheLogWithoutMetricLinesOrSecrets) {
  Workload w = ShellWorkload(
      "w", "echo 'epoch 1 loss=0.5'; echo '" + MetricLine("x", "1", "x/s", "higher") +
               "'; echo \"token is $HF_TOKEN\"; echo 'oops' >&2");
  (*w.manifest.mutable_env())["HF_TOKEN"] = "hf_abcdef123456";
  WorkloadBenchmark plugin({w});
  ASSERT_TRUE(Run(plugin, {{"name", "w"}}).ok());
  EXPECT_THAT(log_, HasSubstr("epoch 1 loss=0.5"));
  EXPECT_THAT(log_, HasSubstr("oops"));
  EXPECT_THAT(log_, HasSubstr("token is (secret)"));
  EXPECT_THAT(log_, Not(HasSubstr("hf_abcdef123456")));
  EXPECT_THAT(log_, Not(HasSubstr("FLEETBENCH_METRIC")));
}

TEST_F(WorkloadBenchmarkTest, WhatTheDiskUnderItsDataDidMeanwhileIsMeasured) {
  // 16 MiB read past the page cache from a file in its cwd.
  Workload w = ShellWorkload(
      "reader", "dd if=/dev/zero of=data bs=1M count=16 conv=fsync 2>/dev/null && "
                "dd if=data of=/dev/null bs=1M iflag=direct 2>/dev/null");
  w.manifest.set_cwd(scratch_.string());
  WorkloadBenchmark plugin({w});
  absl::StatusOr<std::vector<v1::Sample>> samples = Run(plugin, {{"name", "reader"}});
  ASSERT_TRUE(samples.ok()) << samples.status();
  double read_MBps = -1, busy = -1;
  for (const v1::Sample& s : *samples) {
    if (s.metric() == "workload.reader.disk_read_MBps") {
      read_MBps = s.value();
      EXPECT_FALSE(s.params().at("device").empty());
      EXPECT_EQ(s.unit(), "MBps") << "the name's last part, as every metric's";
    }
    if (s.metric() == "workload.reader.disk_busy_pct") busy = s.value();
  }
  if (read_MBps < 0) GTEST_SKIP() << scratch_ << " has no block device under it";
  const double wall = [&] {
    for (const v1::Sample& s : *samples) {
      if (s.metric() == "workload.reader.wall_s") return s.value();
    }
    return 0.0;
  }();
  EXPECT_GE(read_MBps * (wall + 0.5), 16 * 1.048576) << "16 MiB in about the run's wall time";
  EXPECT_GT(busy, 0);
  EXPECT_LE(busy, 100);
}

TEST_F(WorkloadBenchmarkTest, ALongValueStaysOffTheSamples) {
  Workload w = ShellWorkload("w", "echo '" + MetricLine("x", "1", "x/s", "higher") + "'");
  v1::WorkloadParam files;
  files.set_default_(std::string(200, 'a'));
  files.set_pattern("[a-z]{1,300}");
  (*w.manifest.mutable_params())["files"] = files;
  WorkloadBenchmark plugin({w});
  absl::StatusOr<std::vector<v1::Sample>> samples = Run(plugin, {{"name", "w"}});
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_FALSE(samples->empty());
  for (const v1::Sample& s : *samples) {
    EXPECT_FALSE(s.params().contains("files")) << s.metric();
    EXPECT_EQ(s.params().at("rate"), "100");
  }
}

}  // namespace
}  // namespace fleetbench::agent
