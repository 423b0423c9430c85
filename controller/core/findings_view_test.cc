// ListFindings and Variance over a real SQLite store: runs go through the
// core as agents report them, facts changes arrive as hellos, and the fake
// clock places each run at its hour.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/civil_time.h"
#include "controller/core/fleet_core_fixture.h"
#include "gmock/gmock.h"

namespace fleetbench::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

class FleetCoreFindingsTest : public FleetCoreTest {
 protected:
  // The clock jumps hours between runs; the nodes stay online across them
  // (heartbeats are not what is under test).
  void SetUp() override {
    FleetCoreTest::SetUp();
    FleetOptions options = Options();
    options.heartbeat_timeout = absl::Hours(24 * 365);
    RestartCore(options);
  }
  // A gemm node with the facts findings group it by.
  std::shared_ptr<RecordingLink> Join(const std::string& name, const std::string& kernel = "6.8.0",
                                      std::map<std::string, std::string> labels = {}) {
    v1::Hello hello = MakeHello(name);
    hello.mutable_facts()->set_kernel(kernel);
    hello.mutable_facts()->mutable_cpu()->set_model("Xeon 8480");
    hello.mutable_facts()->mutable_cpu()->set_logical_cores(16);
    for (const auto& [k, v] : labels) (*hello.mutable_labels())[k] = v;
    auto link = ConnectWith(hello);
    links_by_node_[name] = link;
    return link;
  }
  // One gemm run on the given nodes, each reporting its value now.
  std::string RunWith(const std::map<std::string, double>& values) {
    std::vector<std::string> nodes;
    for (const auto& [n, v] : values) nodes.push_back(n);
    const std::string run_id = Start("gemm", nodes);
    for (const auto& [node, value] : values) {
      auto& link = links_by_node_[node];
      v1::RunTask task;
      for (const v1::RunTask& t : link->RunTasks()) {
        if (t.run_id() == run_id) task = t;
      }
      EXPECT_FALSE(task.task_id().empty()) << node << " got no task of " << run_id;
      v1::AgentMessage m;
      v1::Report* r = m.mutable_report();
      r->set_report_id(NewUlid());
      r->set_task_id(task.task_id());
      v1::Sample* s = AddGemmSample(r, value);
      s->set_run_id(run_id);
      s->set_time_unix_ms(absl::ToUnixMillis(clock_.Now()));
      r->set_task_finished(true);
      r->set_task_state(v1::TASK_STATE_SUCCEEDED);
      Send(link, m);
    }
    return run_id;
  }
  v1::ListFindingsResponse Findings(const std::string& node = "", const std::string& run_id = "",
                                    v1::Severity min = v1::SEVERITY_UNSPECIFIED) {
    v1::ListFindingsRequest request;
    request.set_node(node);
    request.set_run_id(run_id);
    request.set_min_severity(min);
    auto response = core_->ListFindings(request);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? *response : v1::ListFindingsResponse();
  }
  static std::vector<std::string> Codes(const v1::ListFindingsResponse& r) {
    std::vector<std::string> out;
    for (const v1::Finding& f : r.findings()) out.push_back(f.subject().node() + " " + f.code());
    return out;
  }

  std::map<std::string, std::shared_ptr<RecordingLink>> links_by_node_;
};

