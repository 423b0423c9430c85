// Declared metrics: hellos store what the agents' plugins declare (only what
// changed), and Rank takes unit and direction from the stored declaration,
// refusing a metric no agent declared.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/core/fleet_core_fixture.h"
#include "gmock/gmock.h"

namespace fleetbench::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class FleetCoreMetricsTest : public FleetCoreTest {
 protected:
  // Samples of `metric` for a run, one value per node, stored as a report
  // commit would store them.
  void StoreSamples(const std::string& run_id, const std::string& metric,
                    const std::string& unit,
                    const std::vector<std::pair<std::string, double>>& values) {
    storage::Store::ReportWrite write;
    for (const auto& [node, value] : values) {
      v1::Sample& s = write.samples.emplace_back();
      s.set_id(NewUlid());
      s.set_run_id(run_id);
      s.set_node(node);
      s.set_benchmark(metric.substr(0, metric.find('.')));
      s.set_metric(metric);
      s.set_unit(unit);
      s.set_value(value);
      s.set_time_unix_ms(absl::ToUnixMillis(clock_.Now()));
    }
    auto stored = store_->CommitReports({write});
    ASSERT_TRUE(stored.ok()) << stored.status();
  }
  absl::StatusOr<v1::RankResponse> Rank(const std::string& metric) {
    v1::RankRequest request;
    request.set_metric(metric);
    request.set_by(v1::RANK_GROUPING_NODE);
    return core_->Rank(request);
  }
  std::string StoredDescription(const std::string& metric) {
    auto d = store_->GetMetricDescriptor(metric);
    return d.ok() ? d->description() : std::string(d.status().message());
  }
  // Changes the stored declaration behind the core's back: a later hello
  // that the core writes puts it back, one it skips leaves it.
  void TamperWithStoredDescription(const std::string& metric) {
    auto d = store_->GetMetricDescriptor(metric);
    ASSERT_TRUE(d.ok()) << d.status();
    d->set_description("tampered");
    ASSERT_TRUE(store_->UpsertMetricDescriptors({*d}).ok());
  }
};

TEST_F(FleetCoreMetricsTest, AHelloStoresTheMetricsItsPluginsDeclare) {
  Connect("a", /*net=*/true);
  auto declared = store_->ListMetricDescriptors();
  ASSERT_TRUE(declared.ok()) << declared.status();
  ASSERT_EQ(declared->size(), 4u);
  auto rtt = store_->GetMetricDescriptor("net.tcp.rtt_p50_us");
  ASSERT_TRUE(rtt.ok()) << rtt.status();
  EXPECT_EQ(rtt->unit(), "us");
  EXPECT_EQ(rtt->direction(), v1::METRIC_DIRECTION_LOWER_IS_BETTER);
  EXPECT_EQ(rtt->description(), "declared by the test");
  EXPECT_EQ(rtt->benchmark(), "net");
}

TEST_F(FleetCoreMetricsTest, ADescriptorWithoutABenchmarkTakesItsCapabilitys) {
  v1::Hello hello = MakeHello("a");
  hello.mutable_capabilities(0)->mutable_metrics(0)->clear_benchmark();
  ConnectWith(hello);
  EXPECT_EQ(store_->GetMetricDescriptor("gemm.cpu.fp32.tflops")->benchmark(),
            "gemm");
}

TEST_F(FleetCoreMetricsTest, ReconnectingNodesWriteNothingTheyDeclaredBefore) {
  Connect("a");
  TamperWithStoredDescription("gemm.cpu.fp32.tflops");
  // The same declarations again, from the same node and from others.
  Connect("a");
  Connect("b");
  EXPECT_EQ(StoredDescription("gemm.cpu.fp32.tflops"), "tampered");
  // A changed declaration (a newer agent) is written.
  v1::Hello newer = MakeHello("c");
  newer.mutable_capabilities(0)->mutable_metrics(0)->set_description(
      "newer words");
  ConnectWith(newer);
  EXPECT_EQ(StoredDescription("gemm.cpu.fp32.tflops"), "newer words");
  EXPECT_EQ(StoredDescription("gemm.cpu.fp64.tflops"), "declared by the test");
}

TEST_F(FleetCoreMetricsTest, ARestartedCoreKnowsWhatIsStored) {
  Connect("a");
  core_ = std::make_unique<FleetCore>(store_.get(), &clock_, FleetOptions());
  ASSERT_TRUE(core_->Start().ok());
  TamperWithStoredDescription("gemm.cpu.fp32.tflops");
  // The new core loaded the declarations at Start: the same hello writes
  // nothing.
  Connect("a");
  EXPECT_EQ(StoredDescription("gemm.cpu.fp32.tflops"), "tampered");
}

