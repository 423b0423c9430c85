// Tests of the SQLite store's reports and sample reads: each sample id stored
// once, NaN and infinity, atomic commits with a task update, History.
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "fleetbench/v1/result.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

using ::testing::HasSubstr;
using ::testing::Pair;

TEST_P(StoreContractTest, CommitReportsStoresEachSampleIdOnce) {
  AddNodeAndRun("n1", "r1");
  Store::ReportWrite report;
  for (int i = 0; i < 10; ++i) {
    v1::Sample s = MakeSample(absl::StrCat("01HS", i), "r1", "n1", kMetric, i,
                              ToUnixMillis(kT0) + i);
    (*s.mutable_params())["size"] = absl::StrCat(1024 * i);
    (*s.mutable_params())["dtype"] = "fp32";
    report.samples.push_back(s);
  }
  auto first = store_->CommitReports({report});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, 10);
  // The agent resends the same report (its ack was lost) plus one new sample.
  report.samples.push_back(
      MakeSample("01HSnew", "r1", "n1", kMetric, 42, ToUnixMillis(kT0) + 99));
  auto second = store_->CommitReports({report, report});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*second, 1);
  auto again = store_->CommitReports({report});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0);
  EXPECT_EQ(*store_->CountSamples(), 11);

  Reopen();
  auto samples = store_->ListSamplesForRun("r1");
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 11u);
  const v1::Sample& s3 = (*samples)[3];
  EXPECT_EQ(s3.id(), "01HS3");
  EXPECT_EQ(s3.run_id(), "r1");
  EXPECT_EQ(s3.node(), "n1");
  EXPECT_EQ(s3.benchmark(), "gemm");
  EXPECT_EQ(s3.metric(), kMetric);
  EXPECT_EQ(s3.value(), 3);
  EXPECT_EQ(s3.unit(), "tflops");
  EXPECT_EQ(s3.time_unix_ms(), ToUnixMillis(kT0) + 3);
  EXPECT_THAT(s3.params(), ::testing::UnorderedElementsAre(
                               Pair("size", "3072"), Pair("dtype", "fp32")));
  EXPECT_TRUE((*samples)[10].params().empty());
}

TEST_P(StoreContractTest, NanAndInfinityValuesSurvive) {
  AddNodeAndRun("n1", "r1");
  Store::ReportWrite report;
  report.samples = {
      MakeSample("a", "r1", "n1", kMetric, std::nan(""), 1),
      MakeSample("b", "r1", "n1", kMetric, INFINITY, 2)};
  ASSERT_EQ(*store_->CommitReports({report}), 2);
  auto samples = store_->ListSamplesForRun("r1");
  ASSERT_TRUE(samples.ok());
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_TRUE(std::isnan((*samples)[0].value()));
  EXPECT_TRUE(std::isinf((*samples)[1].value()));
}

