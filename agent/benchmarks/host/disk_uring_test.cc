#include "agent/benchmarks/host/disk_uring.h"

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
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

TEST(DiskParamsTest, DefaultsWhenEmpty) {
  absl::StatusOr<DiskConfig> config = ParseDiskParams({});
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->workloads.size(), 4u);
  EXPECT_STREQ(config->workloads[0]->name, "seq_read");
  EXPECT_EQ(config->file_mib, 1024);
  EXPECT_EQ(config->iodepth, 0);
  EXPECT_EQ(config->IodepthFor(*config->workloads[0]), 8);
  EXPECT_EQ(config->IodepthFor(*config->workloads[2]), 32);
  EXPECT_EQ(config->jobs, 1);
  EXPECT_DOUBLE_EQ(config->ramp_seconds, 2);
  EXPECT_DOUBLE_EQ(config->runtime_seconds, 10);
  EXPECT_TRUE(config->direct);
}

TEST(DiskParamsTest, DefaultTimeoutGrowsWithTheFileAndTheWorkloads) {
  DiskUringBenchmark disk;
  // The defaults (1 GiB, four 12-second workloads) fit the base half hour.
  EXPECT_EQ(disk.DefaultTimeout({}), absl::Minutes(30));
  // A 1 TiB file takes its fill at 20 MiB/s, over 14 hours.
  EXPECT_GT(disk.DefaultTimeout({{"file_mib", "1048576"}}), absl::Hours(14));
  // Bad parameters fail validation; the timeout falls back to the base.
  EXPECT_EQ(disk.DefaultTimeout({{"file_mib", "lots"}}), absl::Minutes(30));
}

TEST(DiskParamsTest, AcceptsGoodValues) {
  absl::StatusOr<DiskConfig> config = ParseDiskParams({
      {"workloads", "rand_write_4k, seq_read"},
      {"file_mib", "64"},
      {"iodepth", "16"},
      {"jobs", "4"},
      {"ramp_seconds", "0"},
      {"runtime_seconds", "0.5"},
      {"direct", "0"},
  });
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->workloads.size(), 2u);
  EXPECT_STREQ(config->workloads[0]->name, "rand_write_4k");
  EXPECT_STREQ(config->workloads[1]->name, "seq_read");
  EXPECT_EQ(config->file_mib, 64);
  EXPECT_EQ(config->IodepthFor(*config->workloads[1]), 16);
  EXPECT_EQ(config->jobs, 4);
  EXPECT_DOUBLE_EQ(config->ramp_seconds, 0);
  EXPECT_DOUBLE_EQ(config->runtime_seconds, 0.5);
  EXPECT_FALSE(config->direct);
}

struct BadCase {
  Params params;
  std::string message;
};

class DiskBadParamsTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(DiskBadParamsTest, RejectedWithActionableMessage) {
  DiskUringBenchmark disk;
  const absl::Status status = disk.ValidateParams(GetParam().params);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    All, DiskBadParamsTest,
    ::testing::Values(
        BadCase{{{"size", "1"}}, "unknown parameter 'size'"},
        BadCase{{{"workloads", "randread"}}, "'randread' is not one of"},
        BadCase{{{"workloads", "seq_read,seq_read"}}, "listed twice"},
        BadCase{{{"workloads", ""}}, "is empty"},
        BadCase{{{"workloads", "seq_read,"}}, "empty entry"},
        BadCase{{{"file_mib", "0"}}, "file_mib: 0 is outside"},
        BadCase{{{"file_mib", "1G"}}, "'1G' is not an integer"},
        BadCase{{{"iodepth", "0"}}, "iodepth: 0 is outside 1..1024"},
        BadCase{{{"jobs", "65"}}, "jobs: 65 is outside 1..64"},
        BadCase{{{"ramp_seconds", "-1"}}, "ramp_seconds: -1 is outside"},
        BadCase{{{"runtime_seconds", "0"}}, "runtime_seconds: 0 is outside"},
        BadCase{{{"runtime_seconds", "nan"}}, "is not a number"},
        BadCase{{{"direct", "yes"}}, "'yes' is not one of 0, 1, true, false"},
        BadCase{{{"file_mib", "2"}, {"jobs", "4"}}, "cannot be split"},
        BadCase{{{"iodepth", "1024"}, {"jobs", "8"}}, "MiB of buffers"}));

