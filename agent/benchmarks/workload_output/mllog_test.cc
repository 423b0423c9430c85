#include "agent/benchmarks/workload_output/mllog.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "agent/benchmarks/workload_output/seeded_mutator.h"
#include "agent/benchmarks/workload_output/workload_metric.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using ::testing::HasSubstr;

// The shape of a BERT training log from an MLPerf submission run under
// srun --label ("0: " before each line), with the launcher's own output
// between the events. Values made up; keys, fields and their order as
// mlperf_logging writes them.
constexpr char kBertLog[] = R"( 0: + echo 'Beginning trial 1 of 1'
 0: :::MLLOG {"namespace": "", "time_ms": 1719842950612, "event_type": "POINT_IN_TIME", "key": "cache_clear", "value": true, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1541}}
 0: :::MLLOG {"namespace": "", "time_ms": 1719842951003, "event_type": "INTERVAL_START", "key": "init_start", "value": null, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1542}}
 0: :::MLLOG {"namespace": "", "time_ms": 1719842951004, "event_type": "POINT_IN_TIME", "key": "submission_benchmark", "value": "bert", "metadata": {"file": "/workspace/bert/mlperf_logger.py", "lineno": 66}}
 0: :::MLLOG {"namespace": "", "time_ms": 1719842951004, "event_type": "POINT_IN_TIME", "key": "global_batch_size", "value": 4608, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1580}}
 0: [rank 0] NCCL INFO comm 0x55d0 rank 0 nranks 8 - Init COMPLETE
 0: :::MLLOG {"namespace": "", "time_ms": 1719843002871, "event_type": "INTERVAL_END", "key": "init_stop", "value": null, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1710}}
 0: :::MLLOG {"namespace": "", "time_ms": 1719843003120, "event_type": "INTERVAL_START", "key": "run_start", "value": null, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1711}}
 0: :::MLLOG {"namespace": "", "time_ms": 1719843003121, "event_type": "INTERVAL_START", "key": "block_start", "value": null, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1730, "first_epoch_num": 0, "epoch_count": 230400}}
 0: :::MLLOG {"namespace": "", "time_ms": 1719843214020, "event_type": "POINT_IN_TIME", "key": "tracked_stats", "value": {"throughput": 11872.4}, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1850, "epoch_num": 230400}}
 0: :::MLLOG {"namespace": "", "time_ms": 1719843214021, "event_type": "INTERVAL_START", "key": "eval_start", "value": 230400, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1860, "epoch_num": 230400}}
 0: :::MLLOG {"namespace": "", "time_ms": 1719843219882, "event_type": "INTERVAL_END", "key": "eval_stop", "value": 230400, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1871, "epoch_num": 230400}}
 0: :::MLLOG {"namespace": "", "time_ms": 1719843219883, "event_type": "POINT_IN_TIME", "key": "eval_accuracy", "value": 0.6712, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1875, "epoch_num": 230400}}
 0: {'global_steps': 50, 'eval_loss': 1.61, 'eval_mlm_accuracy': 0.6712}
 0: :::MLLOG {"namespace": "", "time_ms": 1719843420510, "event_type": "POINT_IN_TIME", "key": "tracked_stats", "value": {"throughput": 14214.7}, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1850, "epoch_num": 460800}}
 0: :::MLLOG {"namespace": "", "time_ms": 1719843606231, "event_type": "POINT_IN_TIME", "key": "tracked_stats", "value": {"throughput": 14201.3}, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1850, "epoch_num": 691200}}
 0: :::MLLOG {"namespace": "", "time_ms": 1719843789002, "event_type": "POINT_IN_TIME", "key": "tracked_stats", "value": {"throughput": 14190.2}, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1850, "epoch_num": 921600}}
 0: :::MLLOG {"namespace": "", "time_ms": 1719843789003, "event_type": "POINT_IN_TIME", "key": "tracked_stats", "value": {"train_epoch_timing": 785.88}, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1890, "step": 200}}
 0: :::MLLOG {"namespace": "", "time_ms": 1719843789004, "event_type": "INTERVAL_END", "key": "block_stop", "value": null, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1895, "first_epoch_num": 0}}
 0: :::MLLOG {"namespace": "", "time_ms": 1719843792115, "event_type": "POINT_IN_TIME", "key": "eval_accuracy", "value": 0.7204, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1875, "epoch_num": 921600}}
 0: :::MLLOG {"namespace": "", "time_ms": 1719843792116, "event_type": "INTERVAL_END", "key": "run_stop", "value": null, "metadata": {"file": "/workspace/bert/run_pretraining.py", "lineno": 1940, "status": "success"}}
 0: ENDING TIMING RUN AT 2024-07-01 02:23:14 PM
)";

