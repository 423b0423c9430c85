// Tests of opening a SQLite store file and migrating its schema: fresh,
// older and newer files, a failing step, a file that is not a database.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/migrations.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

using ::testing::HasSubstr;

// SQLite keeps PRAGMA user_version as a 4-byte big-endian integer at offset
// 60 of the database header (sqlite.org/fileformat.html). The tests use the
// file itself because only the storage/sqlite_*.cc files include sqlite3.h.
// Valid once the store is closed: closing checkpoints the WAL into the file.
int ReadHeaderUserVersion(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(60);
  unsigned char b[4] = {0, 0, 0, 0};
  in.read(reinterpret_cast<char*>(b), 4);
  return static_cast<int>((uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) |
                          (uint32_t{b[2]} << 8) | uint32_t{b[3]});
}

void WriteHeaderUserVersion(const std::string& path, int version) {
  std::fstream io(path, std::ios::binary | std::ios::in | std::ios::out);
  io.seekp(60);
  const auto v = static_cast<uint32_t>(version);
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 8), static_cast<char>(v)};
  io.write(b, 4);
}

TEST_F(SqliteStoreTest, MigratesEmptyFileAndReopensIdempotently) {
  AddNodeAndRun("n1", "r1");
  Reopen();
  Reopen();
  auto nodes = store_->ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ(*store_->CountFactsVersions("n1"), 1);
  EXPECT_TRUE(store_->CheckIntegrity().ok());
  store_.reset();
  EXPECT_EQ(ReadHeaderUserVersion(path_), LatestSchemaVersion());
  EXPECT_FALSE(std::filesystem::exists(path_ + "-wal"));
}

