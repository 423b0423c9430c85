// storage/store_test_util.h — what the SQLite store's tests share: a
// temporary directory, makers for the records they store, and the StoreTest
// fixture (a store on a fresh file, reopened on request).
#ifndef FLEETBENCH_STORAGE_STORE_TEST_UTIL_H_
#define FLEETBENCH_STORAGE_STORE_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "fleetbench/v1/result.pb.h"
#include "gtest/gtest.h"
#include "storage/store.h"

namespace fleetbench::storage {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
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

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void Reopen();
  // One node and one run with a task on it: what a report needs to exist.
  void AddNodeAndRun(const std::string& node, const std::string& run_id);

  TempDir dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
};

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_STORE_TEST_UTIL_H_
