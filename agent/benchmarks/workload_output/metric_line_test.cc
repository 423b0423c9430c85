#include "agent/benchmarks/workload_output/metric_line.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/benchmarks/workload_output/seeded_mutator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using ::testing::HasSubstr;

constexpr char kGoodLine[] =
    R"(FLEETBENCH_METRIC {"name": "samples_per_s", "value": 1234.5, "unit": "samples/s", "direction": "higher"})";

// The rules of workload_metric.h written out again, independently of
// CheckWorkloadMetric, so the fuzz test does not trust the code it tests.
bool IsValidMetric(const WorkloadMetric& m) {
  if (m.name.empty() || m.name.size() > 64) return false;
  for (char c : m.name) {
    if (!(('a' <= c && c <= 'z') || ('0' <= c && c <= '9') || c == '_')) {
      return false;
    }
  }
  if (!std::isfinite(m.value)) return false;
  if (m.unit.empty() || m.unit.size() > 32) return false;
  for (unsigned char c : m.unit) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return m.direction == v1::METRIC_DIRECTION_HIGHER_IS_BETTER ||
         m.direction == v1::METRIC_DIRECTION_LOWER_IS_BETTER;
}

TEST(MetricLineTest, IsMetricLineNeedsThePrefixAtTheStart) {
  EXPECT_TRUE(IsMetricLine(kGoodLine));
  EXPECT_TRUE(IsMetricLine("FLEETBENCH_METRIC "));
  EXPECT_FALSE(IsMetricLine(absl::StrCat(" ", kGoodLine)));
  EXPECT_FALSE(IsMetricLine(absl::StrCat("\t", kGoodLine)));
  EXPECT_FALSE(IsMetricLine("FLEETBENCH_METRIC{}"));
  EXPECT_FALSE(IsMetricLine("fleetbench_metric {}"));
  EXPECT_FALSE(IsMetricLine("log: FLEETBENCH_METRIC {}"));
  EXPECT_FALSE(IsMetricLine(""));
}

TEST(MetricLineTest, ParsesAGoodLine) {
  auto metric = ParseMetricLine(kGoodLine);
  ASSERT_TRUE(metric.ok()) << metric.status();
  EXPECT_EQ(metric->name, "samples_per_s");
  EXPECT_EQ(metric->value, 1234.5);
  EXPECT_EQ(metric->unit, "samples/s");
  EXPECT_EQ(metric->direction, v1::METRIC_DIRECTION_HIGHER_IS_BETTER);
}

TEST(MetricLineTest, ParsesLowerIntegersNegativesAnyOrderAndALineEnd) {
  auto metric = ParseMetricLine(
      "FLEETBENCH_METRIC   "
      "{\"direction\":\"lower\",\"unit\":\"ms\",\"value\":-3,"
      "\"name\":\"p99_latency_ms\"}  \r\n");
  ASSERT_TRUE(metric.ok()) << metric.status();
  EXPECT_EQ(metric->name, "p99_latency_ms");
  EXPECT_EQ(metric->value, -3);
  EXPECT_EQ(metric->unit, "ms");
  EXPECT_EQ(metric->direction, v1::METRIC_DIRECTION_LOWER_IS_BETTER);

  metric = ParseMetricLine(
      R"(FLEETBENCH_METRIC {"name": "x", "value": 1e300, "unit": "a b", "direction": "higher"})");
  ASSERT_TRUE(metric.ok()) << metric.status();
  EXPECT_EQ(metric->value, 1e300);
  EXPECT_EQ(metric->unit, "a b");
}

TEST(MetricLineTest, TakesTheLongestNameUnitAndLine) {
  const std::string name(64, 'a');
  const std::string unit(32, '~');
  auto metric = ParseMetricLine(absl::StrCat(
      R"(FLEETBENCH_METRIC {"name": ")", name, R"(", "value": 1, "unit": ")",
      unit, R"(", "direction": "lower"})"));
  ASSERT_TRUE(metric.ok()) << metric.status();
  EXPECT_EQ(metric->name, name);
  EXPECT_EQ(metric->unit, unit);

  std::string line = absl::StrCat(
      R"(FLEETBENCH_METRIC {"name": "n", "value": 1, "unit": "u", "direction": "lower"})");
  line.insert(line.size() - 1, kMaxMetricLineBytes - line.size(), ' ');
  ASSERT_EQ(line.size(), kMaxMetricLineBytes);
  EXPECT_TRUE(ParseMetricLine(line).ok());
  line.insert(line.size() - 1, " ");
  EXPECT_THAT(ParseMetricLine(line).status().message(),
              HasSubstr("over the limit of 4096"));
}

struct BadLine {
  std::string line;
  std::string error;  // a part of the message
};

