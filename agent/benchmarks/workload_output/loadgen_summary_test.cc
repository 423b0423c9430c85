#include "agent/benchmarks/workload_output/loadgen_summary.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "agent/benchmarks/workload_output/seeded_mutator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using ::testing::HasSubstr;

// Summaries in the shape LoadGen writes them (loadgen/results.cc and the
// files of MLPerf Inference submissions); SUT names and numbers made up.

constexpr char kOffline[] = R"(================================================
MLPerf Results Summary
================================================
SUT name : ResNet50_TRT
Scenario : Offline
Mode     : PerformanceOnly
Samples per second: 91234.5
Result is : VALID
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: Yes

================================================
Additional Stats
================================================
Min latency (ns)                : 28612340
Max latency (ns)                : 659872011234
Mean latency (ns)               : 330123456789
50.00 percentile latency (ns)   : 330456789012
90.00 percentile latency (ns)   : 594123456789
99.00 percentile latency (ns)   : 653210987654

================================================
Test Parameters Used
================================================
samples_per_query : 60210000
target_qps : 91000
target_latency (ns): 0
min_duration (ms): 600000
performance_sample_count : 2048

No warnings encountered during test.

No errors encountered during test.
)";

// A Server run without token latencies, as LoadGen 4.x wrote it: completed
// samples per second above, scheduled in the additional stats.
constexpr char kServer[] = R"(================================================
MLPerf Results Summary
================================================
SUT name : BERT SERVER
Scenario : Server
Mode     : PerformanceOnly
Completed samples per second    : 15012.34
Result is : VALID
  Performance constraints satisfied : Yes
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: Yes
Early Stopping Result:
 * Run successful.

================================================
Additional Stats
================================================
Scheduled samples per second : 15013.02
Min latency (ns)                : 2998768
Max latency (ns)                : 193952835
Mean latency (ns)               : 23656561
99.00 percentile latency (ns)   : 41691435

================================================
Test Parameters Used
================================================
samples_per_query : 1
target_qps : 15010
target_latency (ns): 130000000
)";

// An LLM Server run: token rates, and completed tokens per second printed
// twice (above and in the additional stats).
constexpr char kLlmServer[] =
    R"(================================================
MLPerf Results Summary
================================================
SUT name : PySUT
Scenario : Server
Mode     : PerformanceOnly
Completed samples per second    : 71.25
Completed tokens per second: 20931.77
Result is : VALID
  Performance constraints satisfied : Yes
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: Yes
TTFT Early Stopping Result:
 * Run successful.
TPOT Early Stopping Result:
 * Run successful.

================================================
Additional Stats
================================================
Scheduled samples per second : 72.03
Min latency (ns)                : 801234567
99.00 percentile latency (ns)   : 141859875314

Completed tokens per second                 : 20931.77
Min First Token latency (ns)                : 240310998
99.00 percentile first token latency (ns)   : 1660370476

================================================
Test Parameters Used
================================================
samples_per_query : 1
target_qps : 72
ttft_latency (ns): 2000000000
tpot_latency (ns): 200000000
)";

constexpr char kLlmOffline[] =
    R"(================================================
MLPerf Results Summary
================================================
SUT name : PySUT
Scenario : Offline
Mode     : PerformanceOnly
Samples per second: 80.5123
Tokens per second: 23654.1
Result is : VALID
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: Yes
)";

constexpr char kInvalidSingleStream[] =
    R"(================================================
MLPerf Results Summary
================================================
SUT name : TFLite
Scenario : SingleStream
Mode     : PerformanceOnly
90th percentile latency (ns) : 16271459
Result is : INVALID
  Min duration satisfied : Yes
  Min queries satisfied : NO
  Early stopping satisfied: NO
Recommendations:
 * The test exited early, before enough queries were issued.
   See the detailed log for why this may have occurred.
Early Stopping Result:
 * Only processed 58 queries.
 * Need to process at least 64 queries for early stopping.

================================================
Additional Stats
================================================
QPS w/ loadgen overhead         : 62.30
QPS w/o loadgen overhead        : 62.41

Min latency (ns)                : 15012345
90.00 percentile latency (ns)   : 16271459
)";

constexpr char kMultiStream[] =
    R"(================================================
MLPerf Results Summary
================================================
SUT name : QAIC_SUT
Scenario : MultiStream
Mode     : PerformanceOnly
99th percentile latency (ns) : 2543210
Result is : VALID
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: Yes
Early Stopping Result:
 * Processed at least 662 queries (270001).
 * Would discard 2535 highest latency queries.
 * Early stopping 99th percentile estimate: 2551234
)";

