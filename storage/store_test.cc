// Tests of the SQLite store as a whole: concurrent callers, the integrity
// check. The tables have their own files: migrations_test.cc, nodes_test.cc,
// runs_test.cc, samples_test.cc, rank_scan_test.cc.
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fleetbench/v1/result.pb.h"
#include "gtest/gtest.h"
#include "storage/store.h"
#include "storage/store_test_util.h"

namespace fleetbench::storage {
namespace {

TEST_P(StoreContractTest, ConcurrentCallersAreSerialised) {
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

TEST_P(StoreContractTest, CheckIntegrityIsOkOnAFreshAndAUsedStore) {
  EXPECT_TRUE(store_->CheckIntegrity().ok());
  AddNodeAndRun("n1", "r1");
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

}  // namespace
}  // namespace fleetbench::storage
