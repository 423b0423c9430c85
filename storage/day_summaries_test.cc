// Tests of the day summaries (Store::DaySummariesSince, docs/storage.md):
// exactly the sketch of every stored value per node and UTC day, whatever
// stage of folding their points are in, after late and resent reports,
// after retention, and when a migration builds them from an older history.
#include <cstdint>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/value_sketch.h"
#include "fleetbench/v1/result.pb.h"
#include "gtest/gtest.h"
#include "storage/migrations.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

const std::vector<std::string> kNodes = {"n0", "n1", "n2", "n3"};
const std::vector<std::string> kMetrics = {kMetric, "stream.triad.GBps"};

struct Expected {
  ValueSketch values;
  int64_t first_ms = INT64_MAX;
  int64_t last_ms = INT64_MIN;
};
using ByNodeDay = std::map<std::pair<std::string, int64_t>, Expected>;

ByNodeDay ExpectedOf(const std::vector<v1::Sample>& stored, const std::string& metric,
                     int64_t first_day) {
  ByNodeDay out;
  for (const v1::Sample& s : stored) {
    const int64_t day = UtcDayOf(s.time_unix_ms());
    if (s.metric() != metric || day < first_day) continue;
    Expected& e = out[{s.node(), day}];
    e.values.Add(s.value());
    e.first_ms = std::min(e.first_ms, s.time_unix_ms());
    e.last_ms = std::max(e.last_ms, s.time_unix_ms());
  }
  return out;
}

void ExpectSummaries(Store& store, const std::vector<v1::Sample>& stored,
                     const std::string& metric, int64_t first_day) {
  auto table = store.DaySummariesSince(metric, first_day);
  ASSERT_TRUE(table.ok()) << table.status();
  const ByNodeDay want = ExpectedOf(stored, metric, first_day);
  ByNodeDay got;
  for (const DaySummary& d : table->days) {
    auto [it, added] = got.try_emplace({table->nodes.at(d.node), d.day});
    EXPECT_TRUE(added) << "two rows for " << it->first.first << " day " << d.day;
    it->second.values = d.values;
    it->second.first_ms = absl::ToUnixMillis(d.first);
    it->second.last_ms = absl::ToUnixMillis(d.last);
  }
  ASSERT_EQ(got.size(), want.size()) << metric << " from day " << first_day;
  for (const auto& [key, w] : want) {
    auto g = got.find(key);
    ASSERT_NE(g, got.end()) << key.first << " day " << key.second;
    // The sketch of the same values is the same sketch, bucket for bucket.
    EXPECT_EQ(g->second.values.Encode(), w.values.Encode()) << key.first << " day " << key.second;
    EXPECT_EQ(g->second.values.count(), w.values.count());
    EXPECT_EQ(g->second.first_ms, w.first_ms);
    EXPECT_EQ(g->second.last_ms, w.last_ms);
  }
}

// Samples over five UTC days: many small commits (folded by row count),
// stragglers from earlier days, resent ids, and one commit big enough to
// fold by point count, followed by a few that stay in recent_points.
class DaySummariesTest : public StoreContractTest {
 protected:
  void Fill(Store& store) {
    for (const std::string& node : kNodes) {
      ASSERT_TRUE(store.UpsertNode(MakeNode(node, "6.1", kT0)).ok());
    }
    for (int r = 0; r < 5; ++r) {
      ASSERT_TRUE(store.CreateRun(MakeRun(absl::StrCat("r", r), kT0), {}).ok());
    }
    const int64_t t0 = absl::ToUnixMillis(kT0);
    auto make = [&](int metric, int node, int run, int64_t time_ms) {
      const int id = next_id_++;
      return MakeSample(absl::StrFormat("S%08d", id), absl::StrCat("r", run), kNodes[node],
                        kMetrics[metric], 100 + (id % 37) * 0.25, time_ms);
    };
    auto commit = [&](Store::ReportWrite report) {
      auto added = store.CommitReports({report});
      ASSERT_TRUE(added.ok()) << added.status();
      for (const v1::Sample& s : report.samples) {
        if (seen_.insert(s.id()).second) stored_.push_back(s);
      }
    };
    for (int c = 0; c < 600; ++c) {
      Store::ReportWrite report;
      for (int i = 0; i < 1 + c % 5; ++i) {
        // Forward through the days, every other sample a straggler a day
        // or two late.
        const int64_t t = t0 + c * (5 * kMillisPerDay / 600) - (i % 2 ? (1 + i % 3) * kMillisPerDay / 2 : 0);
        report.samples.push_back(make((c + i) % 2, (c * 7 + i) % 4, c % 5, t));
      }
      if (c % 50 == 49) report.samples.push_back(stored_[static_cast<size_t>(c)]);
      ASSERT_NO_FATAL_FAILURE(commit(std::move(report)));
    }
    Store::ReportWrite big;
    for (int i = 0; i < 70'000; ++i) {
      big.samples.push_back(make(i % 2, i % 4, i % 5, t0 + (i % 5) * kMillisPerDay + i));
    }
    ASSERT_NO_FATAL_FAILURE(commit(std::move(big)));
    for (int c = 0; c < 3; ++c) {
      Store::ReportWrite tail;
      tail.samples.push_back(make(c % 2, c, c, t0 + 4 * kMillisPerDay + c));
      ASSERT_NO_FATAL_FAILURE(commit(std::move(tail)));
    }
  }

