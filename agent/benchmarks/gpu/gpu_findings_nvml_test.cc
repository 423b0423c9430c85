// DiagnoseGpu over facts read from tests/fake_nvml through the real dlopen
// path: what a node's findings say for the facts agent/facts/gpu_facts_test.cc
// checks field by field.
#include <string>
#include <vector>

#include "agent/benchmarks/gpu/gpu_findings.h"
#include "agent/facts/gpu_facts.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fake_nvml/fake_nvml_script.h"

namespace fleetbench::gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using fake_nvml::kH100Script;
using fake_nvml::kT4WithRefusalsScript;
using fake_nvml::kTwoA100Script;

class GpuFindingsFromNvmlTest : public ::testing::Test {
 protected:
  void TearDown() override { fake_nvml::ClearScript(); }
  void UseScript(const std::string& text) { fake_nvml::UseScript(text); }
  static NvmlOptions Fake() { return NvmlOptions{FAKE_NVML_LIBRARY}; }
};

TEST_F(GpuFindingsFromNvmlTest, FindingsFromFakeFacts) {
  UseScript(kH100Script);
  absl::StatusOr<std::vector<v1::GpuFacts>> gpus = ReadGpuFacts(Fake());
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  EXPECT_THAT(DiagnoseGpu((*gpus)[0]),
              ElementsAre("power capped: enforced 320 W of 450 W default",
                          "board configured below datasheet power: default "
                          "450 W of 700 W (H100 SXM)",
                          "PCIe link Gen4 x8 below max Gen5 x16",
                          "ECC errors: 2 uncorrected",
                          "clocks held back: sw_power_cap"));
}

TEST_F(GpuFindingsFromNvmlTest, AbsentFactsGiveNoFindings) {
  UseScript(kT4WithRefusalsScript);
  absl::StatusOr<std::vector<v1::GpuFacts>> gpus = ReadGpuFacts(Fake());
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  const v1::GpuFacts& f = (*gpus)[0];
  EXPECT_THAT(DiagnoseGpu(f), ElementsAre("ECC disabled"));
}

TEST_F(GpuFindingsFromNvmlTest, FindingsPerDevice) {
  UseScript(kTwoA100Script);
  absl::StatusOr<std::vector<v1::GpuFacts>> gpus = ReadGpuFacts(Fake());
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_THAT(DiagnoseGpu((*gpus)[0]), IsEmpty());
  EXPECT_THAT(DiagnoseGpu((*gpus)[1]),
              ElementsAre("MIG enabled", "clocks held back: sw_thermal_slowdown",
                          "running under vGPU"));
}

}  // namespace
}  // namespace fleetbench::gpu
