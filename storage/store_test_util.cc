#include "storage/store_test_util.h"

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fleetbench/v1/result.pb.h"
#include "gtest/gtest.h"
#include "storage/postgres_store.h"
#include "storage/postgres_test_server.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"

namespace fleetbench::storage {

TempDir::TempDir() {
  std::string pattern = ::testing::TempDir() + "/fleetbench_storage_XXXXXX";
  EXPECT_NE(mkdtemp(pattern.data()), nullptr) << pattern;
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
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

// One PostgreSQL server for the whole test binary, started on first use
// and stopped (its folder removed) when the binary exits; each scratch
// folder gets a database of its own, named after it, created on the
// folder's first open, so a reopen finds the same history.
absl::StatusOr<PostgresOptions> PostgresOptionsIn(const std::string& scratch_dir) {
  static absl::Mutex mu;
  static PostgresTestServer* server = nullptr;
  absl::MutexLock lock(&mu);
  if (server == nullptr) {
    auto started = PostgresTestServer::Start();
    if (!started.ok()) return started.status();
    server = started->release();
    std::atexit([] { delete server; });
  }
  const std::string marker = scratch_dir + "/postgres-database";
  std::string database;
  if (std::ifstream in(marker); !(in >> database)) {
    database = absl::StrCat("t", std::hash<std::string>{}(scratch_dir));
    if (absl::Status s = server->CreateDatabase(database); !s.ok()) return s;
    std::ofstream(marker) << database << "\n";
  }
  PostgresOptions options;
  options.url = server->Url(database);
  options.password_file = server->password_file();
  return options;
}

namespace {

absl::StatusOr<std::unique_ptr<Store>> OpenPostgresIn(const std::string& scratch_dir) {
  absl::StatusOr<PostgresOptions> options = PostgresOptionsIn(scratch_dir);
  if (!options.ok()) return options.status();
  return OpenPostgresStore(*options);
}

}  // namespace

std::vector<StoreBackend> StoreBackends() {
  return {{kSqliteBackend,
           [](const std::string& scratch_dir) {
             SqliteOptions options;
             options.path = scratch_dir + "/history.db";
             return OpenSqliteStore(options);
           }},
          {kPostgresBackend, OpenPostgresIn}};
}

void StoreContractTest::SetUp() { Reopen(); }

void StoreContractTest::Reopen() {
  store_.reset();
  auto store = GetParam().open(dir_.path());
  ASSERT_TRUE(store.ok()) << store.status();
  store_ = *std::move(store);
}

FLEETBENCH_STORE_CONTRACT(StoreContractTest);

void SqliteStoreTest::SetUp() {
  path_ = dir_.File("history.db");
  Reopen();
}

void SqliteStoreTest::Reopen() {
  store_.reset();
  SqliteOptions options;
  options.path = path_;
  auto store = OpenSqliteStore(options);
  ASSERT_TRUE(store.ok()) << store.status();
  store_ = *std::move(store);
}

void StoreFixture::AddNodeAndRun(const std::string& node, const std::string& run_id) {
  ASSERT_TRUE(store_->UpsertNode(MakeNode(node, "6.1", kT0)).ok());
  ASSERT_TRUE(store_
                  ->CreateRun(MakeRun(run_id, kT0),
                              {MakeTask(run_id + "-" + node, run_id, node, kT0)})
                  .ok());
}

}  // namespace fleetbench::storage