// An early LoadGen: "Single Stream", "Performance", "90.0th".
constexpr char kEarlySingleStream[] =
    R"(================================================
MLPerf Results Summary
================================================
SUT name : TFLite
Scenario : Single Stream
Mode     : Performance
90.0th percentile latency (ns) : 141426994
Result is : VALID
  Min duration satisfied : Yes
  Min queries satisfied : Yes
)";

struct Expected {
  std::string name;
  double value;
  std::string unit;
  v1::MetricDirection direction;
};

void ExpectMetrics(const LoadgenSummary& summary,
                   const std::vector<Expected>& expected) {
  ASSERT_EQ(summary.metrics.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].name);
    EXPECT_EQ(summary.metrics[i].name, expected[i].name);
    EXPECT_EQ(summary.metrics[i].value, expected[i].value);
    EXPECT_EQ(summary.metrics[i].unit, expected[i].unit);
    EXPECT_EQ(summary.metrics[i].direction, expected[i].direction);
    EXPECT_TRUE(CheckWorkloadMetric(summary.metrics[i]).ok());
  }
}

constexpr auto kHigher = v1::METRIC_DIRECTION_HIGHER_IS_BETTER;
constexpr auto kLower = v1::METRIC_DIRECTION_LOWER_IS_BETTER;

TEST(LoadgenSummaryTest, ReadsAnOfflineSummary) {
  auto summary = ParseLoadgenSummary(kOffline);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->scenario, "Offline");
  EXPECT_EQ(summary->mode, "PerformanceOnly");
  EXPECT_TRUE(summary->result_valid);
  ExpectMetrics(*summary, {{"samples_per_s", 91234.5, "samples/s", kHigher}});
}

TEST(LoadgenSummaryTest, ReadsAServerSummaryInEitherSection) {
  auto summary = ParseLoadgenSummary(kServer);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->scenario, "Server");
  EXPECT_TRUE(summary->result_valid);
  ExpectMetrics(*summary,
                {{"completed_samples_per_s", 15012.34, "samples/s", kHigher},
                 {"scheduled_samples_per_s", 15013.02, "samples/s", kHigher}});
}

TEST(LoadgenSummaryTest, ReadsAnLlmServerSummaryTakingTheFirstOfARepeatedLine) {
  auto summary = ParseLoadgenSummary(kLlmServer);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->scenario, "Server");
  ExpectMetrics(*summary,
                {{"completed_samples_per_s", 71.25, "samples/s", kHigher},
                 {"completed_tokens_per_s", 20931.77, "tokens/s", kHigher},
                 {"scheduled_samples_per_s", 72.03, "samples/s", kHigher}});
}

TEST(LoadgenSummaryTest, ReadsAnLlmOfflineSummary) {
  auto summary = ParseLoadgenSummary(kLlmOffline);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ExpectMetrics(*summary, {{"samples_per_s", 80.5123, "samples/s", kHigher},
                           {"tokens_per_s", 23654.1, "tokens/s", kHigher}});
}

TEST(LoadgenSummaryTest, AnInvalidResultKeepsItsMetrics) {
  auto summary = ParseLoadgenSummary(kInvalidSingleStream);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->scenario, "SingleStream");
  EXPECT_FALSE(summary->result_valid);
  ExpectMetrics(*summary, {{"p90_latency_ns", 16271459, "ns", kLower}});
}

TEST(LoadgenSummaryTest, ReadsMultiStreamsPercentileAndEarlySummaries) {
  auto summary = ParseLoadgenSummary(kMultiStream);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ExpectMetrics(*summary, {{"p99_latency_ns", 2543210, "ns", kLower}});

  summary = ParseLoadgenSummary(kEarlySingleStream);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->scenario, "Single Stream");
  EXPECT_EQ(summary->mode, "Performance");
  ExpectMetrics(*summary, {{"p90_latency_ns", 141426994, "ns", kLower}});

  summary = ParseLoadgenSummary(absl::StrReplaceAll(
      kEarlySingleStream, {{"90.0th percentile latency",
                            "99.9th first token percentile latency"}}));
  ASSERT_TRUE(summary.ok()) << summary.status();
  ExpectMetrics(*summary,
                {{"p99_9_first_token_latency_ns", 141426994, "ns", kLower}});
}

