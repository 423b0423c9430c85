// Tests of the compact samples layout (schema 11, docs/storage.md, Samples):
// ULID ids kept as 16 bytes and other ids as text, both read back as
// written and paged in one order; what a plugin repeats stored once, so an
// ingest-shaped history takes at most about half the bytes per sample of
// the old layout, also when the params hold per-run statistics (schema 12);
// params read back as written wherever they are kept; and a version 10
// history moved forward with every field.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/ulid.h"
#include "fleetbench/v1/result.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/migrations.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

using ::testing::Pair;
using ::testing::UnorderedElementsAre;

// A sample as the gemm plugin sends one: a ULID, a few params.
v1::Sample PluginSample(const std::string& run_id, const std::string& node, int i,
                        absl::Time when) {
  v1::Sample s = MakeSample(NewUlid(when), run_id, node, kMetric, 1.0 + i % 7,
                            absl::ToUnixMillis(when));
  (*s.mutable_params())["m"] = "4096";
  (*s.mutable_params())["n"] = "4096";
  (*s.mutable_params())["k"] = "4096";
  (*s.mutable_params())["dtype"] = "fp32";
  (*s.mutable_params())["threads"] = "16";
  return s;
}

void ExpectSameSamples(const std::vector<v1::Sample>& got,
                       const std::vector<v1::Sample>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].id(), want[i].id()) << i;
    EXPECT_EQ(got[i].run_id(), want[i].run_id()) << i;
    EXPECT_EQ(got[i].node(), want[i].node()) << i;
    EXPECT_EQ(got[i].benchmark(), want[i].benchmark()) << i;
    EXPECT_EQ(got[i].metric(), want[i].metric()) << i;
    EXPECT_EQ(got[i].unit(), want[i].unit()) << i;
    EXPECT_EQ(got[i].time_unix_ms(), want[i].time_unix_ms()) << i;
    if (std::isnan(want[i].value())) {
      EXPECT_TRUE(std::isnan(got[i].value())) << i;
    } else {
      EXPECT_EQ(got[i].value(), want[i].value()) << i;
    }
    std::map<std::string, std::string> got_params(got[i].params().begin(),
                                                  got[i].params().end());
    std::map<std::string, std::string> want_params(want[i].params().begin(),
                                                   want[i].params().end());
    EXPECT_EQ(got_params, want_params) << i;
  }
}

