#include "common/wire_limits.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench {
namespace {

using ::testing::HasSubstr;

v1::StartRunRequest GemmRun() {
  v1::StartRunRequest request;
  v1::BenchmarkSpec* spec = request.add_benchmarks();
  spec->set_name("gemm");
  (*spec->mutable_params())["sizes"] = "1024,2048";
  return request;
}

TEST(StartRunBoundsTest, OrdinaryRunPasses) {
  EXPECT_TRUE(CheckStartRunBounds(GemmRun()).ok());
}

// Regression: a run with megabytes of parameters was stored and then broke
// every peer that read it (agents, `fleetbench runs`).
TEST(StartRunBoundsTest, LongValueIsRefusedWithoutEchoingIt) {
  v1::StartRunRequest request = GemmRun();
  (*request.mutable_benchmarks(0)->mutable_params())["sizes"] = std::string(5 << 20, '7');
  const absl::Status s = CheckStartRunBounds(request);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("gemm.sizes"));
  EXPECT_THAT(s.message(), HasSubstr("at most 1024"));
  EXPECT_LT(s.message().size(), 200u);
}

TEST(StartRunBoundsTest, TotalIsBoundedToo) {
  v1::StartRunRequest request = GemmRun();
  for (int b = 0; b < 2; ++b) {
    v1::BenchmarkSpec* spec = request.add_benchmarks();
    spec->set_name("b" + std::to_string(b));
    for (int i = 0; i < kMaxParamsPerBenchmark; ++i) {
      (*spec->mutable_params())["k" + std::to_string(i)] = std::string(kMaxParamValueBytes, 'v');
    }
  }
  const absl::Status s = CheckStartRunBounds(request);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("parameters total"));
}

TEST(StartRunBoundsTest, KeysLabelsNodesAndCounts) {
  v1::StartRunRequest request = GemmRun();
  (*request.mutable_benchmarks(0)->mutable_params())[std::string(200, 'k')] = "1";
  EXPECT_THAT(CheckStartRunBounds(request).message(), HasSubstr("parameter name"));

  request = GemmRun();
  (*request.mutable_select_labels())["region"] = std::string(300, 'r');
  EXPECT_THAT(CheckStartRunBounds(request).message(), HasSubstr("at most 256"));

  request = GemmRun();
  request.add_nodes(std::string(65, 'n'));
  EXPECT_FALSE(CheckStartRunBounds(request).ok());

  request = GemmRun();
  for (int i = 0; i < kMaxBenchmarksPerRun; ++i) request.add_benchmarks()->set_name("x");
  EXPECT_THAT(CheckStartRunBounds(request).message(), HasSubstr("at most 64"));
}

TEST(LabelTest, Bounds) {
  EXPECT_TRUE(CheckLabel("--label", "region", "us-east").ok());
  EXPECT_FALSE(CheckLabel("--label", "", "x").ok());
  EXPECT_FALSE(CheckLabel("--label", std::string(65, 'k'), "x").ok());
  EXPECT_FALSE(CheckLabel("--label", "k", std::string(257, 'v')).ok());
}

}  // namespace
}  // namespace fleetbench
