#include "agent/benchmarks/gpu/gpu_allreduce.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(AllreduceTest, DefaultSweepIsOneMiBToOneGiBDoubling) {
  const std::vector<uint64_t> sizes = DoublingSweep(kMiB, 1024 * kMiB);
  ASSERT_EQ(sizes.size(), 11u);
  EXPECT_EQ(sizes.front(), kMiB);
  EXPECT_EQ(sizes.back(), 1024 * kMiB);
  EXPECT_EQ(sizes[1], 2 * kMiB);
}

TEST(AllreduceTest, SweepEndsAtMaxEvenOffTheDoubling) {
  EXPECT_THAT(DoublingSweep(100, 500), ElementsAre(100, 200, 400, 500));
  EXPECT_THAT(DoublingSweep(64, 64), ElementsAre(64));
  EXPECT_TRUE(DoublingSweep(0, 64).empty());
  EXPECT_TRUE(DoublingSweep(128, 64).empty());
}

TEST(AllreduceTest, ParamsDefaultsAndSuffixes) {
  absl::StatusOr<AllreduceConfig> config = ParseAllreduceParams({});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->ops, ElementsAre("allreduce"));
  EXPECT_EQ(config->min_bytes, kMiB);
  EXPECT_EQ(config->max_bytes, 1024 * kMiB);
  EXPECT_EQ(config->iters, 20);
  EXPECT_EQ(config->warmup, 5);

  config = ParseAllreduceParams({{"ops", "allreduce,allgather,reducescatter"},
                                 {"min_bytes", "64K"},
                                 {"max_bytes", "2G"},
                                 {"iters", "7"},
                                 {"warmup", "0"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->ops.size(), 3u);
  EXPECT_EQ(config->min_bytes, 64u << 10);
  EXPECT_EQ(config->max_bytes, 2048 * kMiB);
}

TEST(AllreduceTest, BadParamsSayWhatIsWrong) {
  EXPECT_THAT(ParseAllreduceParams({{"ops", "alltoall"}}).status().message(),
              HasSubstr("'alltoall' is not one of"));
  EXPECT_THAT(
      ParseAllreduceParams({{"min_bytes", "8M"}, {"max_bytes", "1M"}})
          .status()
          .message(),
      HasSubstr("below min_bytes"));
  EXPECT_THAT(ParseAllreduceParams({{"max_bytes", "1T"}}).status().message(),
              HasSubstr("not a byte count"));
  EXPECT_THAT(ParseAllreduceParams({{"max_bytes", "64G"}}).status().message(),
              HasSubstr("outside"));
  EXPECT_EQ(ParseAllreduceParams({{"iters", "0"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseAllreduceParams({{"what", "1"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

FleetbenchGpuCollectivePoint Point(uint64_t bytes, double seconds) {
  FleetbenchGpuCollectivePoint p{};
  p.bytes = bytes;
  p.seconds = seconds;
  p.checked = 1024;
  return p;
}

TEST(AllreduceTest, HeadlineIsTheLargestSizeNeverAnAverage) {
  // 8 GPUs: allreduce factor 2·7/8 = 1.75.
  const std::vector<FleetbenchGpuCollectivePoint> points = {
      Point(1'000'000, 1e-4),          // 10 GB/s algbw
      Point(1'000'000'000, 0.01),      // 100 GB/s algbw
  };
  absl::StatusOr<std::vector<v1::Sample>> samples =
      CollectiveSamples("allreduce", 8, 22809, points);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 3u);
  const v1::Sample& headline = (*samples)[0];
  EXPECT_EQ(headline.metric(), "allreduce.nccl.busbw_GBps");
  EXPECT_EQ(headline.unit(), "GBps");
  EXPECT_DOUBLE_EQ(headline.value(), 175.0);
  EXPECT_EQ(headline.params().at("bytes"), "1000000000");
  EXPECT_EQ(headline.params().at("algbw_GBps"), "100");
  EXPECT_EQ(headline.params().at("ranks"), "8");
  EXPECT_EQ(headline.params().at("nccl_version"), "22809");
  EXPECT_EQ((*samples)[1].metric(), "allreduce.nccl.curve_busbw_GBps");
  EXPECT_DOUBLE_EQ((*samples)[1].value(), 17.5);
  EXPECT_EQ((*samples)[1].params().at("op"), "allreduce");
  EXPECT_EQ((*samples)[1].params().at("bytes"), "1000000");
}

TEST(AllreduceTest, GatherAndScatterUseTheirFactor) {
  const std::vector<FleetbenchGpuCollectivePoint> points = {
      Point(4'000'000'000, 0.1)};  // 40 GB/s algbw, 4 GPUs: factor 3/4
  for (const char* op : {"allgather", "reducescatter"}) {
    absl::StatusOr<std::vector<v1::Sample>> samples =
        CollectiveSamples(op, 4, 1, points);
    ASSERT_TRUE(samples.ok());
    EXPECT_EQ((*samples)[0].metric(), std::string(op) + ".nccl.busbw_GBps");
    EXPECT_DOUBLE_EQ((*samples)[0].value(), 30.0);
    EXPECT_EQ((*samples)[1].params().at("op"), op);
    // Every metric is declared by the plugin, with the declared unit.
    for (const v1::Sample& s : *samples) {
      const auto info = agent::DeclaredMetric(AllreduceBenchmark(), s.metric());
      ASSERT_TRUE(info.has_value()) << s.metric();
      EXPECT_EQ(info->unit, s.unit());
    }
  }
}

TEST(AllreduceTest, OneGpuHasNoBusTraffic) {
  absl::StatusOr<std::vector<v1::Sample>> samples =
      CollectiveSamples("allreduce", 1, 1, {Point(1'000'000, 1e-4)});
  ASSERT_TRUE(samples.ok());
  EXPECT_EQ((*samples)[0].value(), 0.0);
  EXPECT_EQ((*samples)[0].params().at("algbw_GBps"), "10");
}

TEST(AllreduceTest, WrongDataFailsTheRunWithTheFirstBadElement) {
  FleetbenchGpuCollectivePoint bad = Point(1 << 20, 1e-4);
  bad.mismatches = 3;
  bad.first_expected = 36;
  bad.first_actual = 35;
  absl::StatusOr<std::vector<v1::Sample>> samples =
      CollectiveSamples("allreduce", 8, 1, {Point(1 << 10, 1e-5), bad});
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(samples.status().message(),
              HasSubstr("3 of 1024 checked elements differ (first: expected "
                        "36, got 35)"));
  EXPECT_EQ(CollectiveSamples("allreduce", 2, 1, {Point(1024, 0)})
                .status()
                .code(),
            absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace fleetbench::gpu
