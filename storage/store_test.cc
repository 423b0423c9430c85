// Tests of the SQLite store against real files: schema migrations, nodes and
// facts history, runs and tasks, report ingestion and the read paths.
#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <algorithm>
#include <set>
#include <tuple>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "fleetbench/v1/facts.pb.h"
#include "fleetbench/v1/result.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/migrations.h"
#include "storage/store.h"

namespace fleetbench::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "/fleetbench_storage_XXXXXX";
    EXPECT_NE(mkdtemp(pattern.data()), nullptr) << pattern;
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// SQLite keeps PRAGMA user_version as a 4-byte big-endian integer at offset
// 60 of the database header (sqlite.org/fileformat.html). The tests use the
// file itself because only sqlite_store.cc may include sqlite3.h. Valid once
// the store is closed: closing checkpoints the WAL into the file.
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

v1::Sample MakeSample(const std::string& id, const std::string& run_id,
                      const std::string& node, const std::string& metric,
                      double value, int64_t time_ms) {
  v1::Sample s;
  s.set_id(id);
  s.set_run_id(run_id);
  s.set_node(node);
  s.set_benchmark("gemm");
  s.set_metric(metric);
  s.set_value(value);
  s.set_unit("tflops");
  s.set_time_unix_ms(time_ms);
  return s;
}

NodeRecord MakeNode(const std::string& name, const std::string& kernel,
                    absl::Time seen) {
  NodeRecord node;
  node.name = name;
  node.labels = {{"instance_type", "c7i.large"}, {"region", "eu-west-1"}};
  node.facts.set_hostname(name);
  node.facts.set_kernel(kernel);
  node.facts.mutable_cpu()->set_model("Xeon");
  node.facts.mutable_cpu()->add_flags_of_interest("avx2");
  node.agent_version = "0.1.0";
  node.first_seen = seen;
  node.last_seen = seen;
  return node;
}

RunRecord MakeRun(const std::string& run_id, absl::Time created) {
  RunRecord run;
  run.run_id = run_id;
  run.state = "queued";
  run.created = created;
  run.finished = absl::InfinitePast();
  v1::BenchmarkSpec& gemm = run.benchmarks.emplace_back();
  gemm.set_name("gemm");
  (*gemm.mutable_params())["size"] = "4096";
  run.benchmarks.emplace_back().set_name("stream");
  run.max_parallel = 2;
  run.suite = "quick";
  return run;
}

TaskRecord MakeTask(const std::string& task_id, const std::string& run_id,
                    const std::string& node, absl::Time updated) {
  TaskRecord task;
  task.task_id = task_id;
  task.run_id = run_id;
  task.node = node;
  task.state = v1::TASK_STATE_QUEUED;
  task.updated = updated;
  return task;
}

