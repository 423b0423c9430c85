#include "diagnosis/fleet_rules.h"

#include <deque>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/civil_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::diagnosis {
namespace {

using ::testing::HasSubstr;

constexpr char kGemm[] = "gemm.cpu.fp32.tflops";
constexpr char kLatency[] = "disk.rand_read_4k.p99_us";
constexpr char kGpuGemm[] = "gemm.gpu.bf16.tflops";

int64_t Hour(int day, int hour) {
  return absl::ToUnixMillis(
      absl::FromCivil(absl::CivilHour(2026, 11, day, hour), absl::UTCTimeZone()));
}

FleetNode CpuNode(const std::string& name, const std::string& model = "Xeon 8480") {
  FleetNode n;
  n.name = name;
  n.facts.mutable_cpu()->set_model(model);
  n.facts.mutable_cpu()->set_logical_cores(16);
  n.facts.set_kernel("6.8.0");
  return n;
}

FleetNode GpuNode(const std::string& name, const std::string& gpu) {
  FleetNode n = CpuNode(name);
  v1::GpuFacts* g = n.facts.add_gpus();
  g->set_name(gpu);
  g->set_driver_version("550.54.15");
  g->set_power_enforced_limit_w(700);
  return n;
}

v1::MetricDescriptor Metric(const std::string& name, const std::string& unit, bool higher) {
  v1::MetricDescriptor d;
  d.set_name(name);
  d.set_unit(unit);
  d.set_direction(higher ? v1::METRIC_DIRECTION_HIGHER_IS_BETTER
                         : v1::METRIC_DIRECTION_LOWER_IS_BETTER);
  return d;
}

class FleetRulesTest : public ::testing::Test {
 protected:
  FleetRulesTest() {
    e_.metrics[kGemm] = Metric(kGemm, "tflops", true);
    e_.metrics[kLatency] = Metric(kLatency, "us", false);
    e_.metrics[kGpuGemm] = Metric(kGpuGemm, "tflops", true);
  }
  // `count` runs of `metric` on `node`, one an hour from day 1 00:00, with
  // values from `value(i)`.
  template <typename Fn>
  void Runs(const std::string& node, const std::string& metric, int count, Fn&& value,
            int first_day = 1) {
    auto& runs = e_.series[metric][node];
    for (int i = 0; i < count; ++i) {
      runs.push_back({Id(absl::StrCat("run", i)), static_cast<double>(value(i)),
                      Hour(first_day, 0) + i * 3600000LL});
    }
  }
  // A small, steady jitter: +-1%.
  static double Jitter(int i) { return 0.01 * ((i * 7) % 3 - 1); }

  std::vector<std::string> Codes(const std::string& node, const std::string& run_id = "") {
    std::vector<std::string> codes;
    for (const v1::Finding& f : DiagnoseFleetNode(e_, node, run_id)) codes.push_back(f.code());
    return codes;
  }

  // A run id that lives as long as the test (RunValue holds a view).
  absl::string_view Id(std::string id) { return ids_.emplace_back(std::move(id)); }

