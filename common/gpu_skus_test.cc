#include "common/gpu_skus.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace fleetbench::gpu {
namespace {

std::string LabelOf(const char* nvml_name) {
  const GpuSku* sku = FindGpuSku(nvml_name);
  return sku == nullptr ? "" : sku->label;
}

TEST(GpuSkusTest, MatchesNvmlNames) {
  EXPECT_EQ(LabelOf("NVIDIA H200"), "H200 SXM");
  EXPECT_EQ(LabelOf("NVIDIA H200 NVL"), "H200 NVL");
  EXPECT_EQ(LabelOf("NVIDIA H100 80GB HBM3"), "H100 SXM");
  EXPECT_EQ(LabelOf("NVIDIA H100 PCIe"), "H100 PCIe");
  EXPECT_EQ(LabelOf("NVIDIA H100 NVL"), "H100 NVL");
  EXPECT_EQ(LabelOf("NVIDIA A100-SXM4-80GB"), "A100 SXM 80GB");
  EXPECT_EQ(LabelOf("NVIDIA A100-SXM4-40GB"), "A100 SXM 40GB");
  EXPECT_EQ(LabelOf("NVIDIA A100 80GB PCIe"), "A100 PCIe 80GB");
  EXPECT_EQ(LabelOf("NVIDIA A100-PCIE-40GB"), "A100 PCIe 40GB");
  EXPECT_EQ(LabelOf("NVIDIA L40S"), "L40S");
  EXPECT_EQ(LabelOf("NVIDIA L40"), "L40");
  EXPECT_EQ(LabelOf("NVIDIA L4"), "L4");
  EXPECT_EQ(LabelOf("NVIDIA GeForce RTX 4090"), "RTX 4090");
  EXPECT_EQ(LabelOf("NVIDIA A10G"), "A10G");
  EXPECT_EQ(LabelOf("NVIDIA A10"), "A10");
  EXPECT_EQ(LabelOf("Tesla T4"), "T4");
  EXPECT_EQ(LabelOf("Tesla V100-SXM2-16GB"), "V100 SXM2");
  EXPECT_EQ(LabelOf("Tesla V100-PCIE-32GB"), "V100 PCIe");
  EXPECT_EQ(LabelOf("Tesla V100S-PCIE-32GB"), "V100S PCIe");
}

TEST(GpuSkusTest, PrefixesOfOtherNamesDoNotMatch) {
  // "NVIDIA A10" must not claim an unknown A100 variant, nor "NVIDIA L4" an
  // L40-something, nor "RTX 4090" an "RTX 40900".
  EXPECT_EQ(FindGpuSku("NVIDIA A100X"), nullptr);
  EXPECT_EQ(FindGpuSku("NVIDIA L4X"), nullptr);
  EXPECT_EQ(FindGpuSku("NVIDIA GeForce RTX 3090"), nullptr);
  EXPECT_EQ(FindGpuSku(""), nullptr);
  EXPECT_EQ(FindGpuSku("AMD Instinct MI300X"), nullptr);
}

TEST(GpuSkusTest, DatasheetNumbersAreDenseRates) {
  const GpuSku* h100 = FindGpuSku("NVIDIA H100 80GB HBM3");
  ASSERT_NE(h100, nullptr);
  EXPECT_DOUBLE_EQ(PeakTflops(*h100, "bf16"), 989.5);
  EXPECT_DOUBLE_EQ(PeakTflops(*h100, "fp16"), 989.5);
  EXPECT_DOUBLE_EQ(PeakTflops(*h100, "tf32"), 494.5);
  EXPECT_DOUBLE_EQ(PeakTflops(*h100, "fp8"), 1979);
  EXPECT_DOUBLE_EQ(PeakTflops(*h100, "fp64"), 67);  // tensor-core FP64
  EXPECT_DOUBLE_EQ(h100->memory_GBps, 3350);
  EXPECT_DOUBLE_EQ(h100->board_power_w, 700);

  const GpuSku* h200 = FindGpuSku("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  EXPECT_DOUBLE_EQ(PeakTflops(*h200, "bf16"), PeakTflops(*h100, "bf16"));
  EXPECT_DOUBLE_EQ(h200->memory_GBps, 4800);
  EXPECT_DOUBLE_EQ(h200->board_power_w, 700);

  const GpuSku* a100 = FindGpuSku("NVIDIA A100-SXM4-80GB");
  ASSERT_NE(a100, nullptr);
  EXPECT_DOUBLE_EQ(PeakTflops(*a100, "bf16"), 312);
  EXPECT_DOUBLE_EQ(PeakTflops(*a100, "fp8"), 0);  // no FP8 on Ampere

  const GpuSku* t4 = FindGpuSku("Tesla T4");
  ASSERT_NE(t4, nullptr);
  EXPECT_DOUBLE_EQ(PeakTflops(*t4, "fp64"), 0);   // not published
  EXPECT_DOUBLE_EQ(PeakTflops(*t4, "fp16"), 65);
  EXPECT_DOUBLE_EQ(PeakTflops(*t4, "int8"), 0);   // not a GEMM dtype here
}

TEST(GpuSkusTest, FallsBackToCudaCoreFp64WithoutTensorFp64) {
  const GpuSku* v100 = FindGpuSku("Tesla V100-SXM2-16GB");
  ASSERT_NE(v100, nullptr);
  EXPECT_DOUBLE_EQ(PeakTflops(*v100, "fp64"), 7.8);
}

TEST(GpuSkusTest, TableIsWellFormed) {
  std::set<std::string> labels;
  for (const GpuSku& sku : KnownGpuSkus()) {
    EXPECT_TRUE(labels.insert(sku.label).second) << sku.label;
    EXPECT_FALSE(sku.name_matches.empty()) << sku.label;
    EXPECT_GT(sku.memory_GBps, 0) << sku.label;
    EXPECT_GT(sku.board_power_w, 0) << sku.label;
    EXPECT_GT(sku.fp16_tflops, 0) << sku.label;
    EXPECT_NE(std::string(sku.source), "") << sku.label;
    // Every row is reachable: its own names find it, not an earlier row.
    for (const char* match : sku.name_matches) {
      EXPECT_EQ(FindGpuSku(match), &sku) << match;
    }
  }
  EXPECT_GE(KnownGpuSkus().size(), 11u);
}

}  // namespace
}  // namespace fleetbench::gpu
