#include "agent/benchmarks/sample_summary.h"

#include <string>

#include "common/stats.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

TEST(SampleSummaryTest, WritesRunsPercentilesAndSpreadWithTheUnit) {
  google::protobuf::Map<std::string, std::string> params;
  params["method"] = "kept";
  AddSummaryParams(Summarize({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), "tflops",
                   &params);
  EXPECT_EQ(params.size(), 7u);
  EXPECT_EQ(params.at("runs"), "11");
  EXPECT_EQ(params.at("min_tflops"), "1");
  EXPECT_EQ(params.at("max_tflops"), "11");
  EXPECT_EQ(params.at("p10_tflops"), "2");
  EXPECT_EQ(params.at("p90_tflops"), "10");
  EXPECT_EQ(params.at("spread"), "1.66667");  // (11 - 1) / 6
  EXPECT_EQ(params.at("method"), "kept");
}

TEST(SampleSummaryTest, NoRunsWritesZeros) {
  google::protobuf::Map<std::string, std::string> params;
  AddSummaryParams(Summarize({}), "GBps", &params);
  EXPECT_EQ(params.at("runs"), "0");
  EXPECT_EQ(params.at("min_GBps"), "0");
  EXPECT_EQ(params.at("spread"), "0");
}

}  // namespace
}  // namespace fleetbench::agent