  std::deque<std::string> ids_;
  FleetEvidence e_;
};

TEST(PeerGroupTest, InstanceTypeThenGpusThenCpu) {
  FleetNode cpu = CpuNode("a");
  EXPECT_EQ(PeerGroupOf(cpu), "cpu=Xeon 8480 x 16 threads");
  FleetNode gpu = GpuNode("b", "NVIDIA H100 80GB HBM3");
  gpu.facts.add_gpus()->set_name("NVIDIA H100 80GB HBM3");
  EXPECT_EQ(PeerGroupOf(gpu), "gpu=2x NVIDIA H100 80GB HBM3");
  gpu.labels["instance_type"] = "p5.48xlarge";
  EXPECT_EQ(PeerGroupOf(gpu), "instance_type=p5.48xlarge");
  EXPECT_EQ(PeerGroupOf(FleetNode{}), "");
}

TEST_F(FleetRulesTest, HealthyGroupGivesNothing) {
  for (const char* n : {"a", "b", "c", "d"}) {
    e_.nodes.push_back(CpuNode(n));
    Runs(n, kGemm, 12, [&](int i) { return 1.0 + Jitter(i + n[0]); });
    Runs(n, kLatency, 12, [&](int i) { return 100 * (1.0 + Jitter(i + n[0])); });
  }
  for (const char* n : {"a", "b", "c", "d"}) {
    EXPECT_THAT(Codes(n), ::testing::IsEmpty()) << n;
  }
}

TEST_F(FleetRulesTest, SlowNodeIsAnOutlierNamingItsPeers) {
  for (const char* n : {"a", "b", "c"}) e_.nodes.push_back(CpuNode(n));
  Runs("a", kGemm, 3, [](int i) { return 1.0 + Jitter(i); });
  Runs("b", kGemm, 3, [](int i) { return 1.02 + Jitter(i); });
  Runs("c", kGemm, 3, [](int i) { return 0.40 + Jitter(i) / 3; });  // a CPU quota
  std::vector<v1::Finding> f = DiagnoseFleetNode(e_, "c");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].code(), "fleet.outlier");
  EXPECT_EQ(f[0].severity(), v1::SEVERITY_CRITICAL);  // 60% below
  EXPECT_EQ(f[0].subject().node(), "c");
  EXPECT_EQ(f[0].run_id(), "run2");
  ASSERT_EQ(f[0].evidence_size(), 1);
  EXPECT_EQ(f[0].evidence(0).name(), kGemm);
  EXPECT_NEAR(f[0].evidence(0).measured(), 0.40 + Jitter(2) / 3, 1e-9);
  EXPECT_NEAR(f[0].evidence(0).expected(), 1.01, 0.011);
  EXPECT_THAT(f[0].evidence(0).expectation_source(),
              HasSubstr("fleet peers: 2 nodes with cpu=Xeon 8480 x 16 threads"));
  EXPECT_THAT(absl::StrJoin(f[0].context(), "\n"), HasSubstr("peers (2, cpu=Xeon 8480 x 16 threads): a "));
  EXPECT_THAT(absl::StrJoin(f[0].context(), "\n"), HasSubstr(", b "));
  EXPECT_THAT(f[0].summary(), HasSubstr("below its 2 peers"));
  EXPECT_THAT(Codes("a"), ::testing::IsEmpty());
  EXPECT_THAT(Codes("b"), ::testing::IsEmpty());
}

TEST_F(FleetRulesTest, AShortfallInOneRunIsInfoInTwoAWarningAndNoiseIsNothing) {
  for (const char* n : {"a", "b", "c"}) e_.nodes.push_back(CpuNode(n));
  Runs("a", kGemm, 4, [](int i) { return 1.0 + Jitter(i); });
  Runs("b", kGemm, 4, [](int i) { return 1.0 + Jitter(i + 1); });
  Runs("c", kGemm, 4, [](int i) { return i == 3 ? 0.8 : 0.95; });
  // 20% below in the latest run only: a hint to re-run.
  std::vector<v1::Finding> f = DiagnoseFleetNode(e_, "c");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity(), v1::SEVERITY_INFO);
  EXPECT_THAT(absl::StrJoin(f[0].context(), "\n"), HasSubstr("re-run to confirm"));
  // 5% below the peers is within the relative threshold: nothing.
  EXPECT_THAT(Codes("c", "run2"), ::testing::IsEmpty());
  // Low in the run before as well: a warning.
  e_.series[kGemm]["c"][2].value = 0.8;
  f = DiagnoseFleetNode(e_, "c");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity(), v1::SEVERITY_WARNING);
  EXPECT_THAT(absl::StrJoin(f[0].context(), "\n"),
              HasSubstr("the node's run before was an outlier as well"));
}

TEST_F(FleetRulesTest, NoisyPeersRaiseTheBar) {
  // Peers vary by +-30% from run to run: 20% below their median is noise.
  for (const char* n : {"a", "b", "c"}) e_.nodes.push_back(CpuNode(n));
  Runs("a", kGemm, 6, [](int i) { return 1.0 + 0.3 * ((i % 3) - 1); });
  Runs("b", kGemm, 6, [](int i) { return 1.0 + 0.3 * (((i + 1) % 3) - 1); });
  Runs("c", kGemm, 1, [](int) { return 0.8; });
  EXPECT_THAT(Codes("c"), ::testing::IsEmpty());
}

