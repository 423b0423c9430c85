#include "agent/benchmarks/gpu/gpu_copy.h"
#include "agent/benchmarks/gpu/gpu_gemm.h"
#include "agent/benchmarks/gpu/gpu_params.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(GpuGemmParamsTest, Defaults) {
  absl::StatusOr<GpuGemmConfig> config = ParseGpuGemmParams({});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->dtypes, IsEmpty());  // every dtype the device can do
  EXPECT_THAT(config->sizes, ElementsAre(8192));
  EXPECT_THAT(config->devices, IsEmpty());
  EXPECT_EQ(config->trials, 10);
  EXPECT_EQ(config->warmup_products, 3);
  EXPECT_EQ(config->products_per_trial, 0);
  EXPECT_EQ(config->workspace_mib, 32);
}

TEST(GpuGemmParamsTest, Explicit) {
  absl::StatusOr<GpuGemmConfig> config = ParseGpuGemmParams(
      {{"dtypes", "bf16, fp8"}, {"sizes", "4096,16384"}, {"devices", "0,2"},
       {"trials", "5"}, {"products_per_trial", "20"}, {"workspace_mib", "0"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->dtypes, ElementsAre("bf16", "fp8"));
  EXPECT_THAT(config->sizes, ElementsAre(4096, 16384));
  EXPECT_THAT(config->devices, ElementsAre(0, 2));
  EXPECT_EQ(config->trials, 5);
  EXPECT_EQ(config->products_per_trial, 20);
  EXPECT_EQ(config->workspace_mib, 0);
}

TEST(GpuGemmParamsTest, RejectsWithActionableMessages) {
  auto message = [](const agent::Params& params) {
    absl::Status s = ParseGpuGemmParams(params).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    return std::string(s.message());
  };
  EXPECT_THAT(message({{"dtypes", "fp32"}}),
              HasSubstr("gpu_gemm: dtypes: 'fp32' is not one of fp64, tf32"));
  EXPECT_THAT(message({{"sizes", "1000"}}),
              HasSubstr("1000 is not a multiple of 16"));
  EXPECT_THAT(message({{"sizes", "65536"}}), HasSubstr("outside 256..32768"));
  EXPECT_THAT(message({{"devices", "first"}}),
              HasSubstr("'first' is not 'all' or a device index"));
  EXPECT_THAT(message({{"trials", "2"}}), HasSubstr("outside 3..1000"));
  EXPECT_THAT(message({{"trial_seconds", "nan"}}), HasSubstr("not a number"));
  EXPECT_THAT(message({{"dtypes", "bf16,bf16"}}), HasSubstr("listed twice"));
  EXPECT_THAT(message({{"size", "8192"}}),
              HasSubstr("unknown parameter 'size'"));
}

TEST(GpuGemmParamsTest, SupportedDtypesFollowComputeCapability) {
  EXPECT_THAT(SupportedGemmDtypes(7, 5), ElementsAre("fp64", "fp16"));
  EXPECT_THAT(SupportedGemmDtypes(8, 0),
              ElementsAre("fp64", "tf32", "fp16", "bf16"));
  EXPECT_THAT(SupportedGemmDtypes(8, 6),
              ElementsAre("fp64", "tf32", "fp16", "bf16"));
  EXPECT_THAT(SupportedGemmDtypes(8, 9),
              ElementsAre("fp64", "tf32", "fp16", "bf16", "fp8"));
  EXPECT_THAT(SupportedGemmDtypes(9, 0),
              ElementsAre("fp64", "tf32", "fp16", "bf16", "fp8"));
}

TEST(GpuCopyParamsTest, DefaultsDifferPerPlugin) {
  absl::StatusOr<GpuCopyConfig> pcie = ParseGpuCopyParams(kPcieCopyPlugin, {});
  ASSERT_TRUE(pcie.ok()) << pcie.status();
  EXPECT_EQ(pcie->size_mib, 256);
  EXPECT_EQ(pcie->copies_per_trial, 1);
  EXPECT_EQ(pcie->trials, 20);
  absl::StatusOr<GpuCopyConfig> hbm = ParseGpuCopyParams(kHbmCopyPlugin, {});
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  EXPECT_EQ(hbm->size_mib, 1024);
  EXPECT_EQ(hbm->copies_per_trial, 5);
}

TEST(GpuCopyParamsTest, Rejects) {
  absl::Status s =
      ParseGpuCopyParams(kPcieCopyPlugin, {{"size_mib", "0"}}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("pcie: size_mib: 0 is outside 1..16384"));
  s = ParseGpuCopyParams(kHbmCopyPlugin, {{"bytes", "1"}}).status();
  EXPECT_THAT(s.message(), HasSubstr("hbm: unknown parameter 'bytes'"));
}

TEST(ParamReaderTest, DevicesAll) {
  agent::Params params = {{"devices", " all "}};
  ParamReader r("x", params, {"devices"});
  absl::StatusOr<std::vector<int>> devices = r.Devices("devices");
  ASSERT_TRUE(devices.ok());
  EXPECT_THAT(*devices, IsEmpty());
}

}  // namespace
}  // namespace fleetbench::gpu
