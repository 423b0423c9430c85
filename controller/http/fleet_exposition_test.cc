#include "controller/http/fleet_exposition.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(FleetExpositionTest, ConvertsDeclaredUnitsToBaseUnits) {
  EXPECT_EQ(BaseUnitOf("tflops").suffix, "flop_per_second");
  EXPECT_DOUBLE_EQ(BaseUnitOf("tflops").factor, 1e12);
  EXPECT_EQ(BaseUnitOf("GBps").suffix, "bytes_per_second");
  EXPECT_DOUBLE_EQ(BaseUnitOf("GBps").factor, 1e9);
  EXPECT_DOUBLE_EQ(BaseUnitOf("MBps").factor, 1e6);
  // Bits become bytes: 1 Gbps is 125 MB/s.
  EXPECT_EQ(BaseUnitOf("Gbps").suffix, "bytes_per_second");
  EXPECT_DOUBLE_EQ(BaseUnitOf("Gbps").factor, 1.25e8);
  EXPECT_EQ(BaseUnitOf("us").suffix, "seconds");
  EXPECT_DOUBLE_EQ(BaseUnitOf("us").factor, 1e-6);
  EXPECT_DOUBLE_EQ(BaseUnitOf("ms").factor, 1e-3);
  EXPECT_EQ(BaseUnitOf("iops").suffix, "ops_per_second");
  // A percentage is shown as a ratio.
  EXPECT_EQ(BaseUnitOf("pct").suffix, "ratio");
  EXPECT_DOUBLE_EQ(BaseUnitOf("pct").factor, 0.01);
  // Unknown: kept as declared.
  EXPECT_EQ(BaseUnitOf("widgets").suffix, "widgets");
  EXPECT_DOUBLE_EQ(BaseUnitOf("widgets").factor, 1);
}

TEST(FleetExpositionTest, NamesFamiliesFromTheMetricWithoutItsUnit) {
  EXPECT_EQ(FamilyNameOf("gemm.cpu.fp32.tflops", "tflops"),
            "fleetbench_gemm_cpu_fp32_flop_per_second");
  EXPECT_EQ(FamilyNameOf("disk.rand_read_4k.p99_us", "us"),
            "fleetbench_disk_rand_read_4k_p99_seconds");
  EXPECT_EQ(FamilyNameOf("gpu.mem.GBps", "GBps"), "fleetbench_gpu_mem_bytes_per_second");
  EXPECT_EQ(FamilyNameOf("net.tcp.Gbps", "Gbps"), "fleetbench_net_tcp_bytes_per_second");
  EXPECT_EQ(FamilyNameOf("disk.seq_read.MBps", "MBps"),
            "fleetbench_disk_seq_read_bytes_per_second");
  // A name that does not end with its unit keeps all of itself.
  EXPECT_EQ(FamilyNameOf("odd.Metric", "us"), "fleetbench_odd_metric_seconds");
}

FleetSnapshot OneNodeSnapshot() {
  FleetSnapshot s;
  v1::Node* node = s.nodes.add_nodes();
  node->set_name("n1");
  node->set_status(v1::NODE_STATUS_ONLINE);
  (*node->mutable_labels())["provider"] = "lambda";
  (*node->mutable_labels())["region"] = "us-east-1";
  (*node->mutable_labels())["instance_type"] = "gpu_1x_h100";
  (*node->mutable_labels())["owner"] = "not exported";
  node->mutable_facts()->add_gpus()->set_name("NVIDIA H100 80GB HBM3");
  v1::MetricDescriptor* d = &s.latest.metrics.emplace_back();
  d->set_name("gemm.cpu.fp32.tflops");
  d->set_unit("tflops");
  d->set_description("CPU GEMM");
  v1::Sample& sample = s.latest.samples.emplace_back();
  sample.set_node("n1");
  sample.set_metric("gemm.cpu.fp32.tflops");
  sample.set_unit("tflops");
  sample.set_value(1.5);
  (*sample.mutable_params())["dtype"] = "fp32";
  (*sample.mutable_params())["size"] = "384";
  (*sample.mutable_params())["spread"] = "0.01";   // free-form: left out
  (*sample.mutable_params())["gpu"] = "0";         // the index, as gpu_index
  return s;
}

