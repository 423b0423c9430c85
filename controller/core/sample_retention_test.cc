// Retention (FleetOptions::retain_samples) on the injected clock: passes
// every retention_interval, one bounded batch per sweep, old samples gone
// with their ranking points, new ones kept; old task logs go too, even
// when no old sample is left to start a pass; off by default.
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "controller/core/fleet_core_fixture.h"
#include "gtest/gtest.h"

namespace fleetbench::controller {
namespace {

class FleetCoreRetentionTest : public FleetCoreTest {
 protected:
  // A run on n1 and `old_count` samples dated 100 days ago, `new_count`
  // one day ago, stored as a commit long ago would have stored them.
  void StoreHistory(int old_count, int new_count) {
    link_ = Connect("n1");
    run_id_ = Start("gemm");
    storage::Store::ReportWrite write;
    const absl::Time now = clock_.Now();
    for (int i = 0; i < old_count + new_count; ++i) {
      v1::Sample& s = write.samples.emplace_back();
      s.set_id(NewUlid());
      s.set_run_id(run_id_);
      s.set_node("n1");
      s.set_benchmark("gemm");
      s.set_metric("gemm.cpu.fp32.tflops");
      s.set_unit("tflops");
      s.set_value(1.0 + i);
      const absl::Time when = i < old_count ? now - absl::Hours(24 * 100) + absl::Seconds(i)
                                            : now - absl::Hours(24);
      s.set_time_unix_ms(absl::ToUnixMillis(when));
    }
    auto stored = store_->CommitReports({write});
    ASSERT_TRUE(stored.ok()) << stored.status();
  }
  static FleetOptions Retaining() {
    FleetOptions o = Options();
    o.retain_samples = absl::Hours(24 * 90);
    o.retention_batch = 3;
    o.retention_interval = absl::Hours(1);
    return o;
  }

  std::shared_ptr<RecordingLink> link_;
  std::string run_id_;
};

TEST_F(FleetCoreRetentionTest, PrunesOldSamplesABatchPerSweepWhenAPassIsDue) {
  RestartCore(Retaining());
  AdvanceAndSweep(absl::Milliseconds(1));  // the first pass, at start: nothing to do
  StoreHistory(10, 2);
  ASSERT_EQ(*store_->CountSamples(), 12);

  AdvanceAndSweep(absl::Milliseconds(1));
  EXPECT_EQ(core_->GetStats().samples_pruned, 0) << "a pass ran before its interval";

  AdvanceAndSweep(absl::Hours(1));
  EXPECT_EQ(core_->GetStats().samples_pruned, 3) << "one batch per sweep";
  int sweeps = 1;
  while (core_->GetStats().samples_pruned < 10 && sweeps < 50) {
    AdvanceAndSweep(absl::Milliseconds(1));
    ++sweeps;
  }
  EXPECT_EQ(core_->GetStats().samples_pruned, 10);
  EXPECT_GE(sweeps, 4);
  EXPECT_EQ(*store_->CountSamples(), 2);
  EXPECT_TRUE(store_->CheckIntegrity().ok()) << store_->CheckIntegrity();

  // The pass ended; the next one is an interval away, and the ranking
  // still sees the two new samples.
  AdvanceAndSweep(absl::Minutes(59));
  EXPECT_EQ(core_->GetStats().samples_pruned, 10);
  v1::RankRequest rank;
  rank.set_metric("gemm.cpu.fp32.tflops");
  rank.set_by(v1::RANK_GROUPING_NODE);
  auto ranked = core_->Rank(rank);
  ASSERT_TRUE(ranked.ok()) << ranked.status();
  ASSERT_EQ(ranked->rows_size(), 1);
}

TEST_F(FleetCoreRetentionTest, OldTaskLogsGoInBatchesWithoutOldSamplesToCarryThem) {
  RestartCore(Retaining());
  Connect("n1");
  constexpr int kTasks = kTaskLogsPerBatch + 6;  // more than one batch
  storage::RunRecord run;
  run.run_id = NewUlid();
  run.state = "succeeded";
  run.created = clock_.Now() - absl::Hours(24 * 100);
  run.benchmarks.emplace_back().set_name("workload");
  std::vector<storage::TaskRecord> tasks(kTasks);
  for (storage::TaskRecord& t : tasks) {
    t.task_id = NewUlid();
    t.run_id = run.run_id;
    t.node = "n1";
    t.updated = run.created;
  }
  ASSERT_TRUE(store_->CreateRun(run, tasks).ok());
  std::vector<storage::Store::ReportWrite> writes(kTasks);
  for (int i = 0; i < kTasks; ++i) {
    tasks[i].state = v1::TASK_STATE_SUCCEEDED;
    // All but the last ended 100 days ago.
    tasks[i].updated = i + 1 < kTasks ? run.created : clock_.Now() - absl::Hours(1);
    writes[i].task = &tasks[i];
    writes[i].task_log = "epoch 1\n";
  }
  ASSERT_TRUE(store_->CommitReports(writes).ok());

  for (int sweeps = 0; sweeps < 5; ++sweeps) AdvanceAndSweep(absl::Hours(1));
  auto sizes = store_->TaskLogSizesOfRun(run.run_id);
  ASSERT_TRUE(sizes.ok()) << sizes.status();
  ASSERT_EQ(sizes->size(), 1u) << "the old ones went, a batch a sweep";
  EXPECT_TRUE(sizes->contains(tasks.back().task_id));
  EXPECT_EQ(core_->GetStats().samples_pruned, 0);
}

TEST_F(FleetCoreRetentionTest, KeepsEverythingByDefault) {
  StoreHistory(5, 1);
  for (int i = 0; i < 3; ++i) AdvanceAndSweep(absl::Hours(24));
  EXPECT_EQ(core_->GetStats().samples_pruned, 0);
  EXPECT_EQ(*store_->CountSamples(), 6);
}

}  // namespace
}  // namespace fleetbench::controller
