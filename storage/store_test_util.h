// storage/store_test_util.h — what the store's tests share: a temporary
// directory, makers for the records they store, the store contract suite's
// fixture (StoreContractTest: a store of each backend this build has, on
// fresh scratch space, reopened on request) and SQLite's own fixture
// (SqliteStoreTest: a store on a fresh SQLite file at path_).
//
// The contract suite: every TEST_P of StoreContractTest, or of a fixture
// derived from it, runs once per backend in StoreBackends(); a backend that
// passes it keeps the Store contract (storage/store.h). Tests of what only
// one backend has (SQLite's migrations of older files, its file sizes and
// file-level damage) use that backend's own fixture.
#ifndef FLEETBENCH_STORAGE_STORE_TEST_UTIL_H_
#define FLEETBENCH_STORAGE_STORE_TEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fleetbench/v1/result.pb.h"
#include "gtest/gtest.h"
#include "storage/postgres_store.h"
#include "storage/store.h"

namespace fleetbench::storage {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline const absl::Time kT0 = absl::FromUnixMillis(1'700'000'000'000);
inline constexpr char kMetric[] = "gemm.cpu.fp32.tflops";

v1::Sample MakeSample(const std::string& id, const std::string& run_id,
                      const std::string& node, const std::string& metric,
                      double value, int64_t time_ms);
NodeRecord MakeNode(const std::string& name, const std::string& kernel,
                    absl::Time seen);
RunRecord MakeRun(const std::string& run_id, absl::Time created);
TaskRecord MakeTask(const std::string& task_id, const std::string& run_id,
                    const std::string& node, absl::Time updated);

// A backend the store contract suite runs against.
struct StoreBackend {
  std::string name;  // the test parameter's name: "Sqlite"
  // Opens the store kept in `scratch_dir` (empty the first time); opening
  // it again gives the same history.
  std::function<absl::StatusOr<std::unique_ptr<Store>>(const std::string& scratch_dir)> open;
};
inline constexpr char kSqliteBackend[] = "Sqlite";
// A database of its own on a PostgreSQL server the test binary starts
// (storage/postgres_test_server.h).
inline constexpr char kPostgresBackend[] = "Postgres";
// Where the Postgres backend keeps the history of `scratch_dir`: its
// database on the test binary's server, created on first use (for a test
// that also looks at the database itself).
absl::StatusOr<PostgresOptions> PostgresOptionsIn(const std::string& scratch_dir);
// How gtest prints a parameter: its name.
inline void PrintTo(const StoreBackend& backend, std::ostream* os) { *os << backend.name; }
// Every backend of this build.
std::vector<StoreBackend> StoreBackends();

// What both fixtures below hold: scratch space and the store open on it.
class StoreFixture {
 protected:
  // One node and one run with a task on it: what a report needs to exist.
  void AddNodeAndRun(const std::string& node, const std::string& run_id);

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

class StoreContractTest : public ::testing::TestWithParam<StoreBackend>, protected StoreFixture {
 protected:
  void SetUp() override;
  void Reopen();
};

// Runs a fixture's TEST_Ps once per backend, named after it.
#define FLEETBENCH_STORE_CONTRACT(Fixture)                                   \
  INSTANTIATE_TEST_SUITE_P(                                                 \
      Backends, Fixture, ::testing::ValuesIn(::fleetbench::storage::StoreBackends()), \
      [](const ::testing::TestParamInfo<::fleetbench::storage::StoreBackend>& info) { \
        return info.param.name;                                             \
      })

class SqliteStoreTest : public ::testing::Test, protected StoreFixture {
 protected:
  void SetUp() override;
  void Reopen();

  std::string path_;
};

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_STORE_TEST_UTIL_H_
