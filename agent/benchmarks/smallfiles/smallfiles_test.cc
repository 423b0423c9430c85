#include "agent/benchmarks/smallfiles/smallfiles.h"

#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

TEST(SmallFilesParamsTest, Defaults) {
  absl::StatusOr<SmallFilesConfig> config = ParseSmallFilesParams({});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->files, 20000);
  EXPECT_EQ(config->file_bytes, 128 * 1024);
  EXPECT_EQ(config->threads, 8);
  EXPECT_TRUE(config->path.empty());
  EXPECT_FALSE(config->direct);
}

struct BadCase {
  Params params;
  std::string message;
};
class SmallFilesBadParamsTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(SmallFilesBadParamsTest, RejectedWithActionableMessage) {
  const absl::Status status = SmallFilesBenchmark().ValidateParams(GetParam().params);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    All, SmallFilesBadParamsTest,
    ::testing::Values(
        BadCase{{{"count", "1"}}, "unknown parameter 'count'"},
        BadCase{{{"files", "0"}}, "files: 0 is outside 1..10000000"},
        BadCase{{{"files", "many"}}, "files: 'many' is not an integer"},
        BadCase{{{"file_kib", "0"}}, "file_kib: 0 is outside 1..65536"},
        BadCase{{{"file_kib", "65537"}}, "file_kib: 65537 is outside"},
        BadCase{{{"files", "10000000"}, {"file_kib", "65536"}}, "over 1 TiB"},
        BadCase{{{"threads", "0"}}, "threads: 0 is outside 1..256"},
        BadCase{{{"threads", "257"}}, "threads: 257 is outside"},
        BadCase{{{"path", "data"}}, "path: 'data' is not an absolute path"},
        BadCase{{{"path", "/data/../etc"}}, "'..' component"},
        BadCase{{{"path", "/data"}, {"file_kib", "4"}}, "file_kib: applies to files"},
        BadCase{{{"direct", "maybe"}}, "direct: 'maybe' is not one of"},
        BadCase{{{"runtime_seconds", "0"}}, "runtime_seconds: 0 is outside"}));

class SmallFilesRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        fs::canonical(::testing::TempDir()).string() + "/smallfiles_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directory(scratch());
  }
  void TearDown() override {
    if (!root_.empty()) fs::remove_all(root_);
  }
  std::string scratch() const { return root_ + "/scratch"; }
  double ValueOf(const std::vector<v1::Sample>& samples, const std::string& metric) {
    for (const v1::Sample& s : samples) {
      if (s.metric() == metric) return s.value();
    }
    ADD_FAILURE() << "no sample " << metric;
    return -1;
  }

  std::string root_;
};

TEST_F(SmallFilesRunTest, MakesReadsAndRemovesItsFiles) {
  SmallFilesBenchmark bench;
  std::vector<double> progress;
  RunContext context(scratch(), nullptr, [&progress](double f, const std::string&) {
    progress.push_back(f);
  });
  absl::StatusOr<std::vector<v1::Sample>> samples =
      bench.Run({{"files", "300"}, {"file_kib", "16"}, {"threads", "3"}}, context);
  ASSERT_TRUE(samples.ok()) << samples.status();
  std::set<std::string> metrics;
  for (const v1::Sample& s : *samples) {
    metrics.insert(s.metric());
    const std::optional<MetricInfo> info = DeclaredMetric(bench, s.metric());
    ASSERT_TRUE(info.has_value()) << s.metric();
    EXPECT_EQ(s.unit(), info->unit);
    EXPECT_GT(s.value(), 0) << s.metric();
    EXPECT_EQ(s.params().at("source"), "scratch");
    EXPECT_EQ(s.params().at("files"), "300");
    EXPECT_EQ(s.params().at("files_read"), "300");
    EXPECT_EQ(s.params().at("complete_pass"), "1");
    EXPECT_EQ(s.params().at("bytes_read"), "4915200");  // 300 × 16 KiB
    EXPECT_EQ(s.params().at("threads"), "3");
  }
  EXPECT_EQ(metrics.size(), bench.metrics().size());
  const double files_per_s = ValueOf(*samples, "smallfiles.files_per_s");
  EXPECT_NEAR(ValueOf(*samples, "smallfiles.MBps"), files_per_s * 16384 / 1e6,
              files_per_s * 16384 / 1e6 * 1e-9);
  EXPECT_LE(ValueOf(*samples, "smallfiles.open_p50_us"),
            ValueOf(*samples, "smallfiles.open_p99_us"));
  // readdir lists "." and ".." too.
  EXPECT_GT(ValueOf(*samples, "smallfiles.readdir_entries_per_s"), 0);
  ASSERT_FALSE(progress.empty());
  EXPECT_DOUBLE_EQ(progress.back(), 1.0);
  EXPECT_TRUE(fs::is_empty(scratch()));
}