TEST_P(StoreContractTest, CommitReportsUpdatesTaskInTheSameTransaction) {
  AddNodeAndRun("n1", "r1");
  TaskRecord task = MakeTask("r1-n1", "r1", "n1", kT0 + absl::Seconds(5));
  task.state = v1::TASK_STATE_SUCCEEDED;
  task.outcomes.emplace_back().set_benchmark("gemm");
  Store::ReportWrite report;
  report.samples = {MakeSample("s1", "r1", "n1", kMetric, 1, 1)};
  report.task = &task;
  auto added = store_->CommitReports({report});
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(*added, 1);
  auto tasks = store_->ListTasks("r1");
  ASSERT_TRUE(tasks.ok());
  EXPECT_EQ((*tasks)[0].state, v1::TASK_STATE_SUCCEEDED);
  EXPECT_EQ((*tasks)[0].outcomes.size(), 1u);

  // A report whose task update fails stores none of its samples, nor those
  // of the other reports in the call.
  TaskRecord missing = MakeTask("no-such-task", "r1", "n1", kT0);
  Store::ReportWrite good;
  good.samples = {MakeSample("s2", "r1", "n1", kMetric, 2, 2)};
  Store::ReportWrite bad;
  bad.samples = {MakeSample("s3", "r1", "n1", kMetric, 3, 3)};
  bad.task = &missing;
  EXPECT_EQ(store_->CommitReports({good, bad}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(*store_->CountSamples(), 1);
  // And the metric cache did not keep anything from the rolled-back call.
  auto retry = store_->CommitReports({good});
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_EQ(*retry, 1);
}

TEST_P(StoreContractTest, CommitReportsRefusesUnknownRunOrNodeAtomically) {
  AddNodeAndRun("n1", "r1");
  Store::ReportWrite report;
  report.samples = {MakeSample("s1", "r1", "n1", "new.metric.us", 1, 1),
                    MakeSample("s2", "r9", "n1", kMetric, 2, 2)};
  auto status = store_->CommitReports({report}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("r9"));
  report.samples[1] = MakeSample("s2", "r1", "ghost", kMetric, 2, 2);
  EXPECT_EQ(store_->CommitReports({report}).status().code(),
            absl::StatusCode::kInvalidArgument);
  report.samples[1] = MakeSample("", "r1", "n1", kMetric, 2, 2);
  EXPECT_EQ(store_->CommitReports({report}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*store_->CountSamples(), 0);
  // The metric created by the rolled-back call is not left behind.
  EXPECT_TRUE(store_->MetricPointsSince("new.metric.us", absl::InfinitePast())
                  ->empty());
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_P(StoreContractTest, HistoryIsNewestFirstAndLimited) {
  AddNodeAndRun("n1", "r1");
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n2", "6.1", kT0)).ok());
  Store::ReportWrite report;
  for (int i = 0; i < 20; ++i) {
    // Inserted out of time order on purpose.
    const int t = (i * 7) % 20;
    report.samples.push_back(MakeSample(absl::StrCat("n1-", i), "r1", "n1",
                                        kMetric, t, 1000 + t));
  }
  report.samples.push_back(MakeSample("n2-0", "r1", "n2", kMetric, 99, 5000));
  report.samples.push_back(
      MakeSample("n1-other", "r1", "n1", "stream.triad.GBps", 7, 5000));
  ASSERT_TRUE(store_->CommitReports({report}).ok());

  auto history = store_->History("n1", kMetric, 5);
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ((*history)[i].time_unix_ms(), 1019 - i);
    EXPECT_EQ((*history)[i].node(), "n1");
    EXPECT_EQ((*history)[i].run_id(), "r1");
    EXPECT_EQ((*history)[i].metric(), kMetric);
  }
  EXPECT_EQ(store_->History("n1", kMetric, 0)->size(), 20u);  // 0: all
  EXPECT_TRUE(store_->History("n1", "unknown.metric.us", 5)->empty());
  EXPECT_EQ(store_->History("ghost", kMetric, 5).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_P(StoreContractTest, HistoryPagesAfterACursorWithoutLossOrRepeat) {
  AddNodeAndRun("n1", "r1");
  Store::ReportWrite report;
  // 12 samples over 4 distinct times: pages of 5 cut inside a time.
  for (int i = 0; i < 12; ++i) {
    report.samples.push_back(MakeSample(absl::StrCat("s", i < 10 ? "0" : "", i), "r1", "n1",
                                        kMetric, i, 1000 + i / 3));
  }
  ASSERT_TRUE(store_->CommitReports({report}).ok());
  auto all = store_->History("n1", kMetric, 0);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 12u);

  std::vector<std::string> paged;
  std::optional<SampleCursor> after;
  for (int page = 0; page < 5; ++page) {
    auto rows = store_->History("n1", kMetric, 5, after);
    ASSERT_TRUE(rows.ok()) << rows.status();
    if (rows->empty()) break;
    EXPECT_LE(rows->size(), 5u);
    for (const v1::Sample& s : *rows) paged.push_back(s.id());
    after = SampleCursor{rows->back().time_unix_ms(), rows->back().id()};
  }
  std::vector<std::string> whole;
  for (const v1::Sample& s : *all) whole.push_back(s.id());
  EXPECT_EQ(paged, whole);
  EXPECT_EQ(whole.front(), "s11");  // newest time, largest id first
  EXPECT_EQ(whole.back(), "s00");
}

// Regression: a run of 200k samples could only be read whole, in one message
// larger than any peer accepts. Pages walk the same order as the whole read,
// each sample once, however the samples of two nodes and metrics interleave
// and share a millisecond.
TEST_P(StoreContractTest, RunSamplesPageInTheOrderOfTheWholeRead) {
  AddNodeAndRun("n1", "r1");
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n2", "6.1", kT0)).ok());
  Store::ReportWrite report;
  for (int i = 0; i < 53; ++i) {
    report.samples.push_back(MakeSample(absl::StrCat("01HS", 100 + i), "r1", i % 2 ? "n1" : "n2",
                                        i % 3 ? kMetric : "gemm.cpu.fp64.tflops", i,
                                        ToUnixMillis(kT0) + i / 5));
  }
  ASSERT_EQ(*store_->CommitReports({report}), 53);
  auto whole = store_->ListSamplesForRun("r1");
  ASSERT_TRUE(whole.ok()) << whole.status();
  std::vector<std::string> paged;
  std::optional<RunSampleCursor> after;
  int pages = 0;
  while (true) {
    std::vector<RunSampleCursor> cursors;
    auto page = store_->ListSamplesForRunPage("r1", 10, after, &cursors);
    ASSERT_TRUE(page.ok()) << page.status();
    ASSERT_EQ(page->size(), cursors.size());
    ASSERT_LE(page->size(), 10u);
    for (const v1::Sample& s : *page) paged.push_back(s.id());
    if (page->empty()) break;
    ++pages;
    after = cursors.back();
  }
  EXPECT_EQ(pages, 6);
  std::vector<std::string> ids;
  for (const v1::Sample& s : *whole) ids.push_back(s.id());
  EXPECT_EQ(paged, ids);
  std::vector<RunSampleCursor> cursors;
  EXPECT_EQ(store_->ListSamplesForRunPage("nope", 10, std::nullopt, &cursors).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace fleetbench::storage