TEST_F(FleetCoreFindingsTest, ASlowNodeIsAnOutlierNamingItsPeersAndTheOthersGetNothing) {
  for (const char* n : {"a", "b", "c"}) Join(n);
  std::string last;
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(absl::Minutes(10));
    last = RunWith({{"a", 1.0 + 0.01 * i}, {"b", 1.02 - 0.01 * i}, {"c", 0.45}});
  }
  v1::ListFindingsResponse all = Findings();
  EXPECT_EQ(all.nodes_judged(), 3u);
  ASSERT_THAT(Codes(all), ::testing::ElementsAre("c fleet.outlier"));
  const v1::Finding& f = all.findings(0);
  EXPECT_EQ(f.run_id(), last);
  EXPECT_EQ(f.evidence(0).name(), "gemm.cpu.fp32.tflops");
  EXPECT_EQ(f.evidence(0).unit(), "tflops");
  EXPECT_DOUBLE_EQ(f.evidence(0).measured(), 0.45);
  EXPECT_THAT(f.evidence(0).expectation_source(),
              HasSubstr("fleet peers: 2 nodes with cpu=Xeon 8480 x 16 threads"));
  EXPECT_THAT(absl::StrJoin(f.context(), "\n"), HasSubstr("): a 1.02, b 1\n"));
  EXPECT_THAT(Codes(Findings("a")), IsEmpty());
  EXPECT_THAT(Codes(Findings("c")), ::testing::ElementsAre("c fleet.outlier"));
  // The run's findings are about that run, and the filter keeps the worse.
  EXPECT_EQ(Findings("", last).findings(0).run_id(), last);
  EXPECT_THAT(Codes(Findings("", "", v1::SEVERITY_CRITICAL)),
              ::testing::ElementsAre("c fleet.outlier"));  // 55% below: critical
}

TEST_F(FleetCoreFindingsTest, AStepDownAfterAKernelChangeIsARegressionWithTheChangeBesideIt) {
  Join("n", "6.8.0");
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(absl::Hours(1));
    RunWith({{"n", 1.0 + 0.01 * (i % 3)}});
  }
  clock_.Advance(absl::Hours(1));
  const absl::Time changed = clock_.Now();
  Join("n", "6.9.1");  // the agent came back with a new kernel
  std::string last;
  for (int i = 0; i < 2; ++i) {
    clock_.Advance(absl::Hours(1));
    last = RunWith({{"n", 0.7}});
  }
  v1::ListFindingsResponse r = Findings("n");
  ASSERT_THAT(Codes(r), ::testing::ElementsAre("n node.regression"));
  const v1::Finding& f = r.findings(0);
  EXPECT_EQ(f.run_id(), last);
  EXPECT_NEAR(f.evidence(0).expected(), 1.01, 0.011);
  EXPECT_THAT(absl::StrJoin(f.context(), "\n"),
              HasSubstr(absl::StrCat(absl::FormatTime("%Y-%m-%d %H:%M UTC", changed,
                                                      absl::UTCTimeZone()),
                                     " kernel 6.8.0 -> 6.9.1")));
}