const absl::Time kT0 = absl::FromUnixMillis(1'700'000'000'000);
constexpr char kMetric[] = "gemm.cpu.fp32.tflops";

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("history.db");
    Reopen();
  }
  void Reopen() {
    store_.reset();
    SqliteOptions options;
    options.path = path_;
    auto store = OpenSqliteStore(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }
  // One node and one run with a task on it: what a report needs to exist.
  void AddNodeAndRun(const std::string& node, const std::string& run_id) {
    ASSERT_TRUE(store_->UpsertNode(MakeNode(node, "6.1", kT0)).ok());
    ASSERT_TRUE(store_
                    ->CreateRun(MakeRun(run_id, kT0),
                                {MakeTask(run_id + "-" + node, run_id, node, kT0)})
                    .ok());
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
};

// ---- migrations ----

TEST_F(StoreTest, MigratesEmptyFileAndReopensIdempotently) {
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

TEST_F(StoreTest, MigratesAnOlderFileToANewerBuildKeepingData) {
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

TEST_F(StoreTest, UpgradesAVersionOneFileKeepingItsData) {
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

TEST_F(StoreTest, RefusesASchemaNewerThanThisBuild) {
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

TEST_F(StoreTest, FailedMigrationStepRollsBackToThePreviousVersion) {
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

TEST_F(StoreTest, RefusesAFileThatIsNotADatabase) {
  store_.reset();
  const std::string junk = dir_.File("junk.db");
  std::ofstream(junk) << std::string(4096, 'x');
  SqliteOptions options;
  options.path = junk;
  auto store = OpenSqliteStore(options);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
}

// ---- nodes ----

TEST_F(StoreTest, FactsHistoryGrowsOnlyWhenFactsChange) {
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
  EXPECT_EQ(*store_->CountFactsVersions("n1"), 1);
  // Same facts at a later hello: no new version.
  ASSERT_TRUE(
      store_->UpsertNode(MakeNode("n1", "6.1", kT0 + absl::Hours(1))).ok());
  EXPECT_EQ(*store_->CountFactsVersions("n1"), 1);
  // A new kernel: a second version, and ListNodes shows the newest.
  ASSERT_TRUE(
      store_->UpsertNode(MakeNode("n1", "6.5", kT0 + absl::Hours(2))).ok());
  EXPECT_EQ(*store_->CountFactsVersions("n1"), 2);
  auto nodes = store_->ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].facts.kernel(), "6.5");
  EXPECT_EQ((*nodes)[0].first_seen, kT0);
  EXPECT_EQ((*nodes)[0].last_seen, kT0 + absl::Hours(2));
  EXPECT_EQ(store_->CountFactsVersions("nope").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, ListNodesRoundTripsLabelsFactsAndTouch) {
  NodeRecord a = MakeNode("b-node", "6.1", kT0);
  a.facts.add_nics()->set_name("eth0");
  ASSERT_TRUE(store_->UpsertNode(a).ok());
  NodeRecord b = MakeNode("a-node", "6.1", kT0);
  b.labels = {{"provider", "gcp"}};
  ASSERT_TRUE(store_->UpsertNode(b).ok());
  // Labels are replaced, not merged.
  b.labels = {{"provider", "aws"}, {"region", "us-east-1"}};
  b.agent_version = "0.2.0";
  ASSERT_TRUE(store_->UpsertNode(b).ok());
  ASSERT_TRUE(store_->TouchNode("b-node", kT0 + absl::Minutes(5)).ok());
  EXPECT_EQ(store_->TouchNode("missing", kT0).code(), absl::StatusCode::kNotFound);

  Reopen();
  auto nodes = store_->ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 2u);
  const NodeRecord& first = (*nodes)[0];
  EXPECT_EQ(first.name, "a-node");
  EXPECT_THAT(first.labels,
              ElementsAre(Pair("provider", "aws"), Pair("region", "us-east-1")));
  EXPECT_EQ(first.agent_version, "0.2.0");
  const NodeRecord& second = (*nodes)[1];
  EXPECT_EQ(second.name, "b-node");
  EXPECT_EQ(second.facts.nics(0).name(), "eth0");
  EXPECT_EQ(second.facts.cpu().flags_of_interest(0), "avx2");
  EXPECT_EQ(second.last_seen, kT0 + absl::Minutes(5));
  EXPECT_EQ(store_->UpsertNode(NodeRecord{}).code(),
            absl::StatusCode::kInvalidArgument);
}

// ---- runs and tasks ----

TEST_F(StoreTest, RunAndTasksRoundTrip) {
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n1", "6.1", kT0)).ok());
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n2", "6.1", kT0)).ok());
  RunRecord run = MakeRun("r1", kT0);
  ASSERT_TRUE(store_
                  ->CreateRun(run, {MakeTask("t1", "r1", "n1", kT0),
                                    MakeTask("t2", "", "n2", kT0)})
                  .ok());
  Reopen();

  auto got = store_->GetRun("r1");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->run_id, "r1");
  EXPECT_EQ(got->state, "queued");
  EXPECT_EQ(got->created, kT0);
  EXPECT_EQ(got->finished, absl::InfinitePast());
  ASSERT_EQ(got->benchmarks.size(), 2u);
  EXPECT_EQ(got->benchmarks[0].name(), "gemm");
  EXPECT_EQ(got->benchmarks[0].params().at("size"), "4096");
  EXPECT_EQ(got->benchmarks[1].name(), "stream");
  EXPECT_EQ(got->max_parallel, 2u);
  EXPECT_EQ(got->suite, "quick");

  auto tasks = store_->ListTasks("r1");
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 2u);
  EXPECT_EQ((*tasks)[0].task_id, "t1");
  EXPECT_EQ((*tasks)[1].task_id, "t2");
  EXPECT_EQ((*tasks)[1].run_id, "r1");  // filled from the run
  EXPECT_EQ((*tasks)[1].node, "n2");
  EXPECT_EQ((*tasks)[1].state, v1::TASK_STATE_QUEUED);

  TaskRecord t1 = (*tasks)[0];
  t1.state = v1::TASK_STATE_FAILED;
  t1.reason = "gemm: out of memory";
  t1.updated = kT0 + absl::Seconds(30);
  v1::BenchmarkOutcome& outcome = t1.outcomes.emplace_back();
  outcome.set_benchmark("gemm");
  outcome.set_state(v1::TASK_STATE_FAILED);
  outcome.set_reason("out of memory");
  t1.outcomes.emplace_back().set_benchmark("stream");
  ASSERT_TRUE(store_->UpdateTask(t1).ok());
  ASSERT_TRUE(store_->SetRunState("r1", "failed", kT0 + absl::Minutes(1)).ok());

  Reopen();
  tasks = store_->ListTasks("r1");
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  const TaskRecord& back = (*tasks)[0];
  EXPECT_EQ(back.state, v1::TASK_STATE_FAILED);
  EXPECT_EQ(back.reason, "gemm: out of memory");
  EXPECT_EQ(back.updated, kT0 + absl::Seconds(30));
  ASSERT_EQ(back.outcomes.size(), 2u);
  EXPECT_EQ(back.outcomes[0].reason(), "out of memory");
  EXPECT_EQ(back.outcomes[1].benchmark(), "stream");
  got = store_->GetRun("r1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state, "failed");
  EXPECT_EQ(got->finished, kT0 + absl::Minutes(1));

  auto queued = store_->ListTasksInStates(
      {v1::TASK_STATE_QUEUED, v1::TASK_STATE_RUNNING});
  ASSERT_TRUE(queued.ok()) << queued.status();
  ASSERT_EQ(queued->size(), 1u);
  EXPECT_EQ((*queued)[0].task_id, "t2");
  EXPECT_EQ((*queued)[0].run_id, "r1");
  EXPECT_TRUE(store_->ListTasksInStates({})->empty());
}

TEST_F(StoreTest, PairTasksKeepTheirOwnBenchmarksAndPartner) {
  TaskRecord server = MakeTask("ts", "r1", "n1", kT0);
  TaskRecord client = MakeTask("tc", "r1", "n2", kT0);
  v1::BenchmarkSpec spec;
  spec.set_name("net");
  (*spec.mutable_params())["role"] = "server";
  server.benchmarks = {spec};
  (*spec.mutable_params())["role"] = "client";
  client.benchmarks = {spec};
  server.peer_task_id = "tc";
  client.peer_task_id = "ts";
  ASSERT_TRUE(store_->CreateRun(MakeRun("r1", kT0), {server, client}).ok());

  // The client learns its peer once the server listens.
  (*client.benchmarks[0].mutable_params())["peer"] = "10.0.0.1:4000";
  ASSERT_TRUE(store_->UpdateTask(client).ok());
  Reopen();
  auto tasks = store_->ListTasks("r1");
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 2u);
  EXPECT_EQ((*tasks)[0].peer_task_id, "tc");
  EXPECT_EQ((*tasks)[0].benchmarks.at(0).params().at("role"), "server");
  EXPECT_EQ((*tasks)[1].peer_task_id, "ts");
  EXPECT_EQ((*tasks)[1].benchmarks.at(0).params().at("peer"), "10.0.0.1:4000");
}

TEST_F(StoreTest, MissingAndDuplicateRunsAndTasks) {
  EXPECT_EQ(store_->GetRun("nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ListTasks("nope").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ListSamplesForRun("nope").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->SetRunState("nope", "failed", kT0).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->UpdateTask(MakeTask("nope", "r", "n", kT0)).code(),
            absl::StatusCode::kNotFound);

  ASSERT_TRUE(store_->CreateRun(MakeRun("r1", kT0), {}).ok());
  EXPECT_EQ(store_->CreateRun(MakeRun("r1", kT0), {}).code(),
            absl::StatusCode::kAlreadyExists);
  // A duplicate task id rolls back its whole run.
  EXPECT_EQ(store_
                ->CreateRun(MakeRun("r2", kT0), {MakeTask("t", "r2", "n", kT0),
                                                 MakeTask("t", "r2", "n", kT0)})
                .code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(store_->GetRun("r2").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->CreateRun(MakeRun("r3", kT0), {MakeTask("t", "other", "n", kT0)})
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CreateRun(RunRecord{}, {}).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(StoreTest, ListRunsNewestFirstWithLimit) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(store_
                    ->CreateRun(MakeRun(absl::StrCat("r", i),
                                        kT0 + absl::Minutes(i)),
                                {})
                    .ok());
  }
  auto runs = store_->ListRuns(3);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].run_id, "r4");
  EXPECT_EQ((*runs)[2].run_id, "r2");
  EXPECT_EQ(store_->ListRuns(0)->size(), 5u);  // 0: no limit
}

// ---- reports ----

TEST_F(StoreTest, CommitReportsStoresEachSampleIdOnce) {
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

TEST_F(StoreTest, NanAndInfinityValuesSurvive) {
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

TEST_F(StoreTest, CommitReportsUpdatesTaskInTheSameTransaction) {
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

TEST_F(StoreTest, CommitReportsRefusesUnknownRunOrNodeAtomically) {
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

TEST_F(StoreTest, HistoryIsNewestFirstAndLimited) {
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

TEST_F(StoreTest, MetricPointsSinceFiltersByWindowAndMetric) {
  AddNodeAndRun("n1", "r1");
  ASSERT_TRUE(store_->UpsertNode(MakeNode("n2", "6.1", kT0)).ok());
  ASSERT_TRUE(store_->CreateRun(MakeRun("r2", kT0), {}).ok());
  const int64_t t0 = ToUnixMillis(kT0);
  Store::ReportWrite report;
  report.samples = {
      MakeSample("a", "r1", "n1", kMetric, 1.0, t0 - 10'000),  // too old
      MakeSample("b", "r1", "n2", kMetric, 2.0, t0),           // on the edge
      MakeSample("c", "r2", "n1", kMetric, 3.0, t0 + 1),
      MakeSample("d", "r2", "n2", "stream.triad.GBps", 4.0, t0 + 2)};
  ASSERT_TRUE(store_->CommitReports({report}).ok());
  Reopen();  // cold key caches

  auto points = store_->MetricPointsSince(kMetric, kT0);
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(points->size(), 2u);
  EXPECT_EQ((*points)[0].node, "n2");
  EXPECT_EQ((*points)[0].run_id, "r1");
  EXPECT_EQ((*points)[0].value, 2.0);
  EXPECT_EQ((*points)[0].time, kT0);
  EXPECT_EQ((*points)[1].node, "n1");
  EXPECT_EQ((*points)[1].run_id, "r2");
  EXPECT_EQ(store_->MetricPointsSince(kMetric, absl::InfinitePast())->size(), 3u);
  EXPECT_TRUE(store_->MetricPointsSince("no.such.metric", kT0)->empty());
}

// Ranking points are staged per commit and folded into per-metric chunks in
// the background of later commits; every read must see exactly the stored
// samples whatever stage their points are in.
TEST_F(StoreTest, RankingPointsAndHistoryStayExactAcrossFolds) {
  const std::vector<std::string> nodes = {"n0", "n1", "n2", "n3"};
  const std::vector<std::string> metrics = {kMetric, "stream.triad.GBps",
                                            "fio.randread.iops"};
  for (const std::string& node : nodes) {
    ASSERT_TRUE(store_->UpsertNode(MakeNode(node, "6.1", kT0)).ok());
  }
  for (int r = 0; r < 5; ++r) {
    ASSERT_TRUE(store_->CreateRun(MakeRun(absl::StrCat("r", r), kT0), {}).ok());
  }
  std::vector<v1::Sample> stored;
  int next_id = 0;
  auto make = [&](int metric, int node, int run, int64_t time_ms) {
    const int id = next_id++;
    return MakeSample(absl::StrFormat("S%08d", id), absl::StrCat("r", run),
                      nodes[node], metrics[metric], id * 0.5, time_ms);
  };
  // Many small commits (folded by row count), a resend of old ids (no new
  // points), then one commit big enough to fold by point count.
  for (int commit = 0; commit < 600; ++commit) {
    Store::ReportWrite report;
    for (int i = 0; i < 1 + commit % 5; ++i) {
      // Times go mostly forward with some stragglers from the past.
      const int64_t t = commit * 10 + (i % 2 == 0 ? i : -500);
      report.samples.push_back(make((commit + i) % 3, (commit * 7 + i) % 4,
                                    commit % 5, t));
    }
    if (commit % 50 == 49) report.samples.push_back(stored[commit]);
    auto added = store_->CommitReports({report});
    ASSERT_TRUE(added.ok()) << added.status();
    for (const v1::Sample& s : report.samples) {
      if (std::find_if(stored.begin(), stored.end(), [&](const v1::Sample& x) {
            return x.id() == s.id();
          }) == stored.end()) {
        stored.push_back(s);
      }
    }
  }
  {
    Store::ReportWrite big;
    for (int i = 0; i < 70'000; ++i) {
      big.samples.push_back(make(i % 2, i % 4, i % 5, 6000 + i / 10));
    }
    ASSERT_EQ(*store_->CommitReports({big}), 70'000);
    stored.insert(stored.end(), big.samples.begin(), big.samples.end());
  }

  auto check = [&] {
    EXPECT_EQ(*store_->CountSamples(), static_cast<int64_t>(stored.size()));
    for (const std::string& metric : metrics) {
      for (int64_t since : {int64_t{-1'000'000}, int64_t{3000}, int64_t{9000}}) {
        std::multiset<std::tuple<std::string, std::string, double, int64_t>>
            want, got;
        for (const v1::Sample& s : stored) {
          if (s.metric() == metric && s.time_unix_ms() >= since) {
            want.emplace(s.node(), s.run_id(), s.value(), s.time_unix_ms());
          }
        }
        auto points = store_->MetricPointsSince(metric, absl::FromUnixMillis(since));
        ASSERT_TRUE(points.ok()) << points.status();
        for (const MetricPoint& p : *points) {
          got.emplace(p.node, p.run_id, p.value, absl::ToUnixMillis(p.time));
        }
        EXPECT_EQ(got, want) << metric << " since " << since;
        // The compact form, read directly and through Store's default.
        for (bool use_default : {false, true}) {
          auto table = use_default ? store_->Store::MetricPointTableSince(
                                         metric, absl::FromUnixMillis(since))
                                   : store_->MetricPointTableSince(
                                         metric, absl::FromUnixMillis(since));
          ASSERT_TRUE(table.ok()) << table.status();
          got.clear();
          for (const MetricPointTable::Point& p : table->points) {
            got.emplace(table->nodes.at(p.node), table->run_ids.at(p.run),
                        p.value, absl::ToUnixMillis(p.time));
          }
          EXPECT_EQ(got, want) << metric << " since " << since;
          EXPECT_LE(table->nodes.size(), nodes.size());
          EXPECT_LE(table->run_ids.size(), 5u);
        }
      }
      for (const std::string& node : nodes) {
        std::vector<v1::Sample> want;
        for (const v1::Sample& s : stored) {
          if (s.metric() == metric && s.node() == node) want.push_back(s);
        }
        std::sort(want.begin(), want.end(), [](const auto& a, const auto& b) {
          return std::make_pair(a.time_unix_ms(), a.id()) >
                 std::make_pair(b.time_unix_ms(), b.id());
        });
        for (int limit : {1, 7, 0}) {
          auto history = store_->History(node, metric, limit);
          ASSERT_TRUE(history.ok()) << history.status();
          const size_t n = limit > 0 ? std::min<size_t>(limit, want.size())
                                     : want.size();
          ASSERT_EQ(history->size(), n) << node << " " << metric;
          for (size_t i = 0; i < n; ++i) {
            EXPECT_EQ((*history)[i].id(), want[i].id());
            EXPECT_EQ((*history)[i].run_id(), want[i].run_id());
          }
        }
      }
    }
    EXPECT_TRUE(store_->CheckIntegrity().ok()) << store_->CheckIntegrity();
  };
  check();
  Reopen();
  check();
}

TEST_F(StoreTest, ConcurrentCallersAreSerialised) {
  AddNodeAndRun("n1", "r1");
  constexpr int kThreads = 4;
  constexpr int kBatches = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        Store::ReportWrite report;
        for (int i = 0; i < 10; ++i) {
          report.samples.push_back(MakeSample(absl::StrCat(t, "-", b, "-", i),
                                              "r1", "n1", kMetric, i, b));
        }
        EXPECT_TRUE(store_->CommitReports({report}).ok());
        EXPECT_TRUE(store_->MetricPointsSince(kMetric, kT0).ok());
        EXPECT_TRUE(store_->TouchNode("n1", kT0).ok());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(*store_->CountSamples(), kThreads * kBatches * 10);
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_F(StoreTest, CheckIntegrityIsOkOnAFreshAndAUsedStore) {
  EXPECT_TRUE(store_->CheckIntegrity().ok());
  AddNodeAndRun("n1", "r1");
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

}  // namespace
}  // namespace fleetbench::storage