TEST_F(FleetRulesTest, LowerIsBetterIsReversed) {
  for (const char* n : {"a", "b", "c"}) e_.nodes.push_back(CpuNode(n));
  Runs("a", kLatency, 3, [](int i) { return 100 + i; });
  Runs("b", kLatency, 3, [](int i) { return 102 - i; });
  // Lower latency than the peers is better, not an outlier.
  Runs("c", kLatency, 3, [](int) { return 50; });
  EXPECT_THAT(Codes("c"), ::testing::IsEmpty());
  e_.series[kLatency]["c"].back().value = 300;  // throttled disk: 3x the latency
  std::vector<v1::Finding> f = DiagnoseFleetNode(e_, "c");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].code(), "fleet.outlier");
  EXPECT_THAT(f[0].summary(), HasSubstr("above its 2 peers"));
}

TEST_F(FleetRulesTest, DifferentHardwareIsNotAPeer) {
  e_.nodes = {CpuNode("a"), CpuNode("b"), CpuNode("small", "Atom C3558")};
  Runs("a", kGemm, 3, [](int) { return 1.0; });
  Runs("b", kGemm, 3, [](int) { return 1.0; });
  Runs("small", kGemm, 3, [](int) { return 0.1; });
  EXPECT_THAT(Codes("small"), ::testing::IsEmpty());  // a group of one, no SKU row
}

TEST_F(FleetRulesTest, SmallGpuGroupFallsBackToTheSkuTable) {
  e_.nodes = {GpuNode("g1", "NVIDIA H100 80GB HBM3"), GpuNode("g2", "NVIDIA H100 80GB HBM3")};
  Runs("g1", kGpuGemm, 2, [](int) { return 650; });
  Runs("g2", kGpuGemm, 2, [](int) { return 300; });  // power capped, say
  EXPECT_THAT(Codes("g1"), ::testing::IsEmpty());
  std::vector<v1::Finding> f = DiagnoseFleetNode(e_, "g2");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].code(), "fleet.outlier");
  EXPECT_THAT(f[0].evidence(0).expectation_source(), HasSubstr("SKU table: H100 SXM"));
  EXPECT_NEAR(f[0].evidence(0).expected(), 989.5 * 0.6, 1e-9);
  EXPECT_THAT(absl::StrJoin(f[0].context(), "\n"),
              HasSubstr("only 2 node(s) in gpu=1x NVIDIA H100 80GB HBM3, fewer than 3; used the SKU table"));
}

TEST_F(FleetRulesTest, PeersWinOverTheSkuTableWhereThereAreEnough) {
  // A SKU wired slower by design: every peer is below the table, and none
  // is an outlier.
  for (const char* n : {"g1", "g2", "g3"}) {
    e_.nodes.push_back(GpuNode(n, "NVIDIA H100 80GB HBM3"));
    Runs(n, kGpuGemm, 3, [&](int i) { return 400 + i + n[1]; });
  }
  for (const char* n : {"g1", "g2", "g3"}) EXPECT_THAT(Codes(n), ::testing::IsEmpty()) << n;
}

TEST_F(FleetRulesTest, StepDownAfterADriverChangeIsARegressionWithTheChange) {
  e_.nodes = {GpuNode("g", "NVIDIA H200")};
  // 12 runs at ~700, then 3 at ~560 after the driver changed.
  Runs("g", kGpuGemm, 15, [](int i) { return (i < 12 ? 700.0 : 560.0) * (1 + Jitter(i)); });
  FactsVersion v1_;
  v1_.seen_unix_ms = Hour(1, 0) - 1000;
  v1_.facts = e_.nodes[0].facts;
  FactsVersion v2 = v1_;
  v2.seen_unix_ms = Hour(1, 11) + 1800000;  // between run 11 and run 12
  v2.facts.mutable_gpus(0)->set_driver_version("560.28.03");
  e_.facts_history["g"] = {v1_, v2};
  std::vector<v1::Finding> f = DiagnoseFleetNode(e_, "g");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].code(), "node.regression");
  EXPECT_EQ(f[0].severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(f[0].run_id(), "run14");
  EXPECT_NEAR(f[0].evidence(0).expected(), 700, 8);
  EXPECT_THAT(f[0].evidence(0).expectation_source(), HasSubstr("median of the last 10 runs"));
  const std::string context = absl::StrJoin(f[0].context(), "\n");
  EXPECT_THAT(context, HasSubstr("low since 2026-11-01 12:00 UTC (3 run(s))"));
  EXPECT_THAT(context,
              HasSubstr("facts changed: 2026-11-01 11:30 UTC GPU 0 driver 550.54.15 -> 560.28.03"));
  EXPECT_THAT(f[0].suggestion(), HasSubstr("first suspect"));
  // The runs before the step are judged healthy.
  EXPECT_THAT(Codes("g", "run11"), ::testing::IsEmpty());
}

