// Damaged history files: an emptied file, pages overwritten on
// disk, a ranking chunk whose bytes changed. Each must be refused or fail
// loudly, never read as a smaller history.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "storage/migrations.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path, bool verify) {
  SqliteOptions options;
  options.path = path;
  options.verify_on_open = verify;
  return OpenSqliteStore(options);
}

TEST(StoreCorruptionTest, AnExistingEmptyFileIsRefusedNotTakenForANewHistory) {
  TempDir dir;
  const std::string path = dir.File("history.db");
  WriteAll(path, "");
  auto store = Open(path, /*verify=*/true);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("exists but is empty (0 bytes)"), std::string::npos)
      << store.status();
  // Nothing was written to it.
  EXPECT_EQ(std::filesystem::file_size(path), 0u);
  // A path with no file is a new history, as before.
  auto fresh = Open(dir.File("new.db"), /*verify=*/true);
  EXPECT_TRUE(fresh.ok()) << fresh.status();
}

// Three nodes' samples, enough for ranking chunks; `marker` is n2's only
// value, for finding its point in the file.
constexpr double kMarker = 4242.4242125;

void FillThreeNodes(const std::string& path) {
  auto store = Open(path, false);
  ASSERT_TRUE(store.ok()) << store.status();
  Store& s = **store;
  for (const char* node : {"n1", "n2", "n3"}) {
    ASSERT_TRUE(s.UpsertNode(MakeNode(node, "6.1", kT0)).ok());
  }
  ASSERT_TRUE(s.CreateRun(MakeRun("r1", kT0), {MakeTask("t1", "r1", "n1", kT0)}).ok());
  // Past one fold (65,536 points), so the points live in chunks.
  Store::ReportWrite w;
  for (int i = 0; i < 70'000; ++i) {
    const std::string node = i == 35'000 ? "n2" : i % 2 ? "n1" : "n3";
    const double value = node == "n2" ? kMarker : 1.0 + i % 7;
    w.samples.push_back(MakeSample(absl::StrFormat("S%08d", i), "r1", node, kMetric, value,
                                   absl::ToUnixMillis(kT0) + i));
  }
  auto stored = s.CommitReports({w});
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(*stored, 70'000);
  auto table = s.MetricPointTableSince(kMetric, absl::InfinitePast());
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->nodes.size(), 3u);
}

TEST(StoreCorruptionTest, OverwrittenPagesAreRefusedAtOpenByQuickCheck) {
  TempDir dir;
  const std::string path = dir.File("history.db");
  ASSERT_NO_FATAL_FAILURE(FillThreeNodes(path));
  // Two pages of b-tree in the middle of the file overwritten, as a bad
  // sector or a stray write leaves them.
  std::string bytes = ReadAll(path);
  constexpr size_t kPage = 8192;
  const size_t pages = bytes.size() / kPage;
  ASSERT_GT(pages, 8u);
  for (size_t page : {size_t{1}, pages / 2}) {
    for (size_t i = 0; i < kPage; ++i) bytes[page * kPage + i] = static_cast<char>(0xA5 ^ i);
  }
  WriteAll(path, bytes);
  auto store = Open(path, /*verify=*/true);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
  EXPECT_NE(store.status().message().find("is corrupt"), std::string::npos) << store.status();
  EXPECT_NE(store.status().message().find(".recover"), std::string::npos) << store.status();
}

// Overwrites `pages` pages of b-tree in the file, as a bad sector or a
// stray write leaves them; `at` picks each page (0..1 of the file).
void DamagePages(const std::string& path, std::vector<double> at) {
  std::string bytes = ReadAll(path);
  constexpr size_t kPage = 8192;
  const size_t pages = bytes.size() / kPage;
  ASSERT_GT(pages, 8u);
  for (double where : at) {
    const size_t page = std::max<size_t>(1, static_cast<size_t>(where * pages));
    for (size_t i = 0; i < kPage; ++i) bytes[page * kPage + i] = static_cast<char>(0xA5 ^ i);
  }
  WriteAll(path, bytes);
}

// The background check's answer, when it comes.
struct Verified {
  absl::Notification done;
  absl::Status status;
  absl::Duration took;
};

absl::StatusOr<std::unique_ptr<Store>> OpenCheckedBeside(const std::string& path,
                                                         Verified& verified) {
  SqliteOptions options;
  options.path = path;
  options.verify_on_open = true;
  options.verify_inline_max_bytes = 0;  // every file counts as large
  options.on_verified = [&verified](const absl::Status& status, absl::Duration took) {
    verified.status = status;
    verified.took = took;
    verified.done.Notify();
  };
  return OpenSqliteStore(options);
}