TEST(LoadgenSummaryTest, ReadsWindowsLineEndsAndTextBeforeTheBanner) {
  const std::string text =
      absl::StrCat("loading model...\nrunning\n",
                   absl::StrReplaceAll(kOffline, {{"\n", "\r\n"}}));
  auto summary = ParseLoadgenSummary(text);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->scenario, "Offline");
  ExpectMetrics(*summary, {{"samples_per_s", 91234.5, "samples/s", kHigher}});
}

TEST(LoadgenSummaryTest, ReadsLargeRatesInScientificNotation) {
  // LoadGen prints an Offline rate with the stream's default precision.
  auto summary = ParseLoadgenSummary(absl::StrReplaceAll(
      kOffline,
      {{"Samples per second: 91234.5", "Samples per second: 1.23457e+06"}}));
  ASSERT_TRUE(summary.ok()) << summary.status();
  ExpectMetrics(*summary,
                {{"samples_per_s", 1.23457e+06, "samples/s", kHigher}});
}

struct BadSummary {
  std::string text;
  std::string error;
};

TEST(LoadgenSummaryTest, RefusesWhatIsNoSummarySayingWhy) {
  const auto replace = [](absl::string_view from, absl::string_view to) {
    return absl::StrReplaceAll(kOffline, {{from, to}});
  };
  const std::vector<BadSummary> cases = {
      {"", "not a LoadGen summary: no \"MLPerf Results Summary\" line"},
      {"Samples per second: 12\nResult is : VALID\n", "not a LoadGen summary"},
      {replace("Result is : VALID\n", ""), "no \"Result is : VALID\" or"},
      {replace("Result is : VALID", "Result is : MAYBE"),
       "line 8: \"Result is\" must be VALID or INVALID, got \"MAYBE\""},
      {replace("Scenario : Offline\n", ""), "no \"Scenario : ...\" line"},
      {replace("Scenario : Offline", "Scenario : "),
       "line 5: \"Scenario\" must be 1 to 32 printable characters, got \"\""},
      {replace("Mode     : PerformanceOnly", "Mode     : Perf\x01"),
       "\"Mode\" must be 1 to 32 printable characters, got \"Perf\\x01\""},
      {replace("Samples per second: 91234.5", "Samples per second: fast"),
       "line 7: \"Samples per second\" must be a finite, non-negative number, "
       "got \"fast\""},
      {replace("Samples per second: 91234.5", "Samples per second: nan"),
       "got \"nan\""},
      {replace("Samples per second: 91234.5", "Samples per second: inf"),
       "got \"inf\""},
      {replace("Samples per second: 91234.5", "Samples per second: -5"),
       "got \"-5\""},
      {replace("Samples per second: 91234.5", "Samples per second: 1e999"),
       "got \"1e999\""},
      {replace("Samples per second: 91234.5", "Samples per second:"),
       "got \"\""},
      {replace("Samples per second: 91234.5\n", ""),
       "no throughput or percentile latency line"},
  };
  for (const BadSummary& bad : cases) {
    SCOPED_TRACE(bad.error);
    auto summary = ParseLoadgenSummary(bad.text);
    ASSERT_FALSE(summary.ok());
    EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(summary.status().message(), HasSubstr(bad.error));
  }
}

// Each summary above mutated at random, 500 times over: never a crash, and
// only valid metrics or INVALID_ARGUMENT. Seeded, so a failure reproduces.
TEST(LoadgenSummaryTest, FuzzedSummariesGiveOnlyValidMetrics) {
  SeededMutator mutator(
      11, {":", "\n", "\r", " ", "-", "e+999", "nan", "1e308", "Result is : ",
           "Samples per second: ", "90th percentile latency (ns) : ", "\xff"});
  const std::vector<std::string> summaries = {
      kOffline,          kServer,      kLlmServer,
      kLlmOffline,       kMultiStream, kInvalidSingleStream,
      kEarlySingleStream};
  int parsed = 0;
  for (int i = 0; i < 3500; ++i) {
    const std::string text = mutator.Mutate(summaries[i % summaries.size()], 6);
    auto summary = ParseLoadgenSummary(text);
    if (!summary.ok()) {
      EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument);
      continue;
    }
    ++parsed;
    EXPECT_FALSE(summary->metrics.empty());
    for (const WorkloadMetric& metric : summary->metrics) {
      EXPECT_TRUE(CheckWorkloadMetric(metric).ok()) << metric.name;
    }
  }
  EXPECT_GT(parsed, 1000);
}

}  // namespace
}  // namespace fleetbench::agent
