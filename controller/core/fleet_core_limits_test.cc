// Inputs are bounded at StartRun (docs/protocol.md, "Bounds"), and large reads come in
// pages that fit the message limit every peer agrees on
// (common/wire_limits.h).
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/wire_limits.h"
#include "controller/core/fleet_core_fixture.h"
#include "gmock/gmock.h"

namespace fleetbench::controller {
namespace {

using ::testing::HasSubstr;

using FleetCoreLimitsTest = FleetCoreTest;

TEST_F(FleetCoreLimitsTest, MegabytesOfParametersAreRefusedAndNothingIsStored) {
  auto link = Connect("a");
  v1::StartRunRequest request;
  v1::BenchmarkSpec* spec = request.add_benchmarks();
  spec->set_name("gemm");
  (*spec->mutable_params())["sizes"] = std::string(5 << 20, 'x');
  auto started = core_->StartRun(request);
  EXPECT_EQ(started.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(started.status().message(), HasSubstr("gemm.sizes"));
  EXPECT_LT(started.status().message().size(), 200u);
  EXPECT_EQ(core_->ListRuns(v1::ListRunsRequest())->runs_size(), 0);
  EXPECT_TRUE(link->RunTasks().empty());
}

TEST_F(FleetCoreLimitsTest, UnknownNamesAreClippedWhenEchoed) {
  auto link = Connect("a");
  v1::StartRunRequest request;
  request.add_benchmarks()->set_name(std::string(100, 'b'));
  auto started = core_->StartRun(request);
  EXPECT_EQ(started.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(started.status().message(), HasSubstr(std::string(64, 'b') + "..."));
  EXPECT_THAT(started.status().message(), ::testing::Not(HasSubstr(std::string(65, 'b'))));
}

// A run's samples page by count, and every sample comes exactly once.
TEST_F(FleetCoreLimitsTest, GetRunPagesTheSamples) {
  auto link = Connect("a");
  const std::string run_id = Start("gemm");
  ASSERT_EQ(link->RunTasks().size(), 1u);
  Finish(link, link->RunTasks()[0], 250);
  v1::GetRunRequest get;
  get.set_run_id(run_id);
  get.set_include_samples(true);
  get.set_samples_page_size(100);
  std::set<std::string> ids;
  int pages = 0;
  while (true) {
    auto run = core_->GetRun(get);
    ASSERT_TRUE(run.ok()) << run.status();
    ++pages;
    EXPECT_LE(run->samples_size(), 100);
    EXPECT_EQ(run->tasks_size(), 1);
    for (const v1::Sample& s : run->samples()) EXPECT_TRUE(ids.insert(s.id()).second) << s.id();
    if (run->samples_next_page_token().empty()) break;
    get.set_samples_page_token(run->samples_next_page_token());
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(ids.size(), 250u);
  // A token is for its run only.
  const std::string other = Start("gemm");
  get.set_run_id(other);
  EXPECT_EQ(core_->GetRun(get).status().code(), absl::StatusCode::kInvalidArgument);
}

// Task logs fill a GetRun only up to the page budget; the others say so
// and come when asked for by task id, at most kMaxLogTasksPerCall at once.
TEST_F(FleetCoreLimitsTest, TaskLogsComeWithinThePageBudgetAndTheRestById) {
  constexpr int kNodes = 80;  // 80 x 64 KiB = 5 MiB > the 4 MiB budget
  std::vector<std::shared_ptr<RecordingLink>> links;
  for (int i = 0; i < kNodes; ++i) links.push_back(Connect(absl::StrCat("n", i)));
  const std::string run_id = Start("gemm");
  for (int i = 0; i < kNodes; ++i) {
    ASSERT_EQ(links[i]->RunTasks().size(), 1u);
    const v1::RunTask task = links[i]->RunTasks()[0];
    v1::AgentMessage m;
    v1::Report* r = m.mutable_report();
    r->set_report_id(NewUlid());
    r->set_task_id(task.task_id());
    r->set_task_finished(true);
    r->set_task_state(v1::TASK_STATE_SUCCEEDED);
    r->set_task_log(std::string(kMaxTaskLogBytes, static_cast<char>('a' + i % 26)));
    Send(links[i], m);
  }
  v1::GetRunRequest get;
  get.set_run_id(run_id);
  get.set_include_logs(true);
  auto run = core_->GetRun(get);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_LE(run->ByteSizeLong(), kPageBudgetBytes);
  std::vector<std::string> omitted;
  int with_log = 0;
  for (const v1::NodeTask& t : run->tasks()) {
    if (t.log_omitted()) omitted.push_back(t.task_id());
    with_log += !t.log().empty();
    if (!t.log().empty()) {
      EXPECT_EQ(t.log().size(), kMaxTaskLogBytes);
    }
  }
  EXPECT_GT(with_log, 0);
  ASSERT_FALSE(omitted.empty());
  EXPECT_EQ(with_log + static_cast<int>(omitted.size()), kNodes);

  for (const std::string& id : omitted) get.add_log_task_ids(id);
  run = core_->GetRun(get);
  ASSERT_TRUE(run.ok()) << run.status();
  int got = 0;
  for (const v1::NodeTask& t : run->tasks()) {
    got += !t.log().empty();
    EXPECT_FALSE(t.log_omitted());
  }
  EXPECT_EQ(got, static_cast<int>(omitted.size()));

  for (int i = 0; i <= kMaxLogTasksPerCall; ++i) get.add_log_task_ids(absl::StrCat("t", i));
  EXPECT_EQ(core_->GetRun(get).status().code(), absl::StatusCode::kInvalidArgument);
}

// Runs carry their parameters; a page of large runs stops at the byte
// budget instead of growing past what a client can read.
TEST_F(FleetCoreLimitsTest, ListRunsPagesStopAtTheByteBudget) {
  auto link = Connect("a");
  std::map<std::string, std::string> params;
  for (int i = 0; i < 60; ++i) params["k" + std::to_string(i)] = std::string(1000, 'v');
  constexpr int kRuns = 80;  // ~4.9 MB of parameters in all
  for (int i = 0; i < kRuns; ++i) ASSERT_FALSE(Start("gemm", {}, 0, params).empty());
  v1::ListRunsRequest request;
  request.set_page_size(1000);
  int seen = 0;
  int pages = 0;
  while (true) {
    auto page = core_->ListRuns(request);
    ASSERT_TRUE(page.ok()) << page.status();
    ++pages;
    EXPECT_LE(page->ByteSizeLong(), kPageBudgetBytes + (100 << 10));
    seen += page->runs_size();
    if (page->next_page_token().empty()) break;
    request.set_page_token(page->next_page_token());
  }
  EXPECT_EQ(seen, kRuns);
  EXPECT_EQ(pages, 2);
}

// History takes pages of up to 100k samples; with parameters that is more
// than a message holds, so its pages stop at the byte budget too.
TEST_F(FleetCoreLimitsTest, HistoryPagesStopAtTheByteBudget) {
  auto link = Connect("a");
  Start("gemm");
  ASSERT_EQ(link->RunTasks().size(), 1u);
  const v1::RunTask task = link->RunTasks()[0];
  constexpr int kReports = 3;
  for (int r = 0; r < kReports; ++r) {
    v1::AgentMessage m;
    v1::Report* report = m.mutable_report();
    report->set_report_id(NewUlid());
    report->set_task_id(task.task_id());
    for (int i = 0; i < 1000; ++i) {
      v1::Sample* s = AddGemmSample(report, i);
      s->set_run_id(task.run_id());
      s->set_time_unix_ms(absl::ToUnixMillis(clock_.Now()) + r * 1000 + i);
      for (int k = 0; k < 4; ++k) (*s->mutable_params())["k" + std::to_string(k)] = std::string(1000, 'v');
    }
    report->set_task_finished(r + 1 == kReports);
    report->set_task_state(v1::TASK_STATE_SUCCEEDED);
    Send(link, m);
  }
  v1::HistoryRequest request;
  request.set_node("a");
  request.set_metric("gemm.cpu.fp32.tflops");
  request.set_page_size(100000);
  std::set<std::string> ids;
  int pages = 0;
  while (true) {
    auto page = core_->History(request);
    ASSERT_TRUE(page.ok()) << page.status();
    ++pages;
    EXPECT_LE(page->ByteSizeLong(), kPageBudgetBytes + (16 << 10));
    for (const v1::Sample& s : page->samples()) EXPECT_TRUE(ids.insert(s.id()).second);
    if (page->next_page_token().empty()) break;
    request.set_page_token(page->next_page_token());
  }
  EXPECT_EQ(ids.size(), 3000u);  // ~12 MB in all
  EXPECT_GE(pages, 3);
}

}  // namespace
}  // namespace fleetbench::controller