TEST_F(FleetCoreFindingsTest, BadRequestsAreRefusedAndTheDeadlineIsHonoured) {
  Join("a");
  RunWith({{"a", 1.0}});
  v1::ListFindingsRequest request;
  request.set_node("nope");
  EXPECT_EQ(core_->ListFindings(request).status().code(), absl::StatusCode::kNotFound);
  request.set_node("");
  request.set_run_id("no-such-run");
  EXPECT_EQ(core_->ListFindings(request).status().code(), absl::StatusCode::kNotFound);
  request.set_run_id("");
  request.set_min_severity(static_cast<v1::Severity>(42));
  EXPECT_EQ(core_->ListFindings(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.set_min_severity(v1::SEVERITY_UNSPECIFIED);
  request.set_window_ms(-1);
  EXPECT_EQ(core_->ListFindings(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.set_window_ms(absl::ToInt64Milliseconds(absl::Hours(24 * 366)));
  EXPECT_EQ(core_->ListFindings(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.set_window_ms(0);
  request.set_node(std::string(65, 'x'));
  EXPECT_EQ(core_->ListFindings(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.set_node("");
  EXPECT_EQ(core_->ListFindings(request, absl::Now() - absl::Seconds(1)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  v1::VarianceRequest variance;
  variance.set_metric("gemm.cpu.fp32.tflops");
  EXPECT_EQ(core_->Variance(variance, absl::Now() - absl::Seconds(1)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  variance.set_metric("gemm.cpu.fp33.tflops");
  EXPECT_EQ(core_->Variance(variance).status().code(), absl::StatusCode::kNotFound);
  variance.set_metric("");
  EXPECT_EQ(core_->Variance(variance).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(FleetCoreFindingsTest, DaySlowNightFastGivesATimeOfDayFindingAndAProfile) {
  Join("tok", "6.8.0", {{"region", "ap-northeast-1"}, {"timezone", "Asia/Tokyo"}});
  Join("osa", "6.8.0", {{"region", "ap-northeast-1"}, {"timezone", "Asia/Tokyo"}});
  // Five days, a run every two hours; slow from 08 to 20 Tokyo time.
  absl::TimeZone tokyo;
  ASSERT_TRUE(absl::LoadTimeZone("Asia/Tokyo", &tokyo));
  const absl::Time start = absl::FromCivil(absl::CivilHour(2027, 1, 4, 0), tokyo);
  clock_.Advance(start - clock_.Now());
  for (int i = 0; i < 60; ++i) {
    const int hour = (2 * i) % 24;
    const double v = (hour >= 8 && hour < 20 ? 0.6 : 1.0) + 0.005 * (i % 3);
    RunWith({{"tok", v}, {"osa", v}});
    clock_.Advance(absl::Hours(2));
  }
  v1::ListFindingsResponse r = Findings("tok");
  ASSERT_THAT(Codes(r), ::testing::ElementsAre("tok node.time_of_day"));
  EXPECT_THAT(r.findings(0).summary(), HasSubstr("worse by day"));
  EXPECT_THAT(r.findings(0).summary(), HasSubstr("slow hours 08-18 Asia/Tokyo"));
  EXPECT_THAT(absl::StrJoin(r.findings(0).context(), "\n"), HasSubstr("slow hours (UTC): 01-09, 23"));

  v1::VarianceRequest request;
  request.set_metric("gemm.cpu.fp32.tflops");
  request.set_by(v1::RANK_GROUPING_REGION);
  request.set_window_ms(absl::ToInt64Milliseconds(absl::Hours(24 * 30)));
  auto profile = core_->Variance(request);
  ASSERT_TRUE(profile.ok()) << profile.status();
  ASSERT_EQ(profile->groups_size(), 1);
  const v1::VarianceGroup& g = profile->groups(0);
  EXPECT_EQ(g.group(), "ap-northeast-1");
  EXPECT_EQ(g.node_count(), 2u);
  EXPECT_EQ(g.run_count(), 120u);
  ASSERT_EQ(g.profiles_size(), 2);  // UTC, then the shared local zone
  EXPECT_EQ(g.profiles(0).time_zone(), "UTC");
  EXPECT_EQ(g.profiles(1).time_zone(), "Asia/Tokyo");
  ASSERT_EQ(g.profiles(1).hours_size(), 24);
  EXPECT_EQ(g.profiles(1).hours(10).count(), 10u);  // 5 days x 2 nodes
  EXPECT_NEAR(g.profiles(1).hours(10).median(), 0.605, 0.006);
  EXPECT_EQ(g.profiles(1).hours(11).count(), 0u);
  EXPECT_TRUE(g.profiles(1).beyond_noise());
  EXPECT_TRUE(g.profiles(1).day_is_slower());
  EXPECT_NEAR(g.profiles(1).gap_fraction(), 0.4, 0.01);
}

TEST_F(FleetCoreFindingsTest, AnUnknownTimezoneLabelIsNotedAndUtcUsed) {
  Join("x", "6.8.0", {{"timezone", "Mars/Olympus_Mons"}});
  RunWith({{"x", 1.0}});
  v1::ListFindingsResponse r = Findings();
  ASSERT_EQ(r.notes_size(), 1);
  EXPECT_THAT(r.notes(0), HasSubstr("timezone label 'Mars/Olympus_Mons' names no known zone"));
}

}  // namespace
}  // namespace fleetbench::controller
