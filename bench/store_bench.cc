// Throughput of the store's hot paths, printed, never asserted (timings
// depend on the machine and on what else it is doing). A program in bench/,
// not registered with CTest:
//
//   build/bench/fleetbench_store_bench
//
// FLEETBENCH_STORAGE_BENCH_NODES and _RUNS size the ranking data set
// (default 1000 x 1000 = 1,000,000 samples of one metric, 1000 per commit);
// FLEETBENCH_STORAGE_BENCH_SCHEMA=10 writes schema 10's samples layout;
// FLEETBENCH_STORAGE_BENCH_STATISTICS=1 gives each sample the real gemm
// plugin's per-run statistics as params;
// FLEETBENCH_STORAGE_BENCH_KEEP=FILE keeps the history file there;
// FLEETBENCH_STORAGE_BENCH_BACKEND=postgres measures the PostgreSQL store
// instead, on a server the bench starts (storage/postgres_test_server.h:
// a Unix socket, fsync off; the SQLite figures are with fsync at commit).
// Files go to the gtest temp dir (TEST_TMPDIR or /tmp).
#include <stdlib.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/ulid.h"
#include "gtest/gtest.h"
#include "storage/migrations.h"
#include "storage/postgres_store.h"
#include "storage/postgres_test_server.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"

