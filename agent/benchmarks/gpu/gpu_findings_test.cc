#include "agent/benchmarks/gpu/gpu_findings.h"

#include "agent/benchmarks/gpu/gpu_math.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A healthy H100 SXM as NVML would describe it.
v1::GpuFacts HealthyH100() {
  v1::GpuFacts f;
  f.set_name("NVIDIA H100 80GB HBM3");
  f.set_power_enforced_limit_w(700);
  f.set_power_default_limit_w(700);
  f.set_pcie_gen_max(5);
  f.set_pcie_width_max(16);
  f.mutable_readings()->set_pcie_gen_current(5);
  f.mutable_readings()->set_pcie_width_current(16);
  f.set_mig_enabled(false);
  f.set_ecc_enabled(true);
  f.set_ecc_uncorrected_volatile(0);
  f.set_ecc_uncorrected_aggregate(0);
  f.mutable_readings()->set_temperature_c(45);
  f.set_temperature_slowdown_c(87);
  f.mutable_readings()->set_clock_event_reasons(kReasonGpuIdle);
  f.set_virtualization_mode("none");
  return f;
}

TEST(GpuFindingsTest, HealthyBoardHasNoFindings) {
  EXPECT_THAT(DiagnoseGpu(HealthyH100()), IsEmpty());
}

TEST(GpuFindingsTest, UnknownFactsSayNothing) {
  EXPECT_THAT(DiagnoseGpu(v1::GpuFacts()), IsEmpty());
}

TEST(GpuFindingsTest, PowerCap) {
  v1::GpuFacts f = HealthyH100();
  f.set_name("NVIDIA L40S");
  f.set_power_default_limit_w(450);
  f.set_power_enforced_limit_w(320);
  EXPECT_THAT(DiagnoseGpu(f),
              ElementsAre("power capped: enforced 320 W of 450 W default"));
}

TEST(GpuFindingsTest, BoardConfiguredBelowDatasheetPower) {
  v1::GpuFacts f = HealthyH100();
  f.set_power_default_limit_w(500);
  f.set_power_enforced_limit_w(500);
  EXPECT_THAT(DiagnoseGpu(f),
              ElementsAre("board configured below datasheet power: default "
                          "500 W of 700 W (H100 SXM)"));
}

TEST(GpuFindingsTest, NarrowPcieLink) {
  v1::GpuFacts f = HealthyH100();
  f.mutable_readings()->set_pcie_gen_current(4);
  f.mutable_readings()->set_pcie_width_current(8);
  EXPECT_THAT(DiagnoseGpu(f),
              ElementsAre("PCIe link Gen4 x8 below max Gen5 x16"));
}

TEST(GpuFindingsTest, SlowPcieLinkAtFullWidthMayBeIdle) {
  v1::GpuFacts f = HealthyH100();
  f.mutable_readings()->set_pcie_gen_current(1);
  EXPECT_THAT(DiagnoseGpu(f),
              ElementsAre("PCIe link Gen1 x16 below max Gen5 x16 (speed "
                          "drops at idle; check under load)"));
}

TEST(GpuFindingsTest, Mig) {
  v1::GpuFacts f = HealthyH100();
  f.set_mig_enabled(true);
  f.set_mig_pending_enabled(true);
  EXPECT_THAT(DiagnoseGpu(f), ElementsAre("MIG enabled"));
  f.set_mig_pending_enabled(false);
  EXPECT_THAT(DiagnoseGpu(f), ElementsAre("MIG enabled",
                                          "MIG disable pending a GPU reset"));
}

TEST(GpuFindingsTest, EccErrorsAndEccOff) {
  v1::GpuFacts f = HealthyH100();
  f.set_ecc_uncorrected_volatile(2);
  f.set_ecc_uncorrected_aggregate(5);
  EXPECT_THAT(DiagnoseGpu(f), ElementsAre("ECC errors: 5 uncorrected"));

  v1::GpuFacts off = HealthyH100();
  off.set_ecc_enabled(false);
  EXPECT_THAT(DiagnoseGpu(off), ElementsAre("ECC disabled"));
  off.set_ecc_pending_enabled(true);
  EXPECT_THAT(DiagnoseGpu(off),
              ElementsAre("ECC disabled (enable pending a GPU reset)"));
}

TEST(GpuFindingsTest, Thermal) {
  v1::GpuFacts f = HealthyH100();
  f.mutable_readings()->set_temperature_c(87);
  f.mutable_readings()->set_clock_event_reasons(kReasonSwThermalSlowdown |
                                                kReasonHwSlowdown);
  EXPECT_THAT(DiagnoseGpu(f),
              ElementsAre("thermal: at/above slowdown threshold (87 C, "
                          "slowdown at 87 C)",
                          "clocks held back: hw_slowdown, sw_thermal_slowdown"));
}

TEST(GpuFindingsTest, VirtualGpu) {
  v1::GpuFacts f = HealthyH100();
  f.set_virtualization_mode("vgpu");
  EXPECT_THAT(DiagnoseGpu(f), ElementsAre("running under vGPU"));
  f.set_virtualization_mode("passthrough");
  EXPECT_THAT(DiagnoseGpu(f), IsEmpty());
}

TEST(GpuFindingsTest, SeveralFindingsInAFixedOrder) {
  v1::GpuFacts f = HealthyH100();
  f.set_power_enforced_limit_w(400);
  f.mutable_readings()->set_pcie_width_current(8);
  f.set_mig_enabled(true);
  f.set_virtualization_mode("vgpu");
  EXPECT_THAT(DiagnoseGpu(f),
              ElementsAre("power capped: enforced 400 W of 700 W default",
                          "PCIe link Gen5 x8 below max Gen5 x16", "MIG enabled",
                          "running under vGPU"));
}

}  // namespace
}  // namespace fleetbench::gpu
