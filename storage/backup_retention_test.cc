// Store::BackupTo (the online backup while commits go on) and
// Store::PruneSamplesBefore (retention), on real SQLite files.
#include <atomic>
#include <cmath>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

// One report of `n` samples of run r1 on n1, ids PREFIX-0..n-1.
Store::ReportWrite Report(const std::string& prefix, int n, int64_t time_ms) {
  Store::ReportWrite report;
  for (int i = 0; i < n; ++i) {
    v1::Sample s = MakeSample(absl::StrCat(prefix, "-", i), "r1", "n1", kMetric, i, time_ms + i);
    (*s.mutable_params())["size"] = absl::StrCat(i);
    report.samples.push_back(s);
  }
  return report;
}

std::set<std::string> SampleIds(Store& store) {
  std::set<std::string> ids;
  auto samples = store.ListSamplesForRun("r1");
  EXPECT_TRUE(samples.ok()) << samples.status();
  if (samples.ok()) {
    for (const v1::Sample& s : *samples) ids.insert(s.id());
  }
  return ids;
}

TEST_F(SqliteStoreTest, BackupWhileCommitsGoOnHoldsEverythingStoredBeforeIt) {
  AddNodeAndRun("n1", "r1");
  for (int batch = 0; batch < 40; ++batch) {
    ASSERT_TRUE(store_->CommitReports({Report(absl::StrCat("before", batch), 500,
                                              ToUnixMillis(kT0) + batch * 1000)})
                    .ok());
  }
  const std::set<std::string> before = SampleIds(*store_);
  ASSERT_EQ(before.size(), 20000u);

  // A writer commits while the backup copies two pages a step.
  std::atomic<bool> backing_up{true};
  std::atomic<int> commits_during{0};
  std::thread writer([&] {
    for (int batch = 0; backing_up.load(); ++batch) {
      auto stored = store_->CommitReports(
          {Report(absl::StrCat("during", batch), 50, ToUnixMillis(kT0) + 100'000 + batch)});
      ASSERT_TRUE(stored.ok()) << stored.status();
      if (backing_up.load()) commits_during.fetch_add(1);
    }
  });
  const std::string copy = dir_.File("backup.db");
  absl::Status backup = store_->BackupTo(copy, 2);
  backing_up.store(false);
  writer.join();
  ASSERT_TRUE(backup.ok()) << backup;
  EXPECT_GT(commits_during.load(), 0) << "no commit ran while the backup copied";
  EXPECT_FALSE(std::filesystem::exists(copy + "-wal"));

  SqliteOptions options;
  options.path = copy;
  options.verify_on_open = true;
  auto restored = OpenSqliteStore(options);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_TRUE((*restored)->CheckIntegrity().ok());
  const std::set<std::string> copied = SampleIds(**restored);
  EXPECT_TRUE(std::includes(copied.begin(), copied.end(), before.begin(), before.end()))
      << copied.size() << " samples in the copy";
}

TEST_F(SqliteStoreTest, BackupRefusesAnExistingFileAndLeavesNothingOnFailure) {
  AddNodeAndRun("n1", "r1");
  const std::string taken = dir_.File("taken.db");
  std::ofstream(taken) << "keep me";
  EXPECT_EQ(store_->BackupTo(taken, 100).code(), absl::StatusCode::kAlreadyExists);
  std::ifstream in(taken);
  std::string kept;
  std::getline(in, kept);
  EXPECT_EQ(kept, "keep me");
  const std::string nowhere = dir_.File("no/such/folder/copy.db");
  EXPECT_FALSE(store_->BackupTo(nowhere, 100).ok());
  EXPECT_FALSE(std::filesystem::exists(nowhere));
  EXPECT_EQ(store_->BackupTo(dir_.File("x.db"), 0).code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(StoreContractTest, PruneRemovesOldSamplesAndTheirPointsInBoundedCalls) {
  AddNodeAndRun("n1", "r1");
  const int64_t day_ms = 24 * 3600 * 1000;
  const int64_t now_ms = ToUnixMillis(kT0) + 200 * day_ms;
  // 300 commits of one old sample each: past 256 rows of recent points the
  // store folds them into a chunk, so both places are pruned. Then new
  // samples, an old NaN and two old samples alike in all but their params.
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(store_->CommitReports({Report(absl::StrCat("old", i), 1,
                                              now_ms - 100 * day_ms + i)})
                    .ok());
  }
  Store::ReportWrite odd;
  odd.samples.push_back(MakeSample("odd-nan", "r1", "n1", kMetric,
                                   std::numeric_limits<double>::quiet_NaN(), now_ms - 95 * day_ms));
  for (const char* id : {"twin-a", "twin-b"}) {
    v1::Sample s = MakeSample(id, "r1", "n1", kMetric, 7, now_ms - 95 * day_ms);
    (*s.mutable_params())["size"] = id;
    odd.samples.push_back(s);
  }
  ASSERT_TRUE(store_->CommitReports({odd}).ok());
  ASSERT_TRUE(store_->CommitReports({Report("new", 10, now_ms - day_ms)}).ok());
  ASSERT_EQ(*store_->CountSamples(), 313);

  const absl::Time cutoff = absl::FromUnixMillis(now_ms - 90 * int64_t{day_ms});
  int calls = 0;
  int64_t total = 0;
  while (true) {
    auto removed = store_->PruneSamplesBefore(cutoff, 7);
    ASSERT_TRUE(removed.ok()) << removed.status();
    ASSERT_LE(*removed, 7);
    if (*removed == 0) break;
    total += *removed;
    ASSERT_LT(++calls, 1000);
  }
  EXPECT_EQ(total, 303);
  EXPECT_GE(calls, 303 / 7);
  EXPECT_EQ(*store_->CountSamples(), 10);
  EXPECT_TRUE(store_->CheckIntegrity().ok()) << store_->CheckIntegrity();
  std::set<std::string> ids = SampleIds(*store_);
  EXPECT_EQ(ids.size(), 10u);
  for (const std::string& id : ids) EXPECT_EQ(id.substr(0, 4), "new-");
  auto points = store_->MetricPointsSince(kMetric, absl::InfinitePast());
  ASSERT_TRUE(points.ok());
  EXPECT_EQ(points->size(), 10u);
  for (const MetricPoint& p : *points) EXPECT_GE(p.time, cutoff);
  // Nothing left to prune; a bad limit is refused.
  EXPECT_EQ(*store_->PruneSamplesBefore(cutoff, 7), 0);
  EXPECT_EQ(store_->PruneSamplesBefore(cutoff, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fleetbench::storage
