// Fault paths of the SQLite store against real files: a full disk (through
// the max_page_count test hook) and a process killed while committing.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"

namespace fleetbench::storage {
namespace {

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

const absl::Time kT0 = absl::FromUnixMillis(1'700'000'000'000);
constexpr char kMetric[] = "gemm.cpu.fp32.tflops";

// Ids sort in commit order, like the agents' ULIDs.
std::string SampleId(int batch, int i) {
  return absl::StrFormat("B%06d-S%04d", batch, i);
}

Store::ReportWrite MakeBatch(int batch, int size) {
  Store::ReportWrite report;
  report.samples.reserve(size);
  for (int i = 0; i < size; ++i) {
    v1::Sample& s = report.samples.emplace_back();
    s.set_id(SampleId(batch, i));
    s.set_run_id("r1");
    s.set_node("n1");
    s.set_benchmark("gemm");
    s.set_metric(kMetric);
    s.set_value(batch + i * 1e-3);
    s.set_unit("tflops");
    (*s.mutable_params())["size"] = "4096";
    s.set_time_unix_ms(absl::ToUnixMillis(kT0) + batch);
  }
  return report;
}

absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path,
                                            int64_t max_page_count = 0) {
  SqliteOptions options;
  options.path = path;
  options.max_page_count = max_page_count;
  return OpenSqliteStore(options);
}

void Seed(const std::string& path) {
  auto store = Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  NodeRecord node;
  node.name = "n1";
  node.first_seen = node.last_seen = kT0;
  ASSERT_TRUE((*store)->UpsertNode(node).ok());
  RunRecord run;
  run.run_id = "r1";
  run.state = "running";
  run.created = kT0;
  run.finished = absl::InfinitePast();
  TaskRecord task;
  task.task_id = "t1";
  task.node = "n1";
  task.state = v1::TASK_STATE_RUNNING;
  ASSERT_TRUE((*store)->CreateRun(run, {task}).ok());
}

TEST(StoreFaultTest, FullDiskFailsTheCommitAndKeepsEarlierData) {
  TempDir dir;
  const std::string path = dir.File("full.db");
  Seed(path);
  constexpr int kBatch = 500;
  int committed = 0;
  absl::Status failure;
  {
    // 8 KiB pages: about 2.4 MiB, a few thousand samples.
    auto store = Open(path, /*max_page_count=*/300);
    ASSERT_TRUE(store.ok()) << store.status();
    for (int batch = 0; batch < 1000; ++batch) {
      auto added = (*store)->CommitReports({MakeBatch(batch, kBatch)});
      if (!added.ok()) {
        failure = added.status();
        break;
      }
      ASSERT_EQ(*added, kBatch);
      ++committed;
    }
    ASSERT_EQ(failure.code(), absl::StatusCode::kResourceExhausted) << failure;
    ASSERT_GT(committed, 0);
    // Still usable: consistent, earlier batches all there, the failed one
    // not at all, and small writes that fit still succeed.
    EXPECT_TRUE((*store)->CheckIntegrity().ok());
    EXPECT_EQ(*(*store)->CountSamples(), int64_t{committed} * kBatch);
    EXPECT_TRUE((*store)->TouchNode("n1", kT0 + absl::Hours(1)).ok());
    // A second attempt fails the same way instead of corrupting anything.
    EXPECT_EQ((*store)->CommitReports({MakeBatch(committed, kBatch)})
                  .status()
                  .code(),
              absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(*(*store)->CountSamples(), int64_t{committed} * kBatch);
  }
  // With room again (no cap) the failed batch goes in.
  auto store = Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE((*store)->CheckIntegrity().ok());
  EXPECT_EQ(*(*store)->CountSamples(), int64_t{committed} * kBatch);
  auto added = (*store)->CommitReports({MakeBatch(committed, kBatch)});
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(*added, kBatch);
  auto samples = (*store)->ListSamplesForRun("r1");
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), static_cast<size_t>(committed + 1) * kBatch);
  EXPECT_EQ(samples->front().id(), SampleId(0, 0));
  EXPECT_EQ(samples->back().id(), SampleId(committed, kBatch - 1));
}

// The child commits batches in a loop and, after each commit returns OK,
// writes the number of committed batches to a pipe. The parent SIGKILLs it
// at some point (most likely mid-commit), reopens the file and checks that
// every acknowledged batch is present in full and nothing is half-written.
void CrashDuringCommits(int kill_after_batches, absl::Duration extra_delay) {
  TempDir dir;
  const std::string path = dir.File("crash.db");
  Seed(path);
  constexpr int kBatch = 200;

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    auto store = Open(path);
    if (!store.ok()) _exit(2);
    TaskRecord task;
    task.task_id = "t1";
    task.state = v1::TASK_STATE_RUNNING;
    for (int32_t batch = 0;; ++batch) {
      Store::ReportWrite report = MakeBatch(batch, kBatch);
      task.reason = absl::StrCat("batch ", batch);
      report.task = &task;
      auto added = (*store)->CommitReports({report});
      if (!added.ok() || *added != kBatch) _exit(3);
      const int32_t done = batch + 1;
      if (write(fds[1], &done, sizeof done) != sizeof done) _exit(4);
    }
  }
  close(fds[1]);
  int32_t acknowledged = 0;
  int32_t value = 0;
  while (acknowledged < kill_after_batches &&
         read(fds[0], &value, sizeof value) == sizeof value) {
    acknowledged = value;
  }
  absl::SleepFor(extra_delay);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wstatus))
      << "child exited early with " << WEXITSTATUS(wstatus);
  // Acknowledgements written before the kill are in the pipe.
  while (read(fds[0], &value, sizeof value) == sizeof value) acknowledged = value;
  close(fds[0]);
  ASSERT_GE(acknowledged, kill_after_batches);

  auto store = Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE((*store)->CheckIntegrity().ok());
  auto samples = (*store)->ListSamplesForRun("r1");
  ASSERT_TRUE(samples.ok()) << samples.status();
  std::set<std::string> ids;
  for (const v1::Sample& s : *samples) ids.insert(s.id());
  for (int batch = 0; batch < acknowledged; ++batch) {
    for (int i = 0; i < kBatch; ++i) {
      ASSERT_TRUE(ids.count(SampleId(batch, i)))
          << "acknowledged sample " << SampleId(batch, i) << " lost";
    }
  }
  // Batches are atomic: at most one committed but not yet acknowledged.
  EXPECT_EQ(ids.size() % kBatch, 0u);
  EXPECT_LE(ids.size(), static_cast<size_t>(acknowledged + 1) * kBatch);
  // The task update committed with the last stored batch.
  auto tasks = (*store)->ListTasks("r1");
  ASSERT_TRUE(tasks.ok());
  EXPECT_EQ((*tasks)[0].reason,
            absl::StrCat("batch ", ids.size() / kBatch - 1));
  // And the store keeps working.
  auto added = (*store)->CommitReports({MakeBatch(1'000'000, kBatch)});
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(*added, kBatch);
}

TEST(StoreFaultTest, SigkillDuringCommitsLosesNoAcknowledgedBatch) {
  CrashDuringCommits(20, absl::ZeroDuration());
  CrashDuringCommits(300, absl::Microseconds(700));  // past a fold (256 rows)
  CrashDuringCommits(5, absl::Milliseconds(3));
}

}  // namespace
}  // namespace fleetbench::storage
