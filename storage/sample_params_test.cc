// How the store splits a sample's params (storage/sample_params.h): which
// values are measured, that a split and its stored difference put back the
// params that were written, and that damaged stored forms are DataLoss,
// never a crash or params made up.
#include "storage/sample_params.h"

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fleetbench/v1/result.pb.h"
#include "gtest/gtest.h"

namespace fleetbench::storage {
namespace {

ParamMap Params(const std::map<std::string, std::string>& entries) {
  ParamMap params;
  for (const auto& [k, v] : entries) params[k] = v;
  return params;
}

// Splits `params`, stores them under a kind whose default is `kind_default`
// (the first sample's values when empty), and reads them back.
absl::StatusOr<std::map<std::string, std::string>> RoundTrip(const ParamMap& params,
                                                             std::string kind_default = "") {
  SplitParams split;
  SplitSampleParams(params, split);
  if (kind_default.empty()) kind_default = split.measured_values;
  const std::string stored = MeasuredDifference(split.measured_values, kind_default);
  v1::Sample sample;
  if (!split.kind_params.empty() &&
      !sample.ParseFromString(split.kind_params)) {
    return absl::InternalError("kind params do not parse");
  }
  std::optional<absl::string_view> measured;
  if (!stored.empty()) measured = stored;
  absl::Status added = AddMeasuredParams(split.measured_keys, kind_default, measured, sample);
  if (!added.ok()) return added;
  return std::map<std::string, std::string>(sample.params().begin(), sample.params().end());
}

TEST(SampleParamsTest, NumbersInAnySpellingAreMeasuredAndTextIsNot) {
  for (const char* v : {"0", "12", "-1e-05", "+.5", "007", "1E+300", "0.183943", "1-2"}) {
    EXPECT_TRUE(IsMeasuredParamValue(v)) << v;
  }
  for (const char* v : {"", "e", "--", ".", "nan", "inf", "0x10", "1,2", " 1", "fp32",
                        "12345678901234567890123456789012345"}) {
    EXPECT_FALSE(IsMeasuredParamValue(v)) << v;
  }
}

TEST(SampleParamsTest, TheSplitKeepsTextInTheKindAndNumbersWithTheSample) {
  SplitParams split;
  SplitSampleParams(Params({{"dtype", "fp32"}, {"runs", "7"}, {"m", "4096"}}), split);
  v1::Sample kind;
  ASSERT_TRUE(kind.ParseFromString(split.kind_params));
  EXPECT_EQ(kind.params_size(), 1);
  EXPECT_EQ(kind.params().at("dtype"), "fp32");
  EXPECT_EQ(split.measured_values, "4096,7");  // in key order: m, runs
  // Equal maps give equal bytes, whatever order they were filled in.
  SplitParams again;
  SplitSampleParams(Params({{"m", "4096"}, {"runs", "7"}, {"dtype", "fp32"}}), again);
  EXPECT_EQ(again.kind_params, split.kind_params);
  EXPECT_EQ(again.measured_keys, split.measured_keys);
}

TEST(SampleParamsTest, ASampleStoresOnlyWhatDiffersFromItsKind) {
  EXPECT_EQ(MeasuredDifference("1,2,3", "1,2,3"), "");
  EXPECT_EQ(MeasuredDifference("1,20,3", "1,2,3"), ",20,");
  EXPECT_EQ(MeasuredDifference("10,20,30", "1,2,3"), "10,20,30");
  EXPECT_EQ(MeasuredDifference("5", "4"), "5");
}

TEST(SampleParamsTest, EverySplitReadsBackAsWritten) {
  const std::map<std::string, std::string> cases[] = {
      {},
      {{"only", "text"}},
      {{"only", "7"}},
      {{"a", "1"}, {"b", "x"}, {"c", "-0.5e3"}, {"d", ""}},
      {{"a,b", "3"}, {",", "5"}, {"k", "1,2"}},
  };
  for (const auto& params : cases) {
    auto read = RoundTrip(Params(params));
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(*read, params);
  }
  // Under a kind whose default differs in some fields, in all, in none.
  const std::map<std::string, std::string> sample = {{"t", "x"}, {"a", "1"}, {"b", "20"}};
  for (const char* kind_default : {"1,2", "10,20", "1,20"}) {
    auto read = RoundTrip(Params(sample), kind_default);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(*read, sample) << kind_default;
  }
}

TEST(SampleParamsTest, DamagedStoredFormsAreDataLoss) {
  SplitParams split;
  SplitSampleParams(Params({{"a", "1"}, {"b", "2"}}), split);
  v1::Sample sample;
  // Too few or too many fields, against the keys or the default.
  for (absl::string_view stored : {"1", "1,2,3", ",,,"}) {
    EXPECT_EQ(AddMeasuredParams(split.measured_keys, "1,2", stored, sample).code(),
              absl::StatusCode::kDataLoss)
        << stored;
  }
  EXPECT_EQ(AddMeasuredParams(split.measured_keys, "1", std::nullopt, sample).code(),
            absl::StatusCode::kDataLoss);
  // Values with no keys; keys that are not a serialized Sample.
  EXPECT_EQ(AddMeasuredParams("", "1", std::nullopt, sample).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(AddMeasuredParams("", "", absl::string_view("3"), sample).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(AddMeasuredParams("\xff\xff\xff", "1", std::nullopt, sample).code(),
            absl::StatusCode::kDataLoss);
}

TEST(SampleParamsTest, RandomBytesAreReadOrRefusedNeverACrash) {
  SplitParams split;
  SplitSampleParams(Params({{"a", "1"}, {"b", "2"}, {"c", "3"}}), split);
  std::mt19937_64 random(20261205);
  auto bytes = [&random](size_t max) {
    std::string s(random() % (max + 1), '\0');
    for (char& c : s) c = static_cast<char>(random() % 4 == 0 ? ',' : random() % 256);
    return s;
  };
  int refused = 0;
  for (int i = 0; i < 20000; ++i) {
    // The keys: whole, cut short, or with a byte changed (to ASCII, so that
    // protobuf's UTF-8 check does not flood the log).
    std::string keys = split.measured_keys;
    if (i % 3 == 1) keys.resize(random() % keys.size());
    if (i % 3 == 2) keys[random() % keys.size()] = static_cast<char>(random() % 128);
    const std::string kind_default = bytes(12);
    const std::string stored = bytes(12);
    v1::Sample sample;
    const absl::Status s = AddMeasuredParams(keys, kind_default, stored, sample);
    if (!s.ok()) {
      EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace fleetbench::storage