// Runs in a fresh canonical folder under the test temp dir.
class DiskRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DiskUringBenchmark disk;
    if (absl::Status s = disk.Probe(); !s.ok()) GTEST_SKIP() << s;
    std::string pattern = fs::canonical(::testing::TempDir()).string() +
                          "/disk_uring_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    scratch_ = pattern;
  }
  void TearDown() override {
    if (!scratch_.empty()) fs::remove_all(scratch_);
  }
  bool ScratchIsEmpty() const { return fs::is_empty(scratch_); }

  std::string scratch_;
};

TEST_F(DiskRunTest, TinyRunGivesAllTenMetricsAndRemovesTheFile) {
  DiskUringBenchmark disk;
  std::vector<double> progress;
  RunContext context(scratch_, nullptr,
                     [&progress](double fraction, const std::string&) {
                       progress.push_back(fraction);
                     });
  absl::StatusOr<std::vector<v1::Sample>> samples = disk.Run(
      {{"file_mib", "8"}, {"runtime_seconds", "0.2"}, {"ramp_seconds", "0.05"}},
      context);
  ASSERT_TRUE(samples.ok()) << samples.status();

  std::set<std::string> metrics;
  for (const v1::Sample& s : *samples) {
    metrics.insert(s.metric());
    // Every metric is declared by the plugin, with the declared unit.
    const std::optional<MetricInfo> info = DeclaredMetric(DiskUringBenchmark(), s.metric());
    ASSERT_TRUE(info.has_value()) << s.metric();
    EXPECT_EQ(s.unit(), info->unit);
    EXPECT_GT(s.value(), 0) << s.metric();
    const auto& p = s.params();
    EXPECT_EQ(p.at("file_mib"), "8");
    EXPECT_EQ(p.at("runtime_seconds"), "0.2");
    EXPECT_EQ(p.at("jobs"), "1");
    EXPECT_TRUE(p.at("direct") == "1" || p.count("direct_fallback") > 0);
    EXPECT_NE(p.at("filesystem"), "");
    EXPECT_THAT(p.at("fio_equivalent"), HasSubstr("--runtime=200ms"));
  }
  EXPECT_EQ(metrics,
            (std::set<std::string>{
                "disk.seq_read.MBps", "disk.seq_write.MBps",
                "disk.rand_read_4k.iops", "disk.rand_read_4k.p50_us",
                "disk.rand_read_4k.p99_us", "disk.rand_read_4k.p999_us",
                "disk.rand_write_4k.iops", "disk.rand_write_4k.p50_us",
                "disk.rand_write_4k.p99_us", "disk.rand_write_4k.p999_us"}));
  EXPECT_EQ(samples->size(), 10u);
  for (const v1::Sample& s : *samples) {
    if (s.metric() == "disk.seq_read.MBps") {
      EXPECT_EQ(s.unit(), "MBps");
      EXPECT_EQ(s.params().at("block_bytes"), "1048576");
      EXPECT_EQ(s.params().at("iodepth"), "8");
    }
    if (s.metric() == "disk.rand_read_4k.iops") {
      EXPECT_EQ(s.unit(), "iops");
      EXPECT_EQ(s.params().at("block_bytes"), "4096");
      EXPECT_EQ(s.params().at("iodepth"), "32");
    }
    if (s.metric() == "disk.rand_write_4k.p999_us") {
      EXPECT_EQ(s.unit(), "us");
    }
  }
  const auto get = [&](const std::string& metric) {
    for (const v1::Sample& s : *samples) {
      if (s.metric() == metric) return s.value();
    }
    return -1.0;
  };
  EXPECT_LE(get("disk.rand_read_4k.p50_us"), get("disk.rand_read_4k.p99_us"));
  EXPECT_LE(get("disk.rand_read_4k.p99_us"), get("disk.rand_read_4k.p999_us"));
  ASSERT_FALSE(progress.empty());
  EXPECT_DOUBLE_EQ(progress.back(), 1.0);
  EXPECT_TRUE(ScratchIsEmpty());
}