TEST_P(StoreContractTest, UlidAndOtherIdsReadBackAsWrittenAndPageInOneOrder) {
  AddNodeAndRun("n1", "r1");
  Store::ReportWrite report;
  // Same time and key for all: only the id orders them, text before ULIDs.
  const int64_t t = ToUnixMillis(kT0);
  const std::vector<std::string> ids = {"a", "b-not-a-ulid", "8ZZZZZZZZZZZZZZZZZZZZZZZZZ",
                                        NewUlid(kT0), NewUlid(kT0), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"};
  for (const std::string& id : ids) report.samples.push_back(MakeSample(id, "r1", "n1", kMetric, 1, t));
  ASSERT_EQ(*store_->CommitReports({report}), 6);
  // Resent unchanged, ULIDs included: nothing new.
  ASSERT_EQ(*store_->CommitReports({report}), 0);
  Reopen();
  auto whole = store_->ListSamplesForRun("r1");
  ASSERT_TRUE(whole.ok()) << whole.status();
  std::vector<std::string> read;
  for (const v1::Sample& s : *whole) read.push_back(s.id());
  EXPECT_THAT(read, ::testing::UnorderedElementsAreArray(ids));
  if (GetParam().name == kSqliteBackend) {
    // SQLite keeps a ULID as its 16 bytes, which sort after any text: TEXT
    // ids in text order, then ULIDs in theirs ("8ZZ..." is 130 bits: text).
    // Another backend may break the tie in its own order; pages must
    // follow it either way (below).
    EXPECT_EQ(read, (std::vector<std::string>{"8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "a", "b-not-a-ulid",
                                              ids[3], ids[4], "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"}));
  }
  std::vector<std::string> paged;
  std::optional<RunSampleCursor> after;
  while (true) {
    std::vector<RunSampleCursor> cursors;
    auto page = store_->ListSamplesForRunPage("r1", 2, after, &cursors);
    ASSERT_TRUE(page.ok()) << page.status();
    if (page->empty()) break;
    for (const v1::Sample& s : *page) paged.push_back(s.id());
    after = cursors.back();
  }
  EXPECT_EQ(paged, read);
  auto history = store_->History("n1", kMetric, 0);
  ASSERT_TRUE(history.ok()) << history.status();
  EXPECT_EQ(history->size(), 6u);
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

// A sample as the real gemm plugin sends one (the demo's, 2026-12-04): what
// it measured in text, its shape in numbers, and the spread of the timed
// repetitions behind the value, new in every sample.
v1::Sample PluginSampleWithStatistics(const std::string& run_id, const std::string& node,
                                      int i, absl::Time when) {
  v1::Sample s = PluginSample(run_id, node, i, when);
  auto& p = *s.mutable_params();
  p["blas"] = "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64";
  p["method"] = "openblas cblas_?gemm, median of timed runs after warm-up";
  p["transa"] = "N";
  p["transb"] = "N";
  p["size"] = "4096";
  p["warmup_runs"] = "1";
  const double v = 0.18 + 0.0001 * (i % 997);
  p["runs"] = absl::StrCat(6 + i % 7);
  p["min_tflops"] = absl::StrCat(v - 0.0123);
  p["max_tflops"] = absl::StrCat(v + 0.0071);
  p["p10_tflops"] = absl::StrCat(v - 0.0091);
  p["p90_tflops"] = absl::StrCat(v + 0.0043);
  p["spread"] = absl::StrCat(0.01 + 0.00001 * (i % 4099));
  return s;
}

using SampleMaker = v1::Sample (*)(const std::string&, const std::string&, int, absl::Time);

// 100 nodes x 200 runs of one metric, as a fleet's nightly gemm sends them;
// returns the first run's samples.
std::vector<v1::Sample> FillFleet(Store& store, SampleMaker make = PluginSample) {
  constexpr int kNodes = 100;
  constexpr int kRuns = 200;
  for (int n = 0; n < kNodes; ++n) {
    EXPECT_TRUE(store.UpsertNode(MakeNode(absl::StrCat("node-", n), "6.1", kT0)).ok());
  }
  std::vector<v1::Sample> first_run;
  for (int r = 0; r < kRuns; ++r) {
    const std::string run_id = NewUlid(kT0 + absl::Minutes(r));
    EXPECT_TRUE(store.CreateRun(MakeRun(run_id, kT0 + absl::Minutes(r)), {}).ok());
    Store::ReportWrite report;
    for (int n = 0; n < kNodes; ++n) {
      report.samples.push_back(make(run_id, absl::StrCat("node-", n), r * kNodes + n,
                                    kT0 + absl::Minutes(r) + absl::Milliseconds(n)));
    }
    if (r == 0) first_run = report.samples;
    EXPECT_EQ(*store.CommitReports({report}), kNodes);
  }
  return first_run;
}

TEST_F(SqliteStoreTest, APluginsRepeatedFieldsAreStoredOnceInHalfTheBytes) {
  // The same history in the layout of version 10 and in the compact one;
  // file sizes after closing (the WAL checkpointed into the file), ranking
  // points and day summaries included in both.
  const std::string old_path = dir_.File("v10.db");
  {
    const std::vector<SchemaMigration> v10(SchemaMigrations().begin(),
                                           SchemaMigrations().begin() + 10);
    auto old = OpenSqliteStoreWithMigrations({.path = old_path}, v10);
    ASSERT_TRUE(old.ok()) << old.status();
    FillFleet(**old);
  }
  const std::vector<v1::Sample> first_run = FillFleet(*store_);
  store_.reset();
  const double old_bytes = static_cast<double>(std::filesystem::file_size(old_path));
  const double new_bytes = static_cast<double>(std::filesystem::file_size(path_));
  std::printf("bytes per sample: version 10 %.1f, compact %.1f\n", old_bytes / 20000,
              new_bytes / 20000);
  EXPECT_LE(new_bytes, 0.5 * old_bytes);
  Reopen();
  auto read = store_->ListSamplesForRun(first_run[0].run_id());
  ASSERT_TRUE(read.ok()) << read.status();
  ExpectSameSamples(*read, first_run);
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_F(SqliteStoreTest, PerRunStatisticsStayWithTheSampleInAThirdOfTheBytes) {
  // Before schema 12 such params made a kind per sample, stored in the kind
  // and again in its UNIQUE index; version 10 stored them inline once, the
  // smaller of the two, so it is the bar.
  const std::string old_path = dir_.File("v10.db");
  {
    const std::vector<SchemaMigration> v10(SchemaMigrations().begin(),
                                           SchemaMigrations().begin() + 10);
    auto old = OpenSqliteStoreWithMigrations({.path = old_path}, v10);
    ASSERT_TRUE(old.ok()) << old.status();
    FillFleet(**old, PluginSampleWithStatistics);
  }
  const std::vector<v1::Sample> first_run = FillFleet(*store_, PluginSampleWithStatistics);
  store_.reset();
  const double old_bytes = static_cast<double>(std::filesystem::file_size(old_path));
  const double new_bytes = static_cast<double>(std::filesystem::file_size(path_));
  std::printf("bytes per sample with per-run statistics: version 10 %.1f, compact %.1f\n",
              old_bytes / 20000, new_bytes / 20000);
  EXPECT_LE(new_bytes, old_bytes / 3);
  Reopen();
  auto read = store_->ListSamplesForRun(first_run[0].run_id());
  ASSERT_TRUE(read.ok()) << read.status();
  ExpectSameSamples(*read, first_run);
  auto history = store_->History("node-7", kMetric, 3);
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->size(), 3u);
  EXPECT_EQ(history->front().params_size(), first_run[7].params_size());
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_P(StoreContractTest, ParamsThatOnlyLookLikeNumbersReadBackAsWritten) {
  // Where a value is kept must never change what is read back: numbers in
  // every spelling, text that is almost a number, keys with the separator.
  AddNodeAndRun("n1", "r1");
  const std::vector<std::map<std::string, std::string>> params = {
      {{"a", "12"}, {"b", "-1e-05"}, {"c", "+.5"}, {"d", "007"}, {"e", "1E+300"}},
      {{"a", "12"}, {"b", "nan"}, {"c", "inf"}, {"d", "0x10"}, {"e", ""}},
      {{"a", "1,2"}, {"b", "1.2.3"}, {"c", "--"}, {"d", "e"}, {"e", " 1"}},
      {{"a,b", "3"}, {"a", "4"}, {",", "5"}, {"x", std::string(33, '1')}, {"y", std::string(32, '9')}},
      {{"only", "text"}},
      {{"only", "7"}},
      {},
      // One kind: its first sample's numbers are the default, the others
      // store what differs (nothing, one field, all).
      {{"t", "x"}, {"a", "1"}, {"b", "2"}, {"c", "3"}},
      {{"t", "x"}, {"a", "1"}, {"b", "2"}, {"c", "3"}},
      {{"t", "x"}, {"a", "1"}, {"b", "20"}, {"c", "3"}},
      {{"t", "x"}, {"a", "10"}, {"b", "20"}, {"c", "30"}},
      {{"t", "x"}, {"a", "1"}, {"b", "2"}, {"c", "3"}},
  };
  Store::ReportWrite report;
  for (size_t i = 0; i < params.size(); ++i) {
    v1::Sample s = MakeSample(NewUlid(kT0), "r1", "n1", kMetric, static_cast<double>(i),
                              ToUnixMillis(kT0) + static_cast<int64_t>(i));
    for (const auto& [k, v] : params[i]) (*s.mutable_params())[k] = v;
    report.samples.push_back(s);
  }
  ASSERT_EQ(*store_->CommitReports({report}), static_cast<int>(params.size()));
  Reopen();
  auto read = store_->ListSamplesForRun("r1");
  ASSERT_TRUE(read.ok()) << read.status();
  ExpectSameSamples(*read, report.samples);
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_P(StoreContractTest, KindsPastTheCacheAreFoundAgainInTheTable) {
  // A plugin whose text params change with every sample makes a kind per
  // sample: more than the store caches (8192), so later samples of early
  // kinds are looked up in sample_kinds again and must name the same rows.
  AddNodeAndRun("n1", "r1");
  std::vector<v1::Sample> written;
  for (int i = 0; i < 9000; ++i) {
    v1::Sample s = MakeSample(absl::StrCat("s", i), "r1", "n1", kMetric, i, ToUnixMillis(kT0) + i);
    (*s.mutable_params())["build"] = absl::StrCat("b", i % 8500);  // 8500 kinds
    written.push_back(s);
  }
  Store::ReportWrite report;
  report.samples = written;
  ASSERT_EQ(*store_->CommitReports({report}), 9000);
  auto read = store_->ListSamplesForRun("r1");
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 9000u);
  for (const v1::Sample& s : *read) {
    int i = 0;
    ASSERT_TRUE(absl::SimpleAtoi(s.id().substr(1), &i)) << s.id();
    EXPECT_EQ(s.params().at("build"), absl::StrCat("b", i % 8500)) << s.id();
  }
}

TEST_F(SqliteStoreTest, AVersionTenHistoryMovesToTheCompactLayoutWithEveryField) {
  store_.reset();
  std::filesystem::remove(path_);
  const std::vector<SchemaMigration> v10(SchemaMigrations().begin(),
                                         SchemaMigrations().begin() + 10);
  ASSERT_EQ(v10.back().version, 10);
  std::vector<v1::Sample> written;
  {
    // Written by the ingest path in the layout of version 10 (the store
    // writes the layout its file has).
    auto old = OpenSqliteStoreWithMigrations({.path = path_}, v10);
    ASSERT_TRUE(old.ok()) << old.status();
    ASSERT_TRUE((*old)->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
    ASSERT_TRUE((*old)->UpsertNode(MakeNode("n2", "6.1", kT0)).ok());
    ASSERT_TRUE((*old)->CreateRun(MakeRun("r1", kT0), {}).ok());
    for (int i = 0; i < 40; ++i) {
      v1::Sample s = i % 4 == 0 ? MakeSample(absl::StrCat("text-", i), "r1", i % 2 ? "n1" : "n2",
                                             kMetric, i, ToUnixMillis(kT0) + i)
                                : PluginSample("r1", i % 2 ? "n1" : "n2", i, kT0 + absl::Milliseconds(i));
      if (i % 5 == 0) (*s.mutable_params())["size"] = absl::StrCat(i);  // another kind
      if (i % 3 == 0) s.set_unit("GBps");
      if (i == 7) s.set_value(std::nan(""));
      if (i == 9) s.set_benchmark("mem");
      written.push_back(s);
    }
    Store::ReportWrite report;
    report.samples = written;
    ASSERT_EQ(*(*old)->CommitReports({report}), 40);
  }
  Reopen();
  EXPECT_TRUE(store_->CheckIntegrity().ok());
  auto read = store_->ListSamplesForRun("r1");
  ASSERT_TRUE(read.ok()) << read.status();
  // The store's order: node, metric, time, id.
  std::vector<v1::Sample> want = written;
  std::stable_sort(want.begin(), want.end(), [](const v1::Sample& a, const v1::Sample& b) {
    if (a.node() != b.node()) return a.node() == "n1";  // n1 was upserted first
    return a.time_unix_ms() < b.time_unix_ms();
  });
  ExpectSameSamples(*read, want);
  // A moved sample resent is still recognised.
  Store::ReportWrite again;
  again.samples = written;
  EXPECT_EQ(*store_->CommitReports({again}), 0);
  EXPECT_EQ(*store_->CountSamples(), 40);
  EXPECT_EQ(store_->History("n1", kMetric, 5)->size(), 5u);
}

}  // namespace
}  // namespace fleetbench::storage