TEST_F(SqliteStoreTest, MigratesAnOlderFileToANewerBuildKeepingData) {
  AddNodeAndRun("n1", "r1");
  store_.reset();
  // A later build: the real steps plus one more.
  std::vector<SchemaMigration> newer = SchemaMigrations();
  const int next = LatestSchemaVersion() + 1;
  newer.push_back({next, "test step", "CREATE TABLE test_extra (x INTEGER);"
                                      "INSERT INTO test_extra VALUES (1);"});
  SqliteOptions options;
  options.path = path_;
  {
    auto store = OpenSqliteStoreWithMigrations(options, newer);
    ASSERT_TRUE(store.ok()) << store.status();
    auto run = (*store)->GetRun("r1");
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(run->suite, "quick");
  }
  EXPECT_EQ(ReadHeaderUserVersion(path_), next);
  // Reopening with the newer list again applies nothing twice.
  ASSERT_TRUE(OpenSqliteStoreWithMigrations(options, newer).ok());
  // This build is now older than the file.
  auto old = OpenSqliteStore(options);
  EXPECT_EQ(old.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(SqliteStoreTest, UpgradesAVersionOneFileKeepingItsData) {
  store_.reset();
  std::filesystem::remove(path_);
  SqliteOptions options;
  options.path = path_;
  {
    // A file at version 1. Today's code only writes it through calls whose
    // SQL version 1 already supports: nodes (tasks gained columns later).
    auto v1 = OpenSqliteStoreWithMigrations(options, {SchemaMigrations()[0]});
    ASSERT_TRUE(v1.ok()) << v1.status();
    ASSERT_TRUE((*v1)->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
    ASSERT_TRUE((*v1)->UpsertNode(MakeNode("n1", "6.5", kT0)).ok());
  }
  ASSERT_EQ(ReadHeaderUserVersion(path_), 1);
  Reopen();
  store_.reset();
  EXPECT_EQ(ReadHeaderUserVersion(path_), LatestSchemaVersion());
  Reopen();
  auto nodes = store_->ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].facts.kernel(), "6.5");
  EXPECT_EQ((*nodes)[0].labels.at("region"), "eu-west-1");
  EXPECT_EQ(*store_->CountFactsVersions("n1"), 2);
  // The upgraded file takes what the newer schema added.
  AddNodeAndRun("n1", "r1");
  Store::ReportWrite report;
  report.samples = {MakeSample("s1", "r1", "n1", kMetric, 1.5, 1)};
  ASSERT_EQ(*store_->CommitReports({report}), 1);
  EXPECT_EQ(store_->ListTasks("r1")->size(), 1u);
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_F(SqliteStoreTest, UpgradesAVersionTwoFileKeepingItsData) {
  store_.reset();
  std::filesystem::remove(path_);
  SqliteOptions options;
  options.path = path_;
  {
    // A file at version 2 with nodes, a run, its task and samples: all that
    // version 2 stores (metric descriptors came in version 3).
    auto v2 = OpenSqliteStoreWithMigrations(
        options, {SchemaMigrations()[0], SchemaMigrations()[1]});
    ASSERT_TRUE(v2.ok()) << v2.status();
    ASSERT_TRUE((*v2)->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
    ASSERT_TRUE((*v2)->CreateRun(MakeRun("r1", kT0), {MakeTask("r1-n1", "r1", "n1", kT0)}).ok());
    Store::ReportWrite report;
    report.samples = {MakeSample("s1", "r1", "n1", kMetric, 1.5, 1),
                      MakeSample("s2", "r1", "n1", kMetric, 2.5, 2)};
    ASSERT_EQ(*(*v2)->CommitReports({report}), 2);
  }
  ASSERT_EQ(ReadHeaderUserVersion(path_), 2);
  Reopen();
  store_.reset();
  EXPECT_EQ(ReadHeaderUserVersion(path_), LatestSchemaVersion());
  Reopen();
  EXPECT_EQ(store_->ListNodes()->size(), 1u);
  EXPECT_EQ(store_->GetRun("r1")->suite, "quick");
  EXPECT_EQ(store_->ListTasks("r1")->size(), 1u);
  auto samples = store_->ListSamplesForRun("r1");
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_EQ((*samples)[1].value(), 2.5);
  EXPECT_EQ(store_->MetricPointTableSince(kMetric, absl::InfinitePast())->points.size(), 2u);
  // The samples' metric was never declared; the upgraded file takes its
  // declaration, and the old samples rank under it.
  EXPECT_EQ(store_->GetMetricDescriptor(kMetric).status().code(), absl::StatusCode::kNotFound);
  v1::MetricDescriptor d;
  d.set_name(kMetric);
  d.set_unit("tflops");
  d.set_direction(v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
  d.set_benchmark("gemm");
  ASSERT_TRUE(store_->UpsertMetricDescriptors({d}).ok());
  EXPECT_EQ(store_->GetMetricDescriptor(kMetric)->unit(), "tflops");
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_F(SqliteStoreTest, UpgradesAVersionThreeFileKeepingItsDataAndTakesPrices) {
  store_.reset();
  std::filesystem::remove(path_);
  SqliteOptions options;
  options.path = path_;
  {
    // A file at version 3: everything but the price catalog (version 4).
    auto v3 = OpenSqliteStoreWithMigrations(
        options, {SchemaMigrations()[0], SchemaMigrations()[1], SchemaMigrations()[2]});
    ASSERT_TRUE(v3.ok()) << v3.status();
    ASSERT_TRUE((*v3)->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
    ASSERT_TRUE((*v3)->CreateRun(MakeRun("r1", kT0), {MakeTask("r1-n1", "r1", "n1", kT0)}).ok());
    Store::ReportWrite report;
    report.samples = {MakeSample("s1", "r1", "n1", kMetric, 1.5, 1)};
    ASSERT_EQ(*(*v3)->CommitReports({report}), 1);
    // The catalog's table does not exist yet.
    EXPECT_FALSE((*v3)->ListPrices().ok());
  }
  ASSERT_EQ(ReadHeaderUserVersion(path_), 3);
  Reopen();
  store_.reset();
  EXPECT_EQ(ReadHeaderUserVersion(path_), LatestSchemaVersion());
  Reopen();
  EXPECT_EQ(store_->ListSamplesForRun("r1")->size(), 1u);
  auto empty = store_->ListPrices();
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->empty());
  v1::CatalogPrice p;
  p.set_provider("acme");
  p.set_region("us-east");
  p.set_instance_type("h100x8");
  p.set_price_per_hour(24.5);
  p.set_currency("USD");
  p.set_effective_from_unix_ms(absl::ToUnixMillis(kT0));
  ASSERT_TRUE(store_->ImportPrices({p}, kT0).ok());
  EXPECT_EQ(store_->ListPrices()->size(), 1u);
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_F(SqliteStoreTest, RefusesASchemaNewerThanThisBuild) {
  AddNodeAndRun("n1", "r1");
  store_.reset();
  ASSERT_FALSE(std::filesystem::exists(path_ + "-wal"));
  WriteHeaderUserVersion(path_, LatestSchemaVersion() + 7);
  SqliteOptions options;
  options.path = path_;
  auto store = OpenSqliteStore(options);
  ASSERT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition)
      << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr("newer"));
  EXPECT_THAT(store.status().message(),
              HasSubstr(absl::StrCat("schema version ", LatestSchemaVersion() + 7)));
  // Refused without writing anything.
  EXPECT_EQ(ReadHeaderUserVersion(path_), LatestSchemaVersion() + 7);
}

TEST_F(SqliteStoreTest, FailedMigrationStepRollsBackToThePreviousVersion) {
  AddNodeAndRun("n1", "r1");
  store_.reset();
  std::vector<SchemaMigration> broken = SchemaMigrations();
  broken.push_back({LatestSchemaVersion() + 1, "broken step",
                    "CREATE TABLE half_done (x INTEGER);"
                    "CREATE TABLE nodes (x INTEGER);"});  // nodes exists
  SqliteOptions options;
  options.path = path_;
  auto store = OpenSqliteStoreWithMigrations(options, broken);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr("broken step"));
  EXPECT_EQ(ReadHeaderUserVersion(path_), LatestSchemaVersion());
  // The step can be fixed and applied later: half_done was rolled back.
  std::vector<SchemaMigration> fixed = SchemaMigrations();
  fixed.push_back({LatestSchemaVersion() + 1, "fixed step",
                   "CREATE TABLE half_done (x INTEGER);"});
  EXPECT_TRUE(OpenSqliteStoreWithMigrations(options, fixed).ok());
}

TEST_F(SqliteStoreTest, RefusesAFileThatIsNotADatabase) {
  store_.reset();
  const std::string junk = dir_.File("junk.db");
  std::ofstream(junk) << std::string(4096, 'x');
  SqliteOptions options;
  options.path = junk;
  auto store = OpenSqliteStore(options);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
}

}  // namespace
}  // namespace fleetbench::storage