TEST_F(DiskRunTest, SeveralJobsAndBufferedIo) {
  DiskUringBenchmark disk;
  RunContext context(scratch_, nullptr, nullptr);
  absl::StatusOr<std::vector<v1::Sample>> samples =
      disk.Run({{"file_mib", "8"},
                {"jobs", "2"},
                {"iodepth", "4"},
                {"direct", "0"},
                {"workloads", "rand_read_4k,seq_write"},
                {"runtime_seconds", "0.1"},
                {"ramp_seconds", "0"}},
               context);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 5u);
  for (const v1::Sample& s : *samples) {
    EXPECT_GT(s.value(), 0) << s.metric();
    EXPECT_EQ(s.params().at("direct"), "0");
    EXPECT_EQ(s.params().count("direct_fallback"), 0u);
    EXPECT_EQ(s.params().at("jobs"), "2");
    EXPECT_EQ(s.params().at("iodepth"), "4");
  }
  EXPECT_EQ((*samples)[0].metric(), "disk.rand_read_4k.iops");
  EXPECT_EQ((*samples)[4].metric(), "disk.seq_write.MBps");
  EXPECT_TRUE(ScratchIsEmpty());
}

TEST_F(DiskRunTest, CancellationStopsQuicklyAndRemovesTheFile) {
  DiskUringBenchmark disk;
  std::atomic<bool> cancelled{false};
  RunContext context(scratch_, &cancelled, nullptr);
  std::thread canceller([&cancelled] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancelled = true;
  });
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<v1::Sample>> samples = disk.Run(
      {{"file_mib", "8"}, {"runtime_seconds", "30"}, {"ramp_seconds", "0"}},
      context);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  canceller.join();
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kCancelled);
  EXPECT_LT(seconds, 5);
  EXPECT_TRUE(ScratchIsEmpty());
}

TEST_F(DiskRunTest, RemovesFilesOfKilledRuns) {
  const std::string stale = scratch_ + "/fleetbench-disk-00000000000000aa.dat";
  std::ofstream(stale) << "left by a killed run";
  DiskUringBenchmark disk;
  RunContext context(scratch_, nullptr, nullptr);
  absl::StatusOr<std::vector<v1::Sample>> samples =
      disk.Run({{"file_mib", "2"},
                {"workloads", "seq_read"},
                {"runtime_seconds", "0.05"},
                {"ramp_seconds", "0"}},
               context);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ((*samples)[0].params().at("stale_files_removed"), "1");
  EXPECT_TRUE(ScratchIsEmpty());
}

TEST_F(DiskRunTest, RefusesWhenFreeSpaceIsShort) {
  DiskUringBenchmark disk;
  RunContext context(scratch_, nullptr, nullptr);
  absl::StatusOr<std::vector<v1::Sample>> samples =
      disk.Run({{"file_mib", "16777216"}}, context);
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(samples.status().message(), HasSubstr("MiB free"));
  EXPECT_THAT(samples.status().message(), HasSubstr("needs"));
  EXPECT_TRUE(ScratchIsEmpty());
}

TEST_F(DiskRunTest, RefusesBadScratchDirs) {
  DiskUringBenchmark disk;
  for (const std::string& dir :
       {scratch_ + "/missing",
        scratch_ + "/../" + fs::path(scratch_).filename().string(),
        std::string("relative")}) {
    RunContext context(dir, nullptr, nullptr);
    absl::StatusOr<std::vector<v1::Sample>> samples =
        disk.Run({{"file_mib", "1"}}, context);
    EXPECT_EQ(samples.status().code(), absl::StatusCode::kFailedPrecondition)
        << dir;
  }
  EXPECT_TRUE(ScratchIsEmpty());
}

TEST_F(DiskRunTest, InvalidParamsFailBeforeTouchingTheDisk) {
  DiskUringBenchmark disk;
  RunContext context(scratch_, nullptr, nullptr);
  EXPECT_EQ(disk.Run({{"jobs", "0"}}, context).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ScratchIsEmpty());
}

TEST(DiskProbeTest, NameIsPermanent) {
  EXPECT_EQ(DiskUringBenchmark().name(), "disk");
}

}  // namespace
}  // namespace fleetbench::agent