// An event line with the given key, value and metadata.
std::string Event(
    absl::string_view key, absl::string_view value, double time_ms = 1000,
    absl::string_view metadata = R"({"file": "train.py", "lineno": 1})") {
  return absl::StrCat(R"(:::MLLOG {"namespace": "", "time_ms": )", time_ms,
                      R"(, "event_type": "POINT_IN_TIME", "key": ")", key,
                      R"(", "value": )", value, R"(, "metadata": )", metadata,
                      "}");
}

MllogReader ReadAll(absl::string_view log) {
  MllogReader reader;
  for (absl::string_view line : absl::StrSplit(log, '\n')) reader.AddLine(line);
  return reader;
}

TEST(MllogReaderTest, ReadsAnMlperfTrainingLog) {
  const MllogReader reader = ReadAll(kBertLog);
  EXPECT_EQ(reader.malformed_lines(), 0);
  EXPECT_TRUE(reader.first_error().ok()) << reader.first_error();
  // 22 lines and the empty one after the last "\n".
  EXPECT_EQ(reader.lines(), 23);
  ASSERT_EQ(reader.run_status(), "success");
  const std::vector<WorkloadMetric> metrics = reader.Metrics();
  ASSERT_EQ(metrics.size(), 2u);
  // The median of 11872.4 (the warm-up block), 14214.7, 14201.3, 14190.2.
  EXPECT_EQ(metrics[0].name, "throughput");
  EXPECT_DOUBLE_EQ(metrics[0].value, (14190.2 + 14201.3) / 2);
  EXPECT_EQ(metrics[0].unit, "samples/s");
  EXPECT_EQ(metrics[0].direction, v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
  // run_start 1719843003120 to run_stop 1719843792116.
  EXPECT_EQ(metrics[1].name, "run_time_s");
  EXPECT_DOUBLE_EQ(metrics[1].value, 788.996);
  EXPECT_EQ(metrics[1].unit, "s");
  EXPECT_EQ(metrics[1].direction, v1::METRIC_DIRECTION_LOWER_IS_BETTER);
  for (const WorkloadMetric& metric : metrics)
    EXPECT_TRUE(CheckWorkloadMetric(metric).ok());
}

TEST(MllogReaderTest, AnAbortedRunKeepsItsStatusAndTime) {
  MllogReader reader;
  reader.AddLine(absl::StrReplaceAll(Event("run_start", "null", 5000),
                                     {{"POINT_IN_TIME", "INTERVAL_START"}}));
  reader.AddLine(Event("tracked_stats", R"({"throughput": 30.5})"));
  reader.AddLine(Event("tracked_stats", R"({"throughput": 10.5})"));
  reader.AddLine(Event("tracked_stats", R"({"throughput": 20.5})"));
  reader.AddLine(Event("run_stop", "null", 65000,
                       R"({"file": "t.py", "status": "aborted"})"));
  EXPECT_EQ(reader.malformed_lines(), 0) << reader.first_error();
  EXPECT_EQ(reader.run_status(), "aborted");
  const std::vector<WorkloadMetric> metrics = reader.Metrics();
  ASSERT_EQ(metrics.size(), 2u);
  EXPECT_EQ(metrics[0].value, 20.5);  // the median of three
  EXPECT_EQ(metrics[1].value, 60);
}

TEST(MllogReaderTest, TakesAThroughputKeyAsANumberOrAnObject) {
  MllogReader reader;
  reader.AddLine(Event("throughput", "100"));
  reader.AddLine(Event("throughput", R"({"throughput": 300, "loss": 1.5})"));
  EXPECT_EQ(reader.malformed_lines(), 0) << reader.first_error();
  const std::vector<WorkloadMetric> metrics = reader.Metrics();
  ASSERT_EQ(metrics.size(), 1u);
  EXPECT_EQ(metrics[0].name, "throughput");
  EXPECT_EQ(metrics[0].value, 200);
  EXPECT_FALSE(reader.run_status().has_value());
}

TEST(MllogReaderTest, OnlyTheFirstRunCountsAndTheTagMayComeAnywhere) {
  MllogReader reader;
  reader.AddLine(
      absl::StrCat("[1,0]<stdout>: ", Event("run_start", "null", 1000)));
  reader.AddLine(absl::StrCat(
      "2024-07-01 12:00:00 INFO ",
      Event("run_stop", "null", 3000, R"({"status": "success"})")));
  reader.AddLine(Event("run_start", "null", 10000));
  reader.AddLine(Event("run_stop", "null", 90000, R"({"status": "aborted"})"));
  // Two ranks' lines run together: the last tag's event is read.
  reader.AddLine(
      absl::StrCat(":::MLLOG {\"key\": \"run_sta", Event("eval_start", "1")));
  EXPECT_EQ(reader.malformed_lines(), 0) << reader.first_error();
  EXPECT_EQ(reader.run_status(), "success");
  const std::vector<WorkloadMetric> metrics = reader.Metrics();
  ASSERT_EQ(metrics.size(), 1u);
  EXPECT_EQ(metrics[0].name, "run_time_s");
  EXPECT_EQ(metrics[0].value, 2);
}

TEST(MllogReaderTest, GivesNothingForOutputWithoutALog) {
  MllogReader reader;
  reader.AddLine("Epoch 1: loss 0.53, throughput 1200 samples/s");
  reader.AddLine("MLLOG {\"key\": \"run_start\"}");
  reader.AddLine(":::MLLOG{}");
  reader.AddLine("");
  EXPECT_EQ(reader.lines(), 4);
  EXPECT_EQ(reader.malformed_lines(), 0);
  EXPECT_TRUE(reader.Metrics().empty());
  EXPECT_FALSE(reader.run_status().has_value());
}

TEST(MllogReaderTest, ARunWithoutItsStopHasNoRunTime) {
  MllogReader reader;
  reader.AddLine(Event("run_start", "null", 1000));
  reader.AddLine(Event("tracked_stats", R"({"throughput": 7})"));
  const std::vector<WorkloadMetric> metrics = reader.Metrics();
  ASSERT_EQ(metrics.size(), 1u);
  EXPECT_EQ(metrics[0].name, "throughput");
  EXPECT_FALSE(reader.run_status().has_value());
}

struct BadEvent {
  std::string line;
  std::string error;  // a part of first_error()'s message
};

TEST(MllogReaderTest, SkipsAndCountsMalformedEventsSayingWhy) {
  const std::vector<BadEvent> cases = {
      {":::MLLOG not json", "not a JSON object"},
      {":::MLLOG {\"key\": \"run_start\"", "not valid JSON"},
      // Python's json writes NaN, which JSON does not have.
      {Event("eval_accuracy", "NaN"), "not valid JSON"},
      {R"(:::MLLOG {"time_ms": 1, "event_type": "POINT_IN_TIME", "value": 1})",
       "no \"key\""},
      {R"(:::MLLOG {"time_ms": 1, "event_type": "POINT_IN_TIME", "key": 5})",
       "\"key\" must be a string, got number"},
      {R"(:::MLLOG {"time_ms": 1, "key": "run_start"})", "no \"event_type\""},
      {R"(:::MLLOG {"time_ms": 1, "event_type": "START", "key": "run_start"})",
       "\"event_type\" must be POINT_IN_TIME, INTERVAL_START or INTERVAL_END, "
       "got \"START\""},
      {R"(:::MLLOG {"event_type": "POINT_IN_TIME", "key": "run_start"})",
       "no \"time_ms\""},
      {R"(:::MLLOG {"time_ms": "1", "event_type": "POINT_IN_TIME", "key": "run_start"})",
       "\"time_ms\" must be a number, got string"},
      {Event("tracked_stats", R"({"throughput": "fast"})"),
       "the throughput must be a number, got string"},
      {Event("tracked_stats", R"({"throughput": -4})"),
       "the throughput is negative: -4"},
      {Event("throughput", R"("12")"),
       "\"throughput\" needs a number or {\"throughput\": number}"},
      {Event("throughput", R"({"samples": 12})"),
       "\"throughput\" needs a number"},
      {Event("run_stop", "null", 1, R"({"status": 0})"),
       "run_stop's \"status\" must be a string, got number"},
      {Event("run_stop", "null", 1, R"({"status": "ok\n"})"),
       "run_stop's \"status\" \"ok\\n\" must be 1 to 32 printable ASCII"},
      {absl::StrCat(Event("run_start", "null"),
                    std::string(kMaxMllogLineBytes, ' ')),
       "over the limit of 65536"},
      {absl::StrCat(":::MLLOG {\"key\": ", std::string(1000, '['), "}"),
       "JSON nested deeper than 32 levels"},
  };
  for (const BadEvent& bad : cases) {
    SCOPED_TRACE(bad.line.substr(0, 200));
    MllogReader reader;
    reader.AddLine("some launcher output");
    reader.AddLine(bad.line);
    EXPECT_EQ(reader.malformed_lines(), 1);
    EXPECT_EQ(reader.first_error().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(reader.first_error().message(),
                HasSubstr("MLPerf log, line 2: "));
    EXPECT_THAT(reader.first_error().message(), HasSubstr(bad.error));
    EXPECT_TRUE(reader.Metrics().empty());
  }
}

TEST(MllogReaderTest, KeepsReadingAfterAMalformedEvent) {
  MllogReader reader;
  reader.AddLine(Event("run_start", "null", 1000));
  reader.AddLine(Event("tracked_stats", R"({"throughput": NaN})"));
  reader.AddLine(Event("tracked_stats", R"({"throughput": 50})"));
  reader.AddLine(":::MLLOG {");
  reader.AddLine(Event("run_stop", "null", 2500, R"({"status": "success"})"));
  EXPECT_EQ(reader.malformed_lines(), 2);
  EXPECT_THAT(reader.first_error().message(), HasSubstr("line 2"));
  const std::vector<WorkloadMetric> metrics = reader.Metrics();
  ASSERT_EQ(metrics.size(), 2u);
  EXPECT_EQ(metrics[0].value, 50);
  EXPECT_EQ(metrics[1].value, 1.5);
}

TEST(MllogReaderTest, ARunStopBeforeItsStartIsAnError) {
  MllogReader reader;
  reader.AddLine(Event("run_start", "null", 5000));
  reader.AddLine(Event("run_stop", "null", 4000, R"({"status": "success"})"));
  EXPECT_EQ(reader.malformed_lines(), 1);
  EXPECT_THAT(
      reader.first_error().message(),
      HasSubstr("run_stop at time_ms 4000 is before run_start at 5000"));
  EXPECT_TRUE(reader.Metrics().empty());
}

TEST(MllogReaderTest, HugeTimesGiveNoRunTime) {
  MllogReader reader;
  reader.AddLine(Event("run_start", "null", -1.7e308));
  reader.AddLine(Event("run_stop", "null", 1.7e308));
  EXPECT_EQ(reader.malformed_lines(), 0) << reader.first_error();
  EXPECT_TRUE(reader.Metrics().empty());
}

// Every line of the log mutated at random, 10 times over: the reader never
// crashes and gives only valid metrics. Seeded, so a failure reproduces.
TEST(MllogReaderTest, FuzzedLogsGiveOnlyValidMetrics) {
  SeededMutator mutator(7, {"{", "}", "[", "]", "\"", ":", ",", "-", "1e308",
                            "null", "\"throughput\"", "\"run_stop\"", "\xff"});
  const std::vector<std::string> lines = absl::StrSplit(kBertLog, '\n');
  for (int round = 0; round < 10; ++round) {
    MllogReader reader;
    // Half the lines mutated: the rest keep some events whole, so metrics
    // come out of mutated logs too.
    for (const std::string& line : lines) {
      reader.AddLine(mutator.Uniform(2) == 0 ? line : mutator.Mutate(line, 3));
    }
    for (const WorkloadMetric& metric : reader.Metrics()) {
      EXPECT_TRUE(CheckWorkloadMetric(metric).ok())
          << metric.name << " " << metric.value;
    }
    EXPECT_EQ(reader.first_error().ok(), reader.malformed_lines() == 0);
  }
}

}  // namespace
}  // namespace fleetbench::agent
