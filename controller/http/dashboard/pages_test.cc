// The pages on a real FleetCore (a SQLite file, a fake clock): what each
// shows, escaping of what nodes send, and the status of a bad request.
#include "controller/http/dashboard/dashboard.h"

#include "controller/core/fleet_core_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class DashboardPagesTest : public FleetCoreTest {
 protected:
  HttpReply Get(HttpReply (*page)(FleetCore&, const dashboard::DashboardOptions&,
                                             const HttpRequest&),
                std::multimap<std::string, std::string> params = {}) {
    HttpRequest request;
    request.params = std::move(params);
    request.principal = {"alice", Role::kViewer};
    return page(*core_, dashboard::DashboardOptions(), request);
  }
  // One GEMM run on `link`'s node, finished with one sample.
  std::string MeasureOnce(const std::shared_ptr<RecordingLink>& link) {
    const std::string run = Start("gemm");
    const std::vector<v1::RunTask> tasks = link->RunTasks();
    EXPECT_FALSE(tasks.empty());
    if (!tasks.empty()) Finish(link, tasks.back());
    return run;
  }
};

TEST_F(DashboardPagesTest, ANodePageMarksWhereItsFactsChangedOnItsHistory) {
  v1::Hello hello = MakeHello("n1");
  hello.mutable_facts()->set_kernel("6.1.0");
  // Within the heartbeat timeout, so the node stays online throughout.
  MeasureOnce(ConnectWith(hello));
  clock_.Advance(absl::Seconds(5));
  hello.mutable_facts()->set_kernel("6.2.0");
  auto link = ConnectWith(hello);
  clock_.Advance(absl::Seconds(5));
  MeasureOnce(link);
  const HttpReply reply = Get(&dashboard::NodePage, {{"name", "n1"}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_THAT(reply.body, HasSubstr("<title>facts changed: kernel</title>"));
  EXPECT_THAT(reply.body, HasSubstr("data-metric=\"gemm.cpu.fp32.tflops\""));
  int points = 0;
  for (size_t at = reply.body.find("circle class=\"point\""); at != std::string::npos;
       at = reply.body.find("circle class=\"point\"", at + 1)) {
    ++points;
  }
  EXPECT_EQ(points, 2);
  EXPECT_THAT(reply.body, HasSubstr("6.2.0"));
  EXPECT_THAT(reply.body, HasSubstr("alice"));
}

TEST_F(DashboardPagesTest, WhatANodeSendsIsEscapedOnEveryPage) {
  v1::Hello hello = MakeHello("n1");
  (*hello.mutable_labels())["team"] = "<script>alert(1)</script>";
  hello.mutable_facts()->mutable_cpu()->set_model("<img src=x onerror=alert(2)>");
  const std::string run = MeasureOnce(ConnectWith(hello));
  for (const HttpReply& reply : {Get(&dashboard::FleetPage), Get(&dashboard::NodePage, {{"name", "n1"}}),
                                 Get(&dashboard::RunPage, {{"id", run}})}) {
    EXPECT_EQ(reply.status, 200) << reply.body;
    EXPECT_THAT(reply.body, Not(HasSubstr("<script")));
    EXPECT_THAT(reply.body, Not(HasSubstr("<img")));
  }
  EXPECT_THAT(Get(&dashboard::FleetPage).body, HasSubstr("team=&lt;script&gt;alert(1)&lt;/script&gt;"));
}

TEST_F(DashboardPagesTest, BadOrUnknownParametersAreSaidWithTheirStatus) {
  Connect("n1");
  EXPECT_EQ(Get(&dashboard::NodePage).status, 400);
  const HttpReply unknown = Get(&dashboard::NodePage, {{"name", "<nobody>"}});
  EXPECT_EQ(unknown.status, 404);
  EXPECT_THAT(unknown.body, HasSubstr("no node named &#39;&lt;nobody&gt;&#39;"));
  EXPECT_EQ(Get(&dashboard::RunPage, {{"id", "01ARZ3NDEKTSV4RRFFQ69G5FAV"}}).status, 404);
  EXPECT_EQ(Get(&dashboard::RankPage, {{"metric", "gemm.cpu.fp32.tflops"}, {"by", "galaxy"}}).status,
            400);
  EXPECT_EQ(Get(&dashboard::RankPage, {{"metric", "gemm.cpu.fp32.tflops"}, {"window", "-1d"}}).status,
            400);
  EXPECT_EQ(Get(&dashboard::TimeOfDayPage, {{"metric", "x"}, {"by", "nope"}}).status, 400);
  // No metric: the form, not an error.
  EXPECT_EQ(Get(&dashboard::RankPage).status, 200);
  EXPECT_EQ(Get(&dashboard::TimeOfDayPage).status, 200);
}

TEST_F(DashboardPagesTest, ARunPageRefreshesOnlyWhileTheRunIsGoing) {
  auto link = Connect("n1");
  const std::string run = Start("gemm");
  const HttpReply going = Get(&dashboard::RunPage, {{"id", run}});
  ASSERT_EQ(going.status, 200);
  EXPECT_THAT(going.body, HasSubstr("http-equiv=\"refresh\""));
  Finish(link, link->RunTasks().back());
  const HttpReply done = Get(&dashboard::RunPage, {{"id", run}});
  EXPECT_THAT(done.body, Not(HasSubstr("http-equiv=\"refresh\"")));
  EXPECT_THAT(done.body, HasSubstr("data-state=\"succeeded\""));
  EXPECT_THAT(done.body, HasSubstr(">1.0000</td>"));  // the sample, as the CLI prints it
}

TEST_F(DashboardPagesTest, TheReliabilityPageCountsPerGroupAndDayAndTheRankTakesAJobSize) {
  v1::Hello hello = MakeHello("n1");
  (*hello.mutable_labels())["instance_type"] = "<flaky>";
  MeasureOnce(ConnectWith(hello));
  AdvanceAndSweep(absl::Seconds(20));  // silent past the timeout: offline
  RestartCore(Options());              // writes what the ledger holds
  const HttpReply page = Get(&dashboard::ReliabilityPage, {{"by", "instance_type"}});
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_THAT(page.body, HasSubstr("&lt;flaky&gt;"));
  EXPECT_THAT(page.body, Not(HasSubstr("<flaky>")));
  EXPECT_THAT(page.body, HasSubstr("offline 1"));
  EXPECT_THAT(page.body, HasSubstr("no heartbeat for"));
  EXPECT_THAT(page.body, HasSubstr("interruptions per UTC day"));
  EXPECT_EQ(Get(&dashboard::ReliabilityPage, {{"by", "galaxy"}}).status, 400);

  const HttpReply rank = Get(&dashboard::RankPage, {{"metric", "gemm.cpu.fp32.tflops"},
                                                    {"by", "instance_type"},
                                                    {"job_nodes", "512"}});
  ASSERT_EQ(rank.status, 200) << rank.body;
  EXPECT_THAT(rank.body, HasSubstr("GOODPUT"));
  EXPECT_THAT(rank.body, HasSubstr("for a job on 512 node(s)"));
  EXPECT_EQ(Get(&dashboard::RankPage, {{"metric", "gemm.cpu.fp32.tflops"}, {"job_nodes", "0"}})
                .status,
            400);
}

}  // namespace
}  // namespace fleetbench::controller
