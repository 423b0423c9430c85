// Real measurements on a real GPU (CTest label "gpu"). Every test skips,
// with the reason, where the module or a device is missing, so the suite
// passes on machines without a GPU. Sizes are small: this checks that the
// measuring paths work and report sane numbers, not how fast the GPU is.
#include <atomic>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "agent/benchmarks/gpu/gpu_copy.h"
#include "agent/benchmarks/gpu/gpu_gemm.h"
#include "agent/benchmarks/gpu/gpu_plugin.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::gpu {
namespace {

using ::testing::HasSubstr;

class GpuDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_ = DefaultGpuPluginOptions();
    const std::string path = GPU_MODULE_PATH;
    if (path.empty()) GTEST_SKIP() << "built without CUDA";
    options_.module.candidates = {path};
    if (absl::Status probe = ProbeGpu(options_.module); !probe.ok()) {
      GTEST_SKIP() << "no GPU: " << probe.message();
    }
  }

  static double Param(const v1::Sample& sample, const std::string& key) {
    auto it = sample.params().find(key);
    double value = -1;
    if (it == sample.params().end() || !absl::SimpleAtod(it->second, &value)) {
      return -1;
    }
    return value;
  }

  GpuPluginOptions options_;
  std::atomic<bool> cancelled_{false};
};

TEST_F(GpuDeviceTest, GemmEveryDtypeOnDeviceZero) {
  GpuGemmBenchmark gemm(options_);
  agent::RunContext context(::testing::TempDir(), &cancelled_, nullptr);
  absl::StatusOr<std::vector<v1::Sample>> samples = gemm.Run(
      {{"sizes", "2048"}, {"devices", "0"}, {"trials", "3"},
       {"trial_seconds", "0.02"}},
      context);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_FALSE(samples->empty());
  for (const v1::Sample& s : *samples) {
    SCOPED_TRACE(s.DebugString());
    EXPECT_THAT(s.metric(), HasSubstr("gemm.gpu."));
    EXPECT_GT(s.value(), 0);
    EXPECT_LT(s.value(), 20000);  // no GPU does 20 PFLOP/s dense
    if (Param(s, "pct_of_peak") >= 0) {
      EXPECT_LT(Param(s, "pct_of_peak"), 120);
    }
  }
}

TEST_F(GpuDeviceTest, GemmCancelled) {
  GpuGemmBenchmark gemm(options_);
  cancelled_ = true;
  agent::RunContext context(::testing::TempDir(), &cancelled_, nullptr);
  EXPECT_EQ(gemm.Run({{"sizes", "1024"}}, context).status().code(),
            absl::StatusCode::kCancelled);
}

TEST_F(GpuDeviceTest, PcieBothDirections) {
  GpuCopyBenchmark pcie(kPcieCopyPlugin, options_);
  agent::RunContext context(::testing::TempDir(), &cancelled_, nullptr);
  absl::StatusOr<std::vector<v1::Sample>> samples =
      pcie.Run({{"size_mib", "64"}, {"devices", "0"}, {"trials", "5"}}, context);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_EQ((*samples)[0].metric(), "pcie.h2d.GBps");
  EXPECT_EQ((*samples)[1].metric(), "pcie.d2h.GBps");
  for (const v1::Sample& s : *samples) {
    SCOPED_TRACE(s.DebugString());
    EXPECT_GT(s.value(), 0.5);  // slower than Gen1 x4 is broken
    EXPECT_LT(s.value(), 1000);
  }
}

TEST_F(GpuDeviceTest, HbmCopy) {
  GpuCopyBenchmark hbm(kHbmCopyPlugin, options_);
  agent::RunContext context(::testing::TempDir(), &cancelled_, nullptr);
  absl::StatusOr<std::vector<v1::Sample>> samples =
      hbm.Run({{"size_mib", "256"}, {"devices", "0"}, {"trials", "5"}}, context);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 1u);
  const v1::Sample& s = (*samples)[0];
  EXPECT_EQ(s.metric(), "gpu.mem.GBps");
  EXPECT_GT(s.value(), 50);
  EXPECT_LT(s.value(), 20000);
  if (Param(s, "pct_of_peak") >= 0) {
    EXPECT_LT(Param(s, "pct_of_peak"), 110);
  }
}

TEST_F(GpuDeviceTest, UnknownDeviceIsAUserError) {
  GpuGemmBenchmark gemm(options_);
  agent::RunContext context(::testing::TempDir(), &cancelled_, nullptr);
  absl::StatusOr<std::vector<v1::Sample>> samples =
      gemm.Run({{"devices", "1023"}}, context);
  EXPECT_EQ(samples.status().code(), absl::StatusCode::kInvalidArgument);
}

// NCCL across nodes, the module's part on one GPU: a communicator of one
// rank through the non-blocking path (unique id, init, sweep, max of the
// times, finalize), with the INFO log captured; and a communicator of two
// whose second rank never comes, aborted on cancel within a bound.
TEST_F(GpuDeviceTest, NcclGroupOfOneRunsTheNonBlockingPath) {
  absl::StatusOr<std::unique_ptr<GpuModule>> module =
      GpuModule::Load(options_.module);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<NcclId> id = (*module)->NcclUniqueId();
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_GT(id->nccl_version, 0);
  GroupCollectiveRequest request;
  request.ops = {FLEETBENCH_GPU_ALLREDUCE, FLEETBENCH_GPU_ALLGATHER,
                 FLEETBENCH_GPU_REDUCESCATTER};
  request.sizes = {1 << 20, 4 << 20};
  request.iters = 3;
  request.warmup_iters = 1;
  request.id = id->id;
  request.nccl_debug_file = ::testing::TempDir() + "/nccl-rank0.log";
  absl::StatusOr<CollectiveSweep> sweep =
      (*module)->GroupCollective(request, [] { return false; });
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  EXPECT_EQ(sweep->ranks, 1);
  ASSERT_EQ(sweep->points.size(), 6u);
  for (const FleetbenchGpuCollectivePoint& p : sweep->points) {
    EXPECT_GT(p.seconds, 0);
    EXPECT_GT(p.checked, 0);
    EXPECT_EQ(p.mismatches, 0);
  }
}

TEST_F(GpuDeviceTest, NcclGroupWithAMissingRankIsAbortedOnCancel) {
  absl::StatusOr<std::unique_ptr<GpuModule>> module =
      GpuModule::Load(options_.module);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<NcclId> id = (*module)->NcclUniqueId();
  ASSERT_TRUE(id.ok()) << id.status();
  GroupCollectiveRequest request;
  request.ops = {FLEETBENCH_GPU_ALLREDUCE};
  request.sizes = {1 << 20};
  request.nranks = 2;  // rank 1 never comes
  request.id = id->id;
  const absl::Time cancel_at = absl::Now() + absl::Seconds(2);
  absl::StatusOr<CollectiveSweep> sweep = (*module)->GroupCollective(
      request, [cancel_at] { return absl::Now() >= cancel_at; });
  EXPECT_EQ(sweep.status().code(), absl::StatusCode::kCancelled)
      << sweep.status();
  EXPECT_LT(absl::Now() - cancel_at, absl::Seconds(10));
}

}  // namespace
}  // namespace fleetbench::gpu