TEST(MetricLineTest, RefusesEachBadFieldSayingWhichAndWhy) {
  const auto line = [](absl::string_view fields) {
    return absl::StrCat("FLEETBENCH_METRIC {", fields, "}");
  };
  const std::vector<BadLine> cases = {
      // Missing.
      {line(R"("value": 1, "unit": "u", "direction": "higher")"),
       R"(field "name" is missing)"},
      {line(R"("name": "n", "unit": "u", "direction": "higher")"),
       R"(field "value" is missing)"},
      {line(R"("name": "n", "value": 1, "direction": "higher")"),
       R"(field "unit" is missing)"},
      {line(R"("name": "n", "value": 1, "unit": "u")"),
       R"(field "direction" is missing)"},
      {line(""), R"(field "name" is missing)"},
      // Wrong type.
      {line(R"("name": 7, "value": 1, "unit": "u", "direction": "higher")"),
       R"(field "name" must be a string, got number)"},
      {line(
           R"("name": "n", "value": "1234.5", "unit": "u", "direction": "higher")"),
       R"(field "value" must be a number, got string)"},
      {line(
           R"("name": "n", "value": true, "unit": "u", "direction": "higher")"),
       R"(field "value" must be a number, got bool)"},
      {line(
           R"("name": "n", "value": null, "unit": "u", "direction": "higher")"),
       R"(field "value" must be a number, got null)"},
      {line(R"("name": "n", "value": [1], "unit": "u", "direction": "higher")"),
       R"(field "value" must be a number, got list)"},
      {line(
           R"("name": "n", "value": 1, "unit": {"a": 1}, "direction": "higher")"),
       R"(field "unit" must be a string, got object)"},
      {line(R"("name": "n", "value": 1, "unit": "u", "direction": 1)"),
       R"(field "direction" must be a string, got number)"},
      // Bad pattern or range.
      {line(
           R"("name": "Samples", "value": 1, "unit": "u", "direction": "higher")"),
       R"(field "name" "Samples" may hold only lowercase letters, digits and '_')"},
      {line(R"("name": "a-b", "value": 1, "unit": "u", "direction": "higher")"),
       R"(field "name" "a-b" may hold only)"},
      {line(R"("name": "a.b", "value": 1, "unit": "u", "direction": "higher")"),
       R"(field "name" "a.b" may hold only)"},
      {line(R"("name": "", "value": 1, "unit": "u", "direction": "higher")"),
       R"(field "name" must be 1 to 64 characters, got 0)"},
      {line(absl::StrCat(
           R"("name": ")", std::string(65, 'a'),
           R"(", "value": 1, "unit": "u", "direction": "higher")")),
       R"(field "name" must be 1 to 64 characters, got 65)"},
      {line(R"("name": "n", "value": 1, "unit": "", "direction": "higher")"),
       R"(field "unit" must be 1 to 32 characters, got 0)"},
      {line(absl::StrCat(R"("name": "n", "value": 1, "unit": ")",
                         std::string(33, 'u'), R"(", "direction": "higher")")),
       R"(field "unit" must be 1 to 32 characters, got 33)"},
      {line(
           R"("name": "n", "value": 1, "unit": "a\tb", "direction": "higher")"),
       R"(field "unit" "a\tb" may hold only printable ASCII characters)"},
      {line(R"("name": "n", "value": 1, "unit": "µs", "direction": "higher")"),
       R"(field "unit" "\xc2\xb5s" may hold only printable ASCII)"},
      {line(R"("name": "n", "value": 1, "unit": "u", "direction": "up")"),
       R"(field "direction" must be "higher" or "lower", got "up")"},
      {line(R"("name": "n", "value": 1, "unit": "u", "direction": "Higher")"),
       R"(field "direction" must be "higher" or "lower", got "Higher")"},
      // Not finite: JSON has no NaN or Infinity, and protobuf refuses a
      // number past a double's range.
      {line(R"("name": "n", "value": NaN, "unit": "u", "direction": "higher")"),
       "not valid JSON"},
      {line(
           R"("name": "n", "value": Infinity, "unit": "u", "direction": "higher")"),
       "not valid JSON"},
      {line(
           R"("name": "n", "value": 1e999, "unit": "u", "direction": "higher")"),
       "not valid JSON: Number exceeds the range of double"},
      {line(
           R"("name": "n", "value": -1e999, "unit": "u", "direction": "higher")"),
       "not valid JSON: Number exceeds the range of double"},
      // Unknown fields: the first in name order.
      {line(
           R"("name": "n", "value": 1, "unit": "u", "direction": "higher", "tags": "x")"),
       R"(unknown field "tags" (the fields are name, value, unit, direction))"},
      {line(
           R"("zz": 1, "name": "n", "value": 1, "aa": 2, "unit": "u", "direction": "higher")"),
       R"(unknown field "aa")"},
      // Not an object, not JSON.
      {"FLEETBENCH_METRIC [1, 2]", "not a JSON object"},
      {"FLEETBENCH_METRIC 42", "not a JSON object"},
      {"FLEETBENCH_METRIC \"name\"", "not a JSON object"},
      {"FLEETBENCH_METRIC ", "not a JSON object"},
      {"FLEETBENCH_METRIC {", "not valid JSON"},
      {"FLEETBENCH_METRIC {\"name\": \"n\"", "not valid JSON"},
      {absl::StrCat(kGoodLine, " trailing"),
       "not valid JSON: Parsing terminated before end"},
      {absl::StrCat(kGoodLine, kGoodLine), "not valid JSON"},
      {line(
           R"("name": "n", "name": "m", "value": 1, "unit": "u", "direction": "higher")"),
       "not valid JSON: (fields[0]) name: Repeated map key"},
      {absl::StrCat("FLEETBENCH_METRIC {\"name\": ", std::string(100, '['),
                    std::string(100, ']'), "}"),
       "JSON nested deeper than 4 levels"},
      // The prefix and the length.
      {R"({"name": "n", "value": 1, "unit": "u", "direction": "higher"})",
       R"(it must start with "FLEETBENCH_METRIC ")"},
      {absl::StrCat(" ", kGoodLine), "it must start with"},
      {absl::StrCat(kGoodLine, std::string(kMaxMetricLineBytes, ' ')),
       absl::StrCat("the line is ", sizeof(kGoodLine) - 1 + kMaxMetricLineBytes,
                    " bytes, over the limit of 4096")},
  };
  for (const BadLine& bad : cases) {
    SCOPED_TRACE(bad.line.substr(0, 200));
    auto metric = ParseMetricLine(bad.line);
    ASSERT_FALSE(metric.ok());
    EXPECT_EQ(metric.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(metric.status().message(), HasSubstr("metric line: "));
    EXPECT_THAT(metric.status().message(), HasSubstr(bad.error));
    EXPECT_EQ(metric.status().message().find('\n'), absl::string_view::npos);
  }
}

TEST(MetricLineTest, QuotesAtMost64BytesOfABadValue) {
  auto metric = ParseMetricLine(
      absl::StrCat(R"(FLEETBENCH_METRIC {"name": ")", std::string(60, 'a'),
                   "\\n", std::string(500, 'B'),
                   R"(", "value": 1, "unit": "u", "direction": "higher"})"));
  ASSERT_FALSE(metric.ok());
  EXPECT_LT(metric.status().message().size(), 200u) << metric.status();
}