// A workload's report declares its metrics as it runs: only names under the
// prefix its node's capability gave that benchmark, and only names the
// report measures. Another plugin's metric keeps its declaration.
TEST_F(FleetCoreMetricsTest, AReportDeclaresOnlyWhatItMeasuresUnderItsBenchmarksPrefix) {
  v1::Hello hello = MakeHello("a");
  v1::Capability* workload = hello.add_capabilities();
  workload->set_benchmark("workload");
  workload->set_status(v1::CAPABILITY_STATUS_AVAILABLE);
  workload->set_dynamic_metric_prefix("workload.");
  v1::WorkloadDeclaration* train = workload->add_workloads();
  train->set_name("train");
  train->set_work_unit("samples");
  auto link = ConnectWith(hello);
  Start("workload", {}, 0, {{"name", "train"}});
  ASSERT_EQ(link->RunTasks().size(), 1u);
  const v1::RunTask task = link->RunTasks()[0];

  v1::AgentMessage m;
  v1::Report* r = m.mutable_report();
  r->set_report_id(NewUlid());
  r->set_task_id(task.task_id());
  // Samples of each name but workload.other.step_s: the prefix rule, not
  // the measured one, must be what refuses the gemm names.
  auto measure = [&](const std::string& benchmark, const std::string& metric) {
    v1::Sample* s = r->add_samples();
    s->set_id(NewUlid());
    s->set_run_id(task.run_id());
    s->set_benchmark(benchmark);
    s->set_metric(metric);
    s->set_unit("s");
    s->set_value(0.5);
    s->set_time_unix_ms(absl::ToUnixMillis(clock_.Now()));
  };
  measure("workload", "workload.train.step_s");
  measure("workload", "gemm.cpu.fp32.tflops");
  measure("gemm", "gemm.cpu.fp64.tflops");
  auto declare = [r](const std::string& benchmark, const std::string& name,
                     const std::string& unit) {
    v1::MetricDescriptor* d = r->add_metrics();
    d->set_benchmark(benchmark);
    d->set_name(name);
    d->set_unit(unit);
    d->set_direction(v1::METRIC_DIRECTION_LOWER_IS_BETTER);
  };
  declare("workload", "workload.train.step_s", "s");
  declare("workload", "workload.other.step_s", "h");  // not measured here
  declare("workload", "gemm.cpu.fp32.tflops", "s");   // another plugin's
  declare("gemm", "gemm.cpu.fp64.tflops", "s");       // a prefix gemm lacks
  r->set_task_finished(true);
  r->set_task_state(v1::TASK_STATE_SUCCEEDED);
  Send(link, m);
  ASSERT_EQ(link->Acks(), 1);

  auto step = store_->GetMetricDescriptor("workload.train.step_s");
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->unit(), "s");
  EXPECT_EQ(step->benchmark(), "workload");
  EXPECT_FALSE(store_->GetMetricDescriptor("workload.other.step_s").ok());
  EXPECT_EQ(store_->GetMetricDescriptor("gemm.cpu.fp32.tflops")->unit(), "tflops");
  EXPECT_EQ(store_->GetMetricDescriptor("gemm.cpu.fp64.tflops")->unit(), "tflops");
}

TEST_F(FleetCoreMetricsTest, RankTakesUnitAndDirectionFromTheDeclaration) {
  Connect("a", /*net=*/true);
  Connect("b", /*net=*/true);
  const std::string run = Start("gemm");
  // Same price: the lower latency ranks first, the higher throughput first.
  StoreSamples(run, "net.tcp.rtt_p50_us", "us", {{"a", 20}, {"b", 10}});
  StoreSamples(run, "net.tcp.Gbps", "Gbps", {{"a", 20}, {"b", 10}});

  auto latency = Rank("net.tcp.rtt_p50_us");
  ASSERT_TRUE(latency.ok()) << latency.status();
  EXPECT_EQ(latency->unit(), "us");
  EXPECT_FALSE(latency->higher_is_better());
  ASSERT_EQ(latency->rows_size(), 2);
  EXPECT_EQ(latency->rows(0).group(), "b");

  auto throughput = Rank("net.tcp.Gbps");
  ASSERT_TRUE(throughput.ok()) << throughput.status();
  EXPECT_EQ(throughput->unit(), "Gbps");
  EXPECT_TRUE(throughput->higher_is_better());
  ASSERT_EQ(throughput->rows_size(), 2);
  EXPECT_EQ(throughput->rows(0).group(), "a");
}

TEST_F(FleetCoreMetricsTest,
       RankingAnUndeclaredMetricIsNotFoundNamingTheKnownOnes) {
  Connect("a", /*net=*/true);
  const std::string run = Start("gemm");
  // Samples alone do not make a metric rankable: its direction is unknown.
  StoreSamples(run, "gemm.cpu.bf16.tflops", "tflops", {{"a", 1}});
  auto rank = Rank("gemm.cpu.bf16.tflops");
  ASSERT_EQ(rank.status().code(), absl::StatusCode::kNotFound) << rank.status();
  // Metrics of the same plugin prefix first: most likely what was meant.
  EXPECT_THAT(
      rank.status().message(),
      HasSubstr(
          "metric gemm.cpu.bf16.tflops is not declared by any agent's plugins; "
          "known: gemm.cpu.fp32.tflops, gemm.cpu.fp64.tflops, net.tcp.Gbps, "
          "net.tcp.rtt_p50_us"));
  EXPECT_THAT(rank.status().message(), Not(HasSubstr("more)")));
}

TEST_F(FleetCoreMetricsTest, TheListOfKnownMetricsIsCapped) {
  v1::Hello hello = MakeHello("a");
  for (int i = 0; i < 30; ++i) {
    Declare(hello.mutable_capabilities(0),
            absl::StrCat("gemm.extra", 10 + i, ".count"), "count",
            v1::METRIC_DIRECTION_LOWER_IS_BETTER);
  }
  ConnectWith(hello);
  auto rank = Rank("no.such.metric");
  ASSERT_EQ(rank.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(rank.status().message(), HasSubstr(", ... (12 more)"));
}

TEST_F(FleetCoreMetricsTest, RankingBeforeAnyAgentDeclaredAnythingSaysSo) {
  auto rank = Rank("gemm.cpu.fp32.tflops");
  ASSERT_EQ(rank.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(rank.status().message(),
              HasSubstr("no agent has declared any metric yet"));
}

}  // namespace
}  // namespace fleetbench::controller
