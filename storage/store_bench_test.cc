// Throughput of the store's hot paths, printed, never asserted (timings
// depend on the machine). Skipped unless FLEETBENCH_STORAGE_BENCH is set:
//
//   FLEETBENCH_STORAGE_BENCH=1 build/storage/storage_test --gtest_filter=StoreBench.*
//
// FLEETBENCH_STORAGE_BENCH_NODES and _RUNS size the data set (default 1000 x
// 1000 = 1,000,000 samples of one metric, 1000 samples per transaction).
#include <stdlib.h>

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
#include "storage/store.h"

namespace fleetbench::storage {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* v = getenv(name);
  return v != nullptr && *v != '\0' ? atoi(v) : fallback;
}

constexpr char kMetric[] = "gemm.cpu.fp32.tflops";

TEST(StoreBench, InsertAndRankingQueries) {
  if (getenv("FLEETBENCH_STORAGE_BENCH") == nullptr) {
    GTEST_SKIP() << "set FLEETBENCH_STORAGE_BENCH=1 to run";
  }
  const int nodes = EnvInt("FLEETBENCH_STORAGE_BENCH_NODES", 1000);
  const int runs = EnvInt("FLEETBENCH_STORAGE_BENCH_RUNS", 1000);

  std::string dir = ::testing::TempDir() + "/fleetbench_bench_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/bench.db";
  SqliteOptions options;
  options.path = path;
  auto opened = OpenSqliteStore(options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::unique_ptr<Store> store = *std::move(opened);

  const absl::Time t0 = absl::FromUnixSeconds(1'700'000'000);
  for (int n = 0; n < nodes; ++n) {
    NodeRecord node;
    node.name = absl::StrCat("node-", n);
    node.labels = {{"instance_type", "c7i.large"}};
    node.first_seen = node.last_seen = t0;
    ASSERT_TRUE(store->UpsertNode(node).ok());
  }

  // One run of every node every minute: each transaction stores one run's
  // samples, one per node, with agent-style ULIDs.
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> tflops(0.5, 2.0);
  absl::Duration commit_time;
  int64_t stored = 0;
  for (int r = 0; r < runs; ++r) {
    const std::string run_id = NewUlid(t0 + absl::Minutes(r));
    RunRecord run;
    run.run_id = run_id;
    run.state = "running";
    run.created = t0 + absl::Minutes(r);
    run.finished = absl::InfinitePast();
    ASSERT_TRUE(store->CreateRun(run, {}).ok());
    Store::ReportWrite report;
    report.samples.reserve(nodes);
    for (int n = 0; n < nodes; ++n) {
      const absl::Time when = t0 + absl::Minutes(r) + absl::Milliseconds(n);
      v1::Sample& s = report.samples.emplace_back();
      s.set_id(NewUlid(when));
      s.set_run_id(run_id);
      s.set_node(absl::StrCat("node-", n));
      s.set_benchmark("gemm");
      s.set_metric(kMetric);
      s.set_value(tflops(rng));
      s.set_unit("tflops");
      (*s.mutable_params())["size"] = "4096";
      (*s.mutable_params())["dtype"] = "fp32";
      s.set_time_unix_ms(absl::ToUnixMillis(when));
    }
    const absl::Time start = absl::Now();
    auto added = store->CommitReports({report});
    commit_time += absl::Now() - start;
    ASSERT_TRUE(added.ok()) << added.status();
    stored += *added;
  }
  const double rate = stored / absl::ToDoubleSeconds(commit_time);
  std::printf("insert: %lld samples in %d transactions of %d: %.0f rows/s\n",
              static_cast<long long>(stored), runs, nodes, rate);
  RecordProperty("insert_rows_per_s", static_cast<int>(rate));

  // Ranking over everything (worst case), then over the newest tenth.
  for (int pass = 0; pass < 3; ++pass) {
    const absl::Time start = absl::Now();
    auto points = store->MetricPointsSince(kMetric, absl::InfinitePast());
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(points.ok()) << points.status();
    ASSERT_EQ(static_cast<int64_t>(points->size()), stored);
    std::printf("MetricPointsSince(all %zu points), pass %d: %.1f ms\n",
                points->size(), pass, absl::ToDoubleMilliseconds(took));
  }
  {
    const absl::Time since = t0 + absl::Minutes(runs - runs / 10);
    const absl::Time start = absl::Now();
    auto points = store->MetricPointsSince(kMetric, since);
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(points.ok());
    std::printf("MetricPointsSince(newest tenth, %zu points): %.1f ms\n",
                points->size(), absl::ToDoubleMilliseconds(took));
  }
  {
    const absl::Time start = absl::Now();
    auto history = store->History("node-7", kMetric, 100);
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(history.ok());
    std::printf("History(node, metric, 100): %.2f ms\n",
                absl::ToDoubleMilliseconds(took));
  }
  {
    auto listed = store->ListRuns(1);
    ASSERT_TRUE(listed.ok() && !listed->empty());
    const absl::Time start = absl::Now();
    auto samples = store->ListSamplesForRun((*listed)[0].run_id);
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(samples.ok());
    std::printf("ListSamplesForRun(%zu samples): %.2f ms\n", samples->size(),
                absl::ToDoubleMilliseconds(took));
  }
  store.reset();
  std::printf("file size: %.1f MiB\n",
              std::filesystem::file_size(path) / (1024.0 * 1024.0));
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

}  // namespace
}  // namespace fleetbench::storage