// Deep nesting is refused before it reaches protobuf's parser, whose time
// grows with the square of it: the whole line must take no time at all.
TEST(MetricLineTest, RefusesDeepNestingAtOnce) {
  const std::string nested = absl::StrCat(
      "FLEETBENCH_METRIC {\"a\":", std::string(kMaxMetricLineBytes - 40, '['));
  auto metric = ParseMetricLine(nested);
  ASSERT_FALSE(metric.ok());
  EXPECT_THAT(metric.status().message(), HasSubstr("nested deeper"));
  // Brackets inside strings are text, not nesting.
  metric = ParseMetricLine(
      absl::StrCat(R"(FLEETBENCH_METRIC {"name": "n", "value": 1, "unit": ")",
                   "[[[[[{{{{{", R"(", "direction": "higher"})"));
  ASSERT_TRUE(metric.ok()) << metric.status();
  EXPECT_EQ(metric->unit, "[[[[[{{{{{");
}

// 20,000 inputs, a quarter of each kind: random bytes; the prefix and
// random bytes; a good line mutated 1 to 4 times; and lines whose four
// fields hold values drawn from near-misses (a name with an uppercase
// letter, a unit of 33 characters, a number past a double's range, an
// escape that decodes to a control character), with a field dropped or one
// added now and then. Each must be refused with INVALID_ARGUMENT and a
// one-line message, or parsed into a valid metric; never a crash. Seeded, so
// a failure reproduces.
TEST(MetricLineTest, FuzzedInputIsRefusedOrValid) {
  // Pieces that reach the parser's corners more often than random bytes do.
  SeededMutator mutator(20240611, {"{",
                                   "}",
                                   "[",
                                   "]",
                                   "\"",
                                   "'",
                                   ":",
                                   ",",
                                   "\\",
                                   "\\u0000",
                                   "\\ud800",
                                   "null",
                                   "true",
                                   "1e999",
                                   "-0",
                                   "NaN",
                                   "0x1F",
                                   "\"name\"",
                                   "\"value\"",
                                   "\"unit\"",
                                   "\"direction\"",
                                   "\"higher\"",
                                   "\"lower\"",
                                   "\n",
                                   std::string(1, '\0'),
                                   "\xff",
                                   "\xc3\xa9",
                                   " "});
  const auto uniform = [&](size_t n) { return mutator.Uniform(n); };
  const auto pick = [&](const std::vector<std::string>& from) {
    return mutator.Pick(from);
  };
  // Each field's value: two times in three a valid one, else anything from
  // the full list, invalid ones included.
  const auto near_miss = [&](const std::vector<std::string>& valid,
                             const std::vector<std::string>& invalid) {
    if (uniform(3) != 0) return pick(valid);
    const size_t at = uniform(valid.size() + invalid.size());
    return at < valid.size() ? valid[at] : invalid[at - valid.size()];
  };
  const std::vector<std::string> name_chars = {"a", "z", "0", "9", "_"};
  const std::vector<std::string> unit_chars = {"a",    "s",    "/", " ",
                                               "\\\"", "\\\\", "~", "A"};
  const std::vector<std::string> bad_chars = {"-",
                                              "A",
                                              ".",
                                              "\\n",
                                              "\\t",
                                              "\\u0001",
                                              "\\u007f",
                                              "\\u00b5",
                                              "\xc3\xa9",
                                              "\x7f",
                                              "\\ud83d\\ude00",
                                              "\xff",
                                              std::string(1, '\0')};
  // 1e-400 is below the smallest double: it reads as 0.
  const std::vector<std::string> numbers = {"0",
                                            "-0",
                                            "1",
                                            "1234.5",
                                            "-3",
                                            "1e308",
                                            "1.7976931348623157e308",
                                            "5e-324",
                                            "1e-400",
                                            "123456789012345678901234567890"};
  const std::vector<std::string> bad_numbers = {
      "1e309", "-1e309", "\"1\"", "true", "null", "[1]",
      "{}",    "01",     ".5",    "+1",   "NaN",  "-Infinity"};
  const std::vector<std::string> directions = {"\"higher\"", "\"lower\""};
  const std::vector<std::string> bad_directions = {
      "\"HIGHER\"", "\"\"",        "\"up\"",          "1",
      "null",       "\"higher \"", "\"lower\\u0000\""};
  // A JSON string of up to `max_chars` characters, most of them valid.
  const auto random_string = [&](const std::vector<std::string>& valid,
                                 size_t max_chars) {
    std::string text = "\"";
    for (size_t n = uniform(max_chars + 1); n > 0; --n) {
      text += uniform(100) == 0 ? pick(bad_chars) : pick(valid);
    }
    return text + "\"";
  };
  const std::string good = kGoodLine;
  int accepted = 0;
  int refused = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string input;
    switch (i % 4) {
      case 0:  // random bytes
        for (size_t n = uniform(300); n > 0; --n) input += mutator.Byte();
        break;
      case 1:  // the prefix, then random bytes
        input = std::string(kMetricLinePrefix);
        for (size_t n = uniform(300); n > 0; --n) input += mutator.Byte();
        break;
      case 2:  // a good line, mutated 1 to 4 times
        input = mutator.Mutate(good, 4);
        break;
      case 3: {  // four fields of near-misses
        std::vector<std::string> fields = {
            absl::StrCat("\"name\": ", uniform(20) == 0
                                           ? pick(numbers)
                                           : random_string(name_chars, 66)),
            absl::StrCat("\"value\": ", near_miss(numbers, bad_numbers)),
            absl::StrCat("\"unit\": ", uniform(20) == 0
                                           ? pick(numbers)
                                           : random_string(unit_chars, 34)),
            absl::StrCat("\"direction\": ",
                         near_miss(directions, bad_directions))};
        if (uniform(20) == 0) fields.erase(fields.begin() + uniform(4));
        if (uniform(20) == 0) fields.push_back("\"extra\": 1");
        std::shuffle(fields.begin(), fields.end(), mutator.engine());
        input = absl::StrCat(kMetricLinePrefix, "{",
                             absl::StrJoin(fields, ", "), "}");
        break;
      }
    }
    auto metric = ParseMetricLine(input);
    if (metric.ok()) {
      ++accepted;
      EXPECT_TRUE(IsValidMetric(*metric)) << absl::CHexEscape(input);
    } else {
      ++refused;
      EXPECT_EQ(metric.status().code(), absl::StatusCode::kInvalidArgument)
          << absl::CHexEscape(input);
      EXPECT_FALSE(metric.status().message().empty());
      EXPECT_EQ(metric.status().message().find('\n'), absl::string_view::npos)
          << metric.status().message();
    }
  }
  // Both outcomes occur often, so the test exercises both paths.
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(refused, 10000);
}

}  // namespace
}  // namespace fleetbench::agent