TEST(FleetExpositionTest, LatestValuesInBaseUnitsWithNodeAndSeriesLabels) {
  prometheus::Exposition e;
  AddFleetFamilies(OneNodeSnapshot(), &e);
  const std::string text = e.Render();
  EXPECT_THAT(text, HasSubstr("# TYPE fleetbench_gemm_cpu_fp32_flop_per_second gauge\n"));
  EXPECT_THAT(text, HasSubstr(
      "fleetbench_gemm_cpu_fp32_flop_per_second{dtype=\"fp32\",gpu=\"NVIDIA H100 80GB HBM3\","
      "gpu_index=\"0\",instance_type=\"gpu_1x_h100\",metric=\"gemm.cpu.fp32.tflops\","
      "node=\"n1\",provider=\"lambda\",region=\"us-east-1\",size=\"384\"} 1.5e+12\n"));
  EXPECT_THAT(text, Not(HasSubstr("spread")));
  EXPECT_THAT(text, Not(HasSubstr("owner")));
  EXPECT_THAT(text, HasSubstr("fleetbench_node_online{gpu=\"NVIDIA H100 80GB HBM3\","));
}

TEST(FleetExpositionTest, RanksAreRowPositions) {
  FleetSnapshot s = OneNodeSnapshot();
  v1::RankResponse& rank = s.ranks["gemm.cpu.fp32.tflops"];
  rank.add_rows()->set_group("n2");
  rank.add_rows()->set_group("n1");
  prometheus::Exposition e;
  AddFleetFamilies(s, &e);
  const std::string text = e.Render();
  EXPECT_THAT(text, HasSubstr("fleetbench_node_rank{metric=\"gemm.cpu.fp32.tflops\","
                              "node=\"n2\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("metric=\"gemm.cpu.fp32.tflops\",node=\"n1\",provider=\"lambda\","
                              "region=\"us-east-1\"} 2\n"));
}

TEST(FleetExpositionTest, HealthCountsFindingsByNodeCodeAndSeverity) {
  FleetSnapshot s = OneNodeSnapshot();
  for (int i = 0; i < 2; ++i) {
    v1::Finding& f = s.findings.emplace_back();
    f.set_code("node.regression");
    f.set_severity(v1::SEVERITY_WARNING);
    f.mutable_subject()->set_node("n1");
  }
  v1::Finding& critical = s.findings.emplace_back();
  critical.set_code("gpu.xid_errors");
  critical.set_severity(v1::SEVERITY_CRITICAL);
  critical.mutable_subject()->set_node("n1");
  s.runs_by_state = {{"succeeded", 3}, {"running", 1}};
  s.stats.samples_stored = 42;
  s.stats.store_failures = 2;
  s.stats.ingest_commit_latency.Observe(absl::Milliseconds(3));
  s.store_bytes = 8192;
  s.schedule_firings.push_back({{{"schedule", "nightly"}, {"outcome", "started"}}, 4});
  prometheus::Exposition e;
  AddHealthFamilies(s, &e);
  const std::string text = e.Render();
  EXPECT_THAT(text, HasSubstr("fleetbench_agents_connected 1\n"));
  EXPECT_THAT(text, HasSubstr(
      "fleetbench_findings_open{code=\"node.regression\",node=\"n1\",severity=\"warning\"} 2\n"));
  EXPECT_THAT(text, HasSubstr(
      "fleetbench_findings_open{code=\"gpu.xid_errors\",node=\"n1\",severity=\"critical\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("fleetbench_runs{state=\"succeeded\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("fleetbench_runs{state=\"queued\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE fleetbench_samples_ingested_total counter\n"
                              "fleetbench_samples_ingested_total 42\n"));
  EXPECT_THAT(text, HasSubstr("fleetbench_store_failures_total 2\n"));
  EXPECT_THAT(text, HasSubstr("fleetbench_store_size_bytes 8192\n"));
  EXPECT_THAT(text, HasSubstr("fleetbench_ingest_batch_duration_seconds_bucket{le=\"0.0025\"} 0\n"
                              "fleetbench_ingest_batch_duration_seconds_bucket{le=\"0.005\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("fleetbench_ingest_batch_duration_seconds_count 1\n"));
  EXPECT_THAT(text, HasSubstr(
      "fleetbench_schedule_firings_total{outcome=\"started\",schedule=\"nightly\"} 4\n"));
}

TEST(FleetExpositionTest, NodesTimeOnlineAndInterruptionsByKind) {
  FleetSnapshot s = OneNodeSnapshot();
  v1::ReliabilityGroup* g = s.reliability.add_groups();
  g->set_group("n1");
  g->set_node_hours(2);
  v1::InterruptionCount* c = g->add_by_kind();
  c->set_kind(v1::INTERRUPTION_KIND_PREEMPTED);
  c->set_count(3);
  prometheus::Exposition out;
  AddHealthFamilies(s, &out);
  const std::string text = out.Render();
  EXPECT_THAT(text, HasSubstr("fleetbench_node_online_seconds{node=\"n1\"} 7200"));
  EXPECT_THAT(text, HasSubstr("fleetbench_node_interruptions{kind=\"preempted\",node=\"n1\"} 3"));
}

}  // namespace
}  // namespace fleetbench::controller