TEST_F(SmallFilesRunTest, RemovesFoldersOfKilledRunsOnly) {
  const std::string stale = scratch() + "/fleetbench-smallfiles-00000000000000aa";
  fs::create_directory(stale);
  std::ofstream(stale + "/f0000000.bin") << "left by a killed run";
  const std::string other = scratch() + "/someone-elses";
  fs::create_directory(other);
  SmallFilesBenchmark bench;
  RunContext context(scratch(), nullptr, nullptr);
  absl::StatusOr<std::vector<v1::Sample>> samples =
      bench.Run({{"files", "10"}, {"file_kib", "4"}}, context);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ((*samples)[0].params().at("stale_folders_removed"), "1");
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(other));
}

// A dataset folder is read only when the agent's configuration allows it.
TEST_F(SmallFilesRunTest, DatasetPathMustBeUnderAnAllowedRoot) {
  const std::string data = root_ + "/data/train";
  fs::create_directories(data);
  for (int i = 0; i < 40; ++i) {
    std::ofstream(data + "/img" + std::to_string(i) + ".jpg") << std::string(1000 + i, 'x');
  }
  fs::create_directory(data + "/subfolder");
  fs::create_symlink("/etc/hostname", data + "/link.jpg");
  SmallFilesBenchmark bench;

  RunContext denied(scratch(), nullptr, nullptr);
  absl::StatusOr<std::vector<v1::Sample>> refused = bench.Run({{"path", data}}, denied);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("--dataset-root"));

  RunContext elsewhere(scratch(), nullptr, nullptr);
  elsewhere.set_dataset_roots({root_ + "/dat"});  // a prefix, not a parent
  EXPECT_EQ(bench.Run({{"path", data}}, elsewhere).status().code(),
            absl::StatusCode::kFailedPrecondition);

  RunContext allowed(scratch(), nullptr, nullptr);
  allowed.set_dataset_roots({root_ + "/data"});
  absl::StatusOr<std::vector<v1::Sample>> samples =
      bench.Run({{"path", data}, {"threads", "2"}}, allowed);
  ASSERT_TRUE(samples.ok()) << samples.status();
  const auto& p = (*samples)[0].params();
  EXPECT_EQ(p.at("source"), "dataset");
  EXPECT_EQ(p.at("files"), "40");  // regular files only: no folder, no symlink
  int64_t bytes = 0;
  ASSERT_TRUE(absl::SimpleAtoi(p.at("bytes_read"), &bytes));
  EXPECT_EQ(bytes, 40 * 1000 + 39 * 40 / 2);
  EXPECT_TRUE(fs::is_empty(scratch()));

  // A random subset with files=N; the dataset is never written.
  samples = bench.Run({{"path", data}, {"files", "7"}}, allowed);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ((*samples)[0].params().at("files_read"), "7");
  EXPECT_EQ(std::distance(fs::directory_iterator(data), fs::directory_iterator()), 42);
}

TEST_F(SmallFilesRunTest, DatasetPathThroughASymlinkIsRefused) {
  fs::create_directories(root_ + "/data/real");
  std::ofstream(root_ + "/data/real/a") << "a";
  fs::create_directory_symlink(root_ + "/data/real", root_ + "/data/alias");
  SmallFilesBenchmark bench;
  RunContext allowed(scratch(), nullptr, nullptr);
  allowed.set_dataset_roots({root_ + "/data"});
  absl::StatusOr<std::vector<v1::Sample>> samples =
      bench.Run({{"path", root_ + "/data/alias"}}, allowed);
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(samples.status().message(), HasSubstr("symlink"));
}

TEST_F(SmallFilesRunTest, EmptyDatasetIsSkippedWithTheReason) {
  fs::create_directories(root_ + "/data/empty");
  SmallFilesBenchmark bench;
  RunContext allowed(scratch(), nullptr, nullptr);
  allowed.set_dataset_roots({root_ + "/data"});
  absl::StatusOr<std::vector<v1::Sample>> samples =
      bench.Run({{"path", root_ + "/data/empty"}}, allowed);
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(samples.status().message(), HasSubstr("no regular files"));
}

TEST_F(SmallFilesRunTest, CancellationRemovesTheFiles) {
  SmallFilesBenchmark bench;
  std::atomic<bool> cancelled{false};
  RunContext context(scratch(), &cancelled, [&cancelled](double, const std::string& m) {
    // Cancel once the files exist and reading begins.
    if (m == "smallfiles: reading") cancelled = true;
  });
  absl::StatusOr<std::vector<v1::Sample>> samples =
      bench.Run({{"files", "200"}, {"file_kib", "4"}}, context);
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(fs::is_empty(scratch()));
}

TEST_F(SmallFilesRunTest, RefusesWhenFreeSpaceIsShort) {
  SmallFilesBenchmark bench;
  RunContext context(scratch(), nullptr, nullptr);
  // Just under the 1 TiB that validation allows: free space decides.
  absl::StatusOr<std::vector<v1::Sample>> samples =
      bench.Run({{"files", "8000000"}, {"file_kib", "128"}}, context);
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(samples.status().message(), HasSubstr("free"));
  EXPECT_TRUE(fs::is_empty(scratch()));
}

TEST(SmallFilesProbeTest, NameIsPermanent) {
  EXPECT_EQ(SmallFilesBenchmark().name(), "smallfiles");
}

}  // namespace
}  // namespace fleetbench::agent