TEST(StoreCorruptionTest, ALargeHistoryIsCheckedBesideServingAndDamageRefusesLaterWrites) {
  TempDir dir;
  const std::string path = dir.File("history.db");
  ASSERT_NO_FATAL_FAILURE(FillThreeNodes(path));
  ASSERT_NO_FATAL_FAILURE(DamagePages(path, {0.5}));
  // Opened at once (a 16.9 GB file would be read for minutes first) ...
  Verified verified;
  auto store = OpenCheckedBeside(path, verified);
  ASSERT_TRUE(store.ok()) << store.status();
  // ... and the check that ends beside it finds the damage.
  verified.done.WaitForNotification();
  EXPECT_EQ(verified.status.code(), absl::StatusCode::kDataLoss) << verified.status;
  EXPECT_NE(verified.status.message().find("is corrupt"), std::string::npos) << verified.status;
  // From then on nothing is written to it, through any write path, and
  // each says why; reads go on.
  Store& s = **store;
  Store::ReportWrite w;
  w.samples.push_back(MakeSample("late", "r1", "n1", kMetric, 1, absl::ToUnixMillis(kT0)));
  auto committed = s.CommitReports({w});
  ASSERT_FALSE(committed.ok());
  EXPECT_EQ(committed.status().code(), absl::StatusCode::kDataLoss) << committed.status();
  EXPECT_NE(committed.status().message().find("is corrupt"), std::string::npos);
  EXPECT_EQ(s.TouchNode("n1", kT0 + absl::Hours(1)).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.CreateRun(MakeRun("r2", kT0), {}).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.PutSetting("k", "v").code(), absl::StatusCode::kDataLoss);
  auto nodes = s.ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(nodes->size(), 3u);
}

TEST(StoreCorruptionTest, AnIntactLargeHistoryIsCheckedBesideServingAndStaysWritable) {
  TempDir dir;
  const std::string path = dir.File("history.db");
  ASSERT_NO_FATAL_FAILURE(FillThreeNodes(path));
  Verified verified;
  auto store = OpenCheckedBeside(path, verified);
  ASSERT_TRUE(store.ok()) << store.status();
  // Written to while the check reads its snapshot.
  EXPECT_TRUE((*store)->TouchNode("n1", kT0 + absl::Hours(1)).ok());
  verified.done.WaitForNotification();
  EXPECT_TRUE(verified.status.ok()) << verified.status;
  Store::ReportWrite w;
  w.samples.push_back(MakeSample("late", "r1", "n1", kMetric, 1, absl::ToUnixMillis(kT0)));
  auto committed = (*store)->CommitReports({w});
  ASSERT_TRUE(committed.ok()) << committed.status();
  EXPECT_EQ(*committed, 1);
  // A store closed while its check runs stops the check and says nothing.
  Verified unfinished;
  auto again = OpenCheckedBeside(dir.File("other.db"), unfinished);
  ASSERT_TRUE(again.ok()) << again.status();
  again->reset();
  store->reset();
}

TEST(StoreCorruptionTest, ALargeHistoryWithASchemaStepPendingIsCheckedBeforeItIsMigrated) {
  // A schema step rewrites tables: a damaged file must not be migrated, so
  // the check runs first whatever the file's size.
  TempDir dir;
  const std::string path = dir.File("history.db");
  {
    const std::vector<SchemaMigration> v10(SchemaMigrations().begin(),
                                           SchemaMigrations().begin() + 10);
    auto old = OpenSqliteStoreWithMigrations({.path = path}, v10);
    ASSERT_TRUE(old.ok()) << old.status();
    ASSERT_TRUE((*old)->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
    ASSERT_TRUE((*old)->CreateRun(MakeRun("r1", kT0), {}).ok());
    Store::ReportWrite w;
    for (int i = 0; i < 20'000; ++i) {
      w.samples.push_back(MakeSample(absl::StrFormat("S%08d", i), "r1", "n1", kMetric, i,
                                     absl::ToUnixMillis(kT0) + i));
    }
    ASSERT_TRUE((*old)->CommitReports({w}).ok());
  }
  ASSERT_NO_FATAL_FAILURE(DamagePages(path, {0.5}));
  Verified verified;
  auto store = OpenCheckedBeside(path, verified);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
  EXPECT_NE(store.status().message().find("is corrupt"), std::string::npos) << store.status();
  EXPECT_FALSE(verified.done.HasBeenNotified());
}

TEST(StoreCorruptionTest, ARankingChunkWithADamagedPointFailsTheScanInsteadOfDroppingANode) {
  TempDir dir;
  const std::string path = dir.File("history.db");
  ASSERT_NO_FATAL_FAILURE(FillThreeNodes(path));
  // n2's point: its metric id (the 8 bytes 24 before its value) changed.
  // Freed pages may hold stale copies of the point; all are changed.
  std::string bytes = ReadAll(path);
  char marker[8];
  std::memcpy(marker, &kMarker, sizeof marker);
  int changed = 0;
  for (size_t at = bytes.find(std::string(marker, 8)); at != std::string::npos;
       at = bytes.find(std::string(marker, 8), at + 8)) {
    if (at < 24) continue;
    // Only packed points (a small metric id 24 bytes before the value):
    // the day summaries hold the value too, inside a record whose bytes
    // around it are not a point's.
    int64_t metric_id = 0;
    std::memcpy(&metric_id, bytes.data() + at - 24, sizeof metric_id);
    if (metric_id <= 0 || metric_id > 1000) continue;
    bytes[at - 24] = static_cast<char>(bytes[at - 24] + 100);
    ++changed;
  }
  ASSERT_GT(changed, 0);
  WriteAll(path, bytes);
  // The b-trees are intact: the file opens.
  auto store = Open(path, /*verify=*/true);
  ASSERT_TRUE(store.ok()) << store.status();
  auto table = (*store)->MetricPointTableSince(kMetric, absl::InfinitePast());
  ASSERT_FALSE(table.ok()) << "ranked on " << table->nodes.size() << " nodes";
  EXPECT_EQ(table.status().code(), absl::StatusCode::kDataLoss) << table.status();
  EXPECT_NE(table.status().message().find("damaged"), std::string::npos) << table.status();
}

}  // namespace
}  // namespace fleetbench::storage
