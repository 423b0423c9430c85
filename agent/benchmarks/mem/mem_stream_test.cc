#include "agent/benchmarks/mem/mem_stream.h"

#include <atomic>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using ::testing::HasSubstr;

TEST(MemParamsTest, DefaultsWhenEmpty) {
  absl::StatusOr<MemStreamConfig> config = ParseMemStreamParams({});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->array_mib, 0);
  EXPECT_EQ(config->repetitions, 10);
  EXPECT_GE(config->threads, 1);
}

TEST(MemParamsTest, AcceptsGoodValues) {
  absl::StatusOr<MemStreamConfig> config = ParseMemStreamParams(
      {{"array_mib", "256"}, {"repetitions", "2"}, {"threads", "3"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->array_mib, 256);
  EXPECT_EQ(config->repetitions, 2);
  EXPECT_EQ(config->threads, 3);
}

struct BadCase {
  Params params;
  std::string message;
};

class MemBadParamsTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(MemBadParamsTest, RejectedWithActionableMessage) {
  MemStreamBenchmark mem;
  const absl::Status status = mem.ValidateParams(GetParam().params);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    All, MemBadParamsTest,
    ::testing::Values(
        BadCase{{{"ntimes", "5"}}, "mem: unknown parameter 'ntimes'"},
        BadCase{{{"array_mib", "0"}}, "array_mib: 0 is outside"},
        BadCase{{{"array_mib", "lots"}}, "'lots' is not an integer"},
        BadCase{{{"repetitions", "1"}}, "repetitions: 1 is outside 2..200"},
        BadCase{{{"repetitions", "201"}}, "outside 2..200"},
        BadCase{{{"threads", "0"}}, "threads: 0 is outside"}));

TEST(MemRunTest, TinyRunGivesFourPositiveRates) {
  MemStreamBenchmark mem;
  ASSERT_TRUE(mem.Probe().ok());
  int reports = 0;
  RunContext context("/tmp", nullptr,
                     [&reports](double, const std::string&) { ++reports; });
  absl::StatusOr<std::vector<v1::Sample>> samples =
      mem.Run({{"array_mib", "8"}, {"repetitions", "3"}}, context);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 4u);
  const std::vector<std::string> want = {"mem.copy.GBps", "mem.scale.GBps",
                                         "mem.add.GBps", "mem.triad.GBps"};
  for (size_t i = 0; i < 4; ++i) {
    const v1::Sample& s = (*samples)[i];
    EXPECT_EQ(s.metric(), want[i]);
    // Every metric is declared by the plugin, with the declared unit.
    const std::optional<MetricInfo> info = DeclaredMetric(MemStreamBenchmark(), s.metric());
    ASSERT_TRUE(info.has_value()) << s.metric();
    EXPECT_EQ(s.unit(), info->unit);
    EXPECT_EQ(s.unit(), "GBps");
    EXPECT_GT(s.value(), 0);
    EXPECT_EQ(s.params().at("array_mib"), "8");
    EXPECT_EQ(s.params().at("array_elements"), std::to_string(1 << 20));
    EXPECT_EQ(s.params().at("repetitions"), "3");
    EXPECT_EQ(s.params().at("timed_repetitions"), "2");
    EXPECT_EQ(s.params().at("validated"), "true");
    // Best is the reported value and never below the median.
    EXPECT_GE(s.value(), std::stod(s.params().at("median_GBps")) * 0.999);
  }
  EXPECT_EQ((*samples)[0].params().at("bytes_per_pass"),
            std::to_string(2 * 8 * (1 << 20)));
  EXPECT_EQ((*samples)[3].params().at("bytes_per_pass"),
            std::to_string(3 * 8 * (1 << 20)));
  EXPECT_GE(reports, 3);
}

TEST(MemRunTest, MoreThreadsThanCpusRunsUnpinned) {
  MemStreamBenchmark mem;
  RunContext context("/tmp", nullptr, nullptr);
  absl::StatusOr<std::vector<v1::Sample>> samples = mem.Run(
      {{"array_mib", "4"}, {"repetitions", "2"}, {"threads", "300"}}, context);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ((*samples)[0].params().at("threads"), "300");
  EXPECT_EQ((*samples)[0].params().at("pinned"), "false");
}

TEST(MemRunTest, CancelledBeforeStart) {
  MemStreamBenchmark mem;
  std::atomic<bool> cancelled{true};
  RunContext context("/tmp", &cancelled, nullptr);
  EXPECT_EQ(mem.Run({{"array_mib", "4"}}, context).status().code(),
            absl::StatusCode::kCancelled);
}

TEST(MemRunTest, NameIsPermanent) {
  EXPECT_EQ(MemStreamBenchmark().name(), "mem");
}

}  // namespace
}  // namespace fleetbench::agent