TEST_F(FleetRulesTest, AFactChangeLongBeforeTheStepIsNotListed) {
  e_.nodes = {CpuNode("n")};
  Runs("n", kGemm, 14, [](int i) { return i < 12 ? 1.0 + Jitter(i) : 0.7; });
  FactsVersion a;
  a.seen_unix_ms = Hour(1, 0) - 1000;
  a.facts = e_.nodes[0].facts;
  FactsVersion b = a;
  b.seen_unix_ms = Hour(1, 2);  // ten runs before the step
  b.facts.set_kernel("6.9.1");
  e_.facts_history["n"] = {a, b};
  std::vector<v1::Finding> f = DiagnoseFleetNode(e_, "n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].code(), "node.regression");
  EXPECT_THAT(absl::StrJoin(f[0].context(), "\n"),
              HasSubstr("no change of facts stored between the last good run and this one"));
}

TEST_F(FleetRulesTest, OneSlowRunIsNotARegression) {
  e_.nodes = {CpuNode("n")};
  Runs("n", kGemm, 12, [](int i) { return i < 11 ? 1.0 + Jitter(i) : 0.7; });
  EXPECT_THAT(Codes("n"), ::testing::IsEmpty());
}

TEST_F(FleetRulesTest, AStepTheWholeGroupTookIsNotANodesRegression) {
  // The shared host got busy: every node drops 20% in the same runs.
  for (const char* n : {"a", "b", "c"}) {
    e_.nodes.push_back(CpuNode(n));
    Runs(n, kGemm, 14, [&](int i) { return (i < 11 ? 1.0 : 0.8) * (1 + Jitter(i + n[0])); });
  }
  for (const char* n : {"a", "b", "c"}) EXPECT_THAT(Codes(n), ::testing::IsEmpty()) << n;
  // One of them dropping further than the rest still is.
  for (int i = 11; i < 14; ++i) e_.series[kGemm]["c"][i].value = 0.5;
  std::vector<std::string> codes = Codes("c");
  EXPECT_THAT(codes, ::testing::Contains("node.regression"));
  std::vector<v1::Finding> f = DiagnoseFleetNode(e_, "c");
  for (const v1::Finding& x : f) {
    if (x.code() != "node.regression") continue;
    EXPECT_THAT(absl::StrJoin(x.context(), "\n"),
                HasSubstr("peers over the same runs: 2 moved by -20%"));
  }
}

TEST_F(FleetRulesTest, ShortHistoryIsNotJudged) {
  e_.nodes = {CpuNode("n")};
  Runs("n", kGemm, 4, [](int i) { return i < 3 ? 1.0 : 0.5; });
  EXPECT_THAT(Codes("n"), ::testing::IsEmpty());
}

TEST_F(FleetRulesTest, DaySlowNightFastIsATimeOfDayFindingWithTheHours) {
  FleetNode n = CpuNode("n");
  n.time_zone = absl::FixedTimeZone(-5 * 3600);  // the label said so; loaded by the caller
  e_.nodes = {n};
  // Slow from 08 to 20 in the node's zone (13-01 UTC), a run every 2 hours
  // for 5 days.
  auto& runs = e_.series[kGemm]["n"];
  for (int i = 0; i < 60; ++i) {
    const int64_t t = Hour(1, 5) + i * 2 * 3600000LL;  // 00:00 local on day 1
    const int local_hour = (i * 2) % 24;
    const bool by_day = local_hour >= 8 && local_hour < 20;
    runs.push_back({Id(absl::StrCat("run", i)), (by_day ? 0.6 : 1.0) * (1 + Jitter(i)), t});
  }
  std::vector<v1::Finding> f = DiagnoseFleetNode(e_, "n");
  std::vector<v1::Finding> tod;
  for (const v1::Finding& x : f) {
    if (x.code() == "node.time_of_day") tod.push_back(x);
  }
  ASSERT_EQ(tod.size(), 1u) << f.size();
  EXPECT_THAT(tod[0].summary(), HasSubstr("worse by day"));
  EXPECT_THAT(tod[0].summary(), HasSubstr("slow hours 08-18"));
  const std::string context = absl::StrJoin(tod[0].context(), "\n");
  EXPECT_THAT(context, HasSubstr("slow hours (UTC): 13-23"));
  EXPECT_NEAR(tod[0].evidence(0).measured(), 0.6, 0.01);
  EXPECT_NEAR(tod[0].evidence(0).expected(), 1.0, 0.011);
}

TEST_F(FleetRulesTest, MetricsWithoutADirectionAreNotJudged) {
  for (const char* n : {"a", "b", "c"}) e_.nodes.push_back(CpuNode(n));
  e_.metrics.erase(kGemm);
  Runs("a", kGemm, 3, [](int) { return 1.0; });
  Runs("b", kGemm, 3, [](int) { return 1.0; });
  Runs("c", kGemm, 3, [](int) { return 0.1; });
  EXPECT_THAT(Codes("c"), ::testing::IsEmpty());
}

TEST(FactChangesTest, ListsWhatChangedAndIgnoresReadings) {
  v1::NodeFacts a;
  a.set_kernel("6.8.0");
  v1::GpuFacts* g = a.add_gpus();
  g->set_driver_version("550.54");
  g->set_power_enforced_limit_w(450);
  g->mutable_readings()->set_sm_clock_mhz(1980);
  v1::PcieDeviceFacts* p = a.add_pcie_devices();
  p->set_address("0000:3b:00.0");
  p->set_current_link_width(16);
  v1::BlockDeviceFacts* d = a.add_block_devices();
  d->set_name("nvme0n1");
  d->set_model("Samsung PM9A3");
  v1::NodeFacts b = a;
  EXPECT_THAT(FactChanges(a, b), ::testing::IsEmpty());
  b.mutable_gpus(0)->mutable_readings()->set_sm_clock_mhz(210);  // idle: a reading
  EXPECT_THAT(FactChanges(a, b), ::testing::IsEmpty());
  b.set_kernel("6.9.1");
  b.mutable_gpus(0)->set_driver_version("560.28");
  b.mutable_gpus(0)->set_power_enforced_limit_w(320);
  b.mutable_pcie_devices(0)->set_current_link_width(8);
  b.mutable_block_devices(0)->set_model("WDC WD40EFRX");
  EXPECT_THAT(FactChanges(a, b),
              ::testing::ElementsAre("kernel 6.8.0 -> 6.9.1", "GPU 0 driver 550.54 -> 560.28",
                                     "GPU 0 power limit 450 W -> 320 W",
                                     "PCIe 0000:3b:00.0 width x16 -> x8",
                                     "disk nvme0n1 model Samsung PM9A3 -> WDC WD40EFRX"));
}

TEST(FleetRuleTableTest, CodesAreUniqueAndDotted) {
  std::set<std::string> codes;
  for (const RuleInfo& r : FleetRuleTable()) {
    EXPECT_TRUE(codes.insert(std::string(r.code)).second) << r.code;
    EXPECT_NE(r.code.find('.'), absl::string_view::npos) << r.code;
    EXPECT_FALSE(r.source.empty());
    EXPECT_FALSE(r.threshold.empty());
  }
  EXPECT_EQ(codes, (std::set<std::string>{"fleet.outlier", "node.regression", "node.time_of_day"}));
}

}  // namespace
}  // namespace fleetbench::diagnosis