namespace fleetbench::storage {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* v = getenv(name);
  return v != nullptr && *v != '\0' ? atoi(v) : fallback;
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

constexpr char kMetric[] = "gemm.cpu.fp32.tflops";
const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

class StoreBench : public ::testing::Test {
 protected:
  void SetUp() override {
    // A benchmark program, not a test: it always runs when started.
    dir_ = ::testing::TempDir() + "/fleetbench_bench_XXXXXX";
    ASSERT_NE(mkdtemp(dir_.data()), nullptr);
    path_ = dir_ + "/bench.db";
    SqliteOptions options;
    options.path = path_;
    if (const char* backend = getenv("FLEETBENCH_STORAGE_BENCH_BACKEND");
        backend != nullptr && std::string(backend) == "postgres") {
      auto server = PostgresTestServer::Start();
      ASSERT_TRUE(server.ok()) << server.status();
      postgres_ = std::move(*server);
      ASSERT_TRUE(postgres_->CreateDatabase("bench").ok());
      PostgresOptions postgres;
      postgres.url = postgres_->Url("bench");
      postgres.password_file = postgres_->password_file();
      auto opened = OpenPostgresStore(postgres);
      ASSERT_TRUE(opened.ok()) << opened.status();
      std::printf("PostgreSQL, schema %d\n", LatestPostgresSchemaVersion());
      store_ = *std::move(opened);
      path_.clear();
      return;
    }
    // FLEETBENCH_STORAGE_BENCH_SCHEMA=N opens the file with the first N
    // schema steps only: the ingest path then writes that version's samples
    // layout, for a before/after of a layout change in one binary.
    schema_ = EnvInt("FLEETBENCH_STORAGE_BENCH_SCHEMA", LatestSchemaVersion());
    ASSERT_GE(schema_, 10) << "the bench's reads need schema 10 or later";
    ASSERT_LE(schema_, LatestSchemaVersion());
    const std::vector<SchemaMigration> steps(SchemaMigrations().begin(),
                                             SchemaMigrations().begin() + schema_);
    auto opened = OpenSqliteStoreWithMigrations(options, steps);
    std::printf("schema %d\n", schema_);
    ASSERT_TRUE(opened.ok()) << opened.status();
    store_ = *std::move(opened);
  }
  void TearDown() override {
    store_.reset();
    if (!path_.empty()) {
      std::printf("file size: %.1f MiB\n",
                  std::filesystem::file_size(path_) / (1024.0 * 1024.0));
    }
    // FLEETBENCH_STORAGE_BENCH_KEEP=FILE keeps the history there (e.g. a
    // schema 10 file, to time its migration).
    if (const char* keep = getenv("FLEETBENCH_STORAGE_BENCH_KEEP");
        keep != nullptr && *keep != '\0' && !path_.empty()) {
      std::filesystem::rename(path_, keep);
      std::printf("kept %s\n", keep);
    }
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  void AddNodes(int nodes) {
    for (int n = 0; n < nodes; ++n) {
      NodeRecord node;
      node.name = absl::StrCat("node-", n);
      node.labels = {{"instance_type", "c7i.large"}};
      node.first_seen = node.last_seen = kT0;
      ASSERT_TRUE(store_->UpsertNode(node).ok());
    }
  }
  std::string AddRun(int r) {
    RunRecord run;
    run.run_id = NewUlid(kT0 + absl::Minutes(r));
    run.state = "running";
    run.created = kT0 + absl::Minutes(r);
    run.finished = absl::InfinitePast();
    EXPECT_TRUE(store_->CreateRun(run, {}).ok());
    return run.run_id;
  }
  // Times one CommitReports call (wall and this thread's CPU).
  void Commit(const std::vector<Store::ReportWrite>& batch) {
    const absl::Time start = absl::Now();
    const double cpu_start = ThreadCpuSeconds();
    auto added = store_->CommitReports(batch);
    cpu_ += ThreadCpuSeconds() - cpu_start;
    wall_ += absl::Now() - start;
    ASSERT_TRUE(added.ok()) << added.status();
    stored_ += *added;
  }
  void PrintInsertRate(const char* what, int per_commit) {
    std::printf(
        "insert (%s): %lld samples, %d per commit: %.0f rows/s wall, "
        "%.0f rows/s of commit CPU\n",
        what, static_cast<long long>(stored_), per_commit,
        stored_ / absl::ToDoubleSeconds(wall_), stored_ / cpu_);
    RecordProperty("insert_rows_per_s",
                   static_cast<int>(stored_ / absl::ToDoubleSeconds(wall_)));
  }

  std::string dir_;
  std::string path_;
  std::unique_ptr<PostgresTestServer> postgres_;
  int schema_ = 0;
  std::unique_ptr<Store> store_;
  absl::Duration wall_;
  double cpu_ = 0;
  int64_t stored_ = 0;
};

v1::Sample BenchSample(const std::string& run_id, int node, const std::string& metric,
                       double value, absl::Time when) {
  v1::Sample s;
  s.set_id(NewUlid(when));
  s.set_run_id(run_id);
  s.set_node(absl::StrCat("node-", node));
  s.set_benchmark("gemm");
  s.set_metric(metric);
  s.set_value(value);
  s.set_unit("tflops");
  auto& p = *s.mutable_params();
  p["size"] = "4096";
  p["dtype"] = "fp32";
  // FLEETBENCH_STORAGE_BENCH_STATISTICS=1: the params the real gemm plugin
  // sends (agent/benchmarks/sample_summary.cc), its spread new in every
  // sample, which schema 12 keeps with the sample.
  static const bool statistics = EnvInt("FLEETBENCH_STORAGE_BENCH_STATISTICS", 0) != 0;
  if (statistics) {
    p["blas"] = "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64";
    p["method"] = "openblas cblas_?gemm, median of timed runs after warm-up";
    p["transa"] = "N";
    p["transb"] = "N";
    p["warmup_runs"] = "1";
    p["runs"] = absl::StrCat(6 + node % 7);
    p["min_tflops"] = absl::StrCat(value - 0.0123);
    p["max_tflops"] = absl::StrCat(value + 0.0071);
    p["p10_tflops"] = absl::StrCat(value - 0.0091);
    p["p90_tflops"] = absl::StrCat(value + 0.0043);
    p["spread"] = absl::StrCat(0.01 + 0.00001 * (node % 4099));
  }
  s.set_time_unix_ms(absl::ToUnixMillis(when));
  return s;
}

// The ranking data set: every node runs once a minute; one commit holds one
// run's samples, one per node (the worst case for a node-major index).
TEST_F(StoreBench, InsertOneMetricThenRank) {
  const int nodes = EnvInt("FLEETBENCH_STORAGE_BENCH_NODES", 1000);
  const int runs = EnvInt("FLEETBENCH_STORAGE_BENCH_RUNS", 1000);
  AddNodes(nodes);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> tflops(0.5, 2.0);
  for (int r = 0; r < runs; ++r) {
    const std::string run_id = AddRun(r);
    std::vector<Store::ReportWrite> batch(1);
    batch[0].samples.reserve(nodes);
    for (int n = 0; n < nodes; ++n) {
      batch[0].samples.push_back(
          BenchSample(run_id, n, kMetric, tflops(rng),
                      kT0 + absl::Minutes(r) + absl::Milliseconds(n)));
    }
    Commit(batch);
  }
  PrintInsertRate("one metric, every node in each commit", nodes);

  // Ranking over everything (the worst case), then over the newest tenth.
  for (int pass = 0; pass < 5; ++pass) {
    const absl::Time start = absl::Now();
    const double cpu_start = ThreadCpuSeconds();
    auto points = store_->MetricPointsSince(kMetric, absl::InfinitePast());
    const double cpu = ThreadCpuSeconds() - cpu_start;
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(points.ok()) << points.status();
    ASSERT_EQ(static_cast<int64_t>(points->size()), stored_);
    std::printf(
        "MetricPointsSince(all, %zu points), pass %d: %.1f ms wall, %.1f ms "
        "CPU\n",
        points->size(), pass, absl::ToDoubleMilliseconds(took), cpu * 1e3);
  }
  for (int pass = 0; pass < 3; ++pass) {
    const absl::Time start = absl::Now();
    const double cpu_start = ThreadCpuSeconds();
    auto table = store_->MetricPointTableSince(kMetric, absl::InfinitePast());
    const double cpu = ThreadCpuSeconds() - cpu_start;
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(table.ok()) << table.status();
    ASSERT_EQ(static_cast<int64_t>(table->points.size()), stored_);
    std::printf(
        "MetricPointTableSince(all, %zu points), pass %d: %.1f ms wall, "
        "%.1f ms CPU\n",
        table->points.size(), pass, absl::ToDoubleMilliseconds(took), cpu * 1e3);
  }
  {
    const absl::Time since = kT0 + absl::Minutes(runs - runs / 10);
    const absl::Time start = absl::Now();
    auto points = store_->MetricPointsSince(kMetric, since);
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(points.ok());
    std::printf("MetricPointsSince(newest tenth, %zu points): %.1f ms\n",
                points->size(), absl::ToDoubleMilliseconds(took));
  }
  // Sample rows are read in the latest layout only.
  if (schema_ != LatestSchemaVersion()) return;
  {
    const absl::Time start = absl::Now();
    auto history = store_->History("node-7", kMetric, 100);
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(history.ok());
    std::printf("History(node, metric, 100): %.2f ms\n",
                absl::ToDoubleMilliseconds(took));
  }
  {
    auto listed = store_->ListRuns(1);
    ASSERT_TRUE(listed.ok() && !listed->empty());
    const absl::Time start = absl::Now();
    auto samples = store_->ListSamplesForRun((*listed)[0].run_id);
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(samples.ok());
    std::printf("ListSamplesForRun(%zu samples): %.2f ms\n", samples->size(),
                absl::ToDoubleMilliseconds(took));
  }
}

// Reports as agents send them: a commit holds 10 nodes' reports of 100
// metrics each.
TEST_F(StoreBench, InsertManyMetricsPerCommit) {
  constexpr int kNodes = 100;
  constexpr int kNodesPerCommit = 10;
  constexpr int kMetrics = 100;
  AddNodes(kNodes);
  std::vector<std::string> metrics;
  for (int m = 0; m < kMetrics; ++m) {
    metrics.push_back(absl::StrCat("bench.metric", m, ".GBps"));
  }
  for (int r = 0; r < 10; ++r) {
    const std::string run_id = AddRun(r);
    for (int first = 0; first < kNodes; first += kNodesPerCommit) {
      std::vector<Store::ReportWrite> batch(kNodesPerCommit);
      for (int i = 0; i < kNodesPerCommit; ++i) {
        for (int m = 0; m < kMetrics; ++m) {
          batch[i].samples.push_back(BenchSample(
              run_id, first + i, metrics[m], m,
              kT0 + absl::Minutes(r) + absl::Milliseconds(m)));
        }
      }
      Commit(batch);
    }
  }
  PrintInsertRate("100 metrics from 10 nodes in each commit",
                  kNodesPerCommit * kMetrics);
}

}  // namespace
}  // namespace fleetbench::storage
