// StartRun checks each benchmark's parameters with the injected validator
// before it stores anything (a bad value used to store a run that
// failed on every node).
#include <vector>

#include "controller/core/fleet_core_fixture.h"

namespace fleetbench::controller {
namespace {

class FleetCoreValidateTest : public FleetCoreTest {
 protected:
  // A validator that refuses gemm's sizes=-5 (as the plugin would) and
  // records every spec it was shown.
  void RestartWithValidator() {
    FleetOptions fleet = Options();
    fleet.validate_spec = [this](const v1::BenchmarkSpec& spec) {
      seen_.push_back(spec);
      if (spec.name() == "gemm" && spec.params().contains("sizes") &&
          spec.params().at("sizes") == "-5") {
        return absl::InvalidArgumentError("gemm: sizes: -5 is outside 1..16384");
      }
      if (spec.name() == "net" && !spec.params().contains("role")) {
        return absl::InvalidArgumentError("net: role: missing");
      }
      return absl::OkStatus();
    };
    RestartCore(std::move(fleet));
  }
  int StoredRuns() {
    auto runs = core_->ListRuns(v1::ListRunsRequest());
    EXPECT_TRUE(runs.ok()) << runs.status();
    return runs.ok() ? runs->runs_size() : -1;
  }
  std::vector<v1::BenchmarkSpec> seen_;
};

TEST_F(FleetCoreValidateTest, ARefusedParameterStoresNothing) {
  RestartWithValidator();
  auto link = Connect("a");
  v1::StartRunRequest request;
  v1::BenchmarkSpec* spec = request.add_benchmarks();
  spec->set_name("gemm");
  (*spec->mutable_params())["sizes"] = "-5";
  auto started = core_->StartRun(request);
  ASSERT_EQ(started.status().code(), absl::StatusCode::kInvalidArgument) << started.status();
  // The plugin's message, its name said once.
  EXPECT_EQ(started.status().message(), "gemm: sizes: -5 is outside 1..16384");
  EXPECT_EQ(StoredRuns(), 0);
  EXPECT_TRUE(link->RunTasks().empty());

  Start("gemm", {}, 0, {{"sizes", "64"}});  // a valid run still starts
  EXPECT_EQ(StoredRuns(), 1);
}

TEST_F(FleetCoreValidateTest, AMessageWithoutTheBenchmarkGetsItsName) {
  FleetOptions fleet = Options();
  fleet.validate_spec = [](const v1::BenchmarkSpec&) {
    return absl::InvalidArgumentError("threads: 0 is outside 1..256");
  };
  RestartCore(std::move(fleet));
  Connect("a");
  v1::StartRunRequest request;
  request.add_benchmarks()->set_name("gemm");
  auto started = core_->StartRun(request);
  EXPECT_EQ(started.status().message(), "gemm: threads: 0 is outside 1..256");
  EXPECT_EQ(StoredRuns(), 0);
}

TEST_F(FleetCoreValidateTest, APairwiseSpecIsCheckedAsTheHalfAnAgentRuns) {
  RestartWithValidator();
  Connect("a", /*net=*/true);
  Connect("b", /*net=*/true);
  Start("net", {}, 0, {{"streams", "2"}, {"pairing", "pair"}});
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].params().at("role"), "server");  // the core's key, added
  EXPECT_EQ(seen_[0].params().at("streams"), "2");
  EXPECT_FALSE(seen_[0].params().contains("pairing"));  // the core's key, taken
  EXPECT_EQ(StoredRuns(), 1);
}

TEST_F(FleetCoreValidateTest, WithoutAValidatorTheAgentsDecide) {
  Connect("a");
  Start("gemm", {}, 0, {{"sizes", "-5"}});
  EXPECT_EQ(StoredRuns(), 1);
}

}  // namespace
}  // namespace fleetbench::controller