  void CheckAll(Store& store) {
    const int64_t day0 = UtcDayOf(absl::ToUnixMillis(kT0));
    for (const std::string& metric : kMetrics) {
      for (int64_t first_day : {int64_t{0}, day0 + 2, day0 + 9}) {
        ASSERT_NO_FATAL_FAILURE(ExpectSummaries(store, stored_, metric, first_day));
      }
    }
    auto none = store.DaySummariesSince("no.such.metric", 0);
    ASSERT_TRUE(none.ok()) << none.status();
    EXPECT_TRUE(none->days.empty());
  }

  std::vector<v1::Sample> stored_;
  std::set<std::string> seen_;
  int next_id_ = 0;
};
FLEETBENCH_STORE_CONTRACT(DaySummariesTest);

TEST(UtcDayTest, DaysStartAtMidnightUtcOnBothSidesOfTheEpoch) {
  EXPECT_EQ(UtcDayOf(0), 0);
  EXPECT_EQ(UtcDayOf(kMillisPerDay - 1), 0);
  EXPECT_EQ(UtcDayOf(kMillisPerDay), 1);
  EXPECT_EQ(UtcDayOf(-1), -1);
  EXPECT_EQ(UtcDayOf(-kMillisPerDay), -1);
  EXPECT_EQ(UtcDayOf(-kMillisPerDay - 1), -2);
}

TEST_P(DaySummariesTest, AreTheSketchOfEveryStoredValueAcrossFoldsAndReopens) {
  ASSERT_NO_FATAL_FAILURE(Fill(*store_));
  ASSERT_GT(stored_.size(), 70'000u);
  ASSERT_NO_FATAL_FAILURE(CheckAll(*store_));
  Reopen();
  ASSERT_NO_FATAL_FAILURE(CheckAll(*store_));
  EXPECT_TRUE(store_->CheckIntegrity().ok()) << store_->CheckIntegrity();
}

TEST_P(DaySummariesTest, OutliveTheSamplesThatRetentionRemoves) {
  ASSERT_NO_FATAL_FAILURE(Fill(*store_));
  // Everything goes, a bounded batch at a time, recent points included.
  int64_t removed = 0;
  for (int calls = 0; calls < 1000; ++calls) {
    auto n = store_->PruneSamplesBefore(absl::InfiniteFuture() - absl::Hours(1), 20'000);
    ASSERT_TRUE(n.ok()) << n.status();
    if (*n == 0) break;
    removed += *n;
  }
  EXPECT_EQ(removed, static_cast<int64_t>(stored_.size()));
  EXPECT_EQ(*store_->CountSamples(), 0);
  ASSERT_NO_FATAL_FAILURE(CheckAll(*store_));
  Reopen();
  ASSERT_NO_FATAL_FAILURE(CheckAll(*store_));
}

// SQLite's own: a file of schema 9, from before the summaries, migrated.
class SqliteDaySummariesTest : public DaySummariesTest {};
INSTANTIATE_TEST_SUITE_P(Sqlite, SqliteDaySummariesTest,
                         ::testing::Values(StoreBackends().front()),
                         [](const auto& info) { return info.param.name; });

TEST_P(SqliteDaySummariesTest, AMigrationBuildsThemOnceFromAnOlderHistory) {
  ASSERT_EQ(GetParam().name, kSqliteBackend);
  store_.reset();
  const std::string path = dir_.File("v9.db");
  const std::vector<SchemaMigration> v9(SchemaMigrations().begin(),
                                        SchemaMigrations().begin() + 9);
  ASSERT_EQ(v9.back().version, 9);
  {
    auto old = OpenSqliteStoreWithMigrations({.path = path}, v9);
    ASSERT_TRUE(old.ok()) << old.status();
    ASSERT_NO_FATAL_FAILURE(Fill(**old));
    // The old schema has no summaries to read.
    EXPECT_EQ((*old)->DaySummariesSince(kMetric, 0).status().code(),
              absl::StatusCode::kFailedPrecondition);
  }
  for (int open = 0; open < 2; ++open) {  // built by the first, kept by the second
    auto store = OpenSqliteStore({.path = path});
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_NO_FATAL_FAILURE(CheckAll(**store));
  }
}

}  // namespace
}  // namespace fleetbench::storage
