// The GPU node rules on facts and samples fixtures (ported from the GPU
// plugin's former gpu_findings_test: every case keeps its intent, now as
// v1::Finding codes, severities and evidence).
#include <string>
#include <vector>

#include "common/gpu_values.h"
#include "diagnosis/node_rules.h"
#include "diagnosis/rules_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::diagnosis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A healthy H100 SXM as NVML would describe it.
v1::GpuFacts HealthyH100(int index = 0) {
  v1::GpuFacts f;
  f.set_index(index);
  f.set_name("NVIDIA H100 80GB HBM3");
  f.set_pci_bus_id(index == 0 ? "00000000:3B:00.0" : "00000000:5D:00.0");
  f.set_driver_version("550.54.15");
  f.set_cuda_driver_version("12.4");
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
  f.mutable_readings()->set_clock_event_reasons(gpu::kReasonGpuIdle);
  f.set_virtualization_mode("none");
  return f;
}

// A node with one such GPU, enough cores and an RDMA NIC: no findings.
NodeEvidence NodeWith(const v1::GpuFacts& gpu) {
  NodeEvidence e;
  e.node = "gpu-1";
  e.run_id = "run-1";
  e.time_unix_ms = 1700000000000;
  e.facts.mutable_cpu()->set_logical_cores(32);
  e.facts.add_rdma_devices("mlx5_0");
  *e.facts.add_gpus() = gpu;
  return e;
}

v1::Sample GpuSample(const std::string& metric, double value,
                     const v1::GpuFacts& gpu) {
  v1::Sample s;
  s.set_metric(metric);
  s.set_value(value);
  s.set_benchmark(metric.substr(0, metric.find('.')));
  (*s.mutable_params())["gpu"] = std::to_string(gpu.index());
  // CUDA spells the address with a 16-bit domain and lower case.
  (*s.mutable_params())["gpu_pci_bus_id"] = gpu.pci_bus_id().substr(4);
  return s;
}

TEST(GpuNodeRulesTest, HealthyBoardHasNoFindings) {
  EXPECT_THAT(DiagnoseNode(NodeWith(HealthyH100())), IsEmpty());
}

TEST(GpuNodeRulesTest, UnknownFactsSayNothing) {
  v1::GpuFacts unknown;
  unknown.set_name("NVIDIA H100 80GB HBM3");
  EXPECT_THAT(DiagnoseNode(NodeWith(unknown)), IsEmpty());
}

TEST(GpuNodeRulesTest, PowerCap) {
  v1::GpuFacts g = HealthyH100();
  g.set_name("NVIDIA L40S");
  g.set_power_default_limit_w(450);
  g.set_power_enforced_limit_w(320);
  const v1::Finding f = Only(DiagnoseNode(NodeWith(g)));
  EXPECT_EQ(f.code(), "gpu.power_capped");
  EXPECT_EQ(f.severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(f.summary(), "GPU 0 power capped at 320 W of 450 W default");
  EXPECT_EQ(f.subject().node(), "gpu-1");
  EXPECT_EQ(f.subject().gpu_index(), 0);
  EXPECT_EQ(f.run_id(), "run-1");
  EXPECT_EQ(f.time_unix_ms(), 1700000000000);
  ASSERT_EQ(f.evidence_size(), 1);
  EXPECT_EQ(f.evidence(0).name(), "gpu.power_enforced_limit_w");
  EXPECT_EQ(f.evidence(0).measured(), 320);
  EXPECT_EQ(f.evidence(0).expected(), 450);
  EXPECT_EQ(f.evidence(0).unit(), "W");
  EXPECT_EQ(f.evidence(0).expectation_source(), "NVML default power limit");
  EXPECT_FALSE(f.effect().empty());
  EXPECT_FALSE(f.suggestion().empty());
}

TEST(GpuNodeRulesTest, PowerCapThresholdIsOnePercent) {
  v1::GpuFacts g = HealthyH100();
  g.set_power_enforced_limit_w(kPowerCapShare * 700);  // exactly at: no cap
  EXPECT_THAT(DiagnoseNode(NodeWith(g)), IsEmpty());
  g.set_power_enforced_limit_w(kPowerCapShare * 700 - 1);
  EXPECT_THAT(Codes(DiagnoseNode(NodeWith(g))),
              ElementsAre("gpu.power_capped"));
}

TEST(GpuNodeRulesTest, BoardConfiguredBelowDatasheetPower) {
  v1::GpuFacts g = HealthyH100();
  g.set_power_default_limit_w(500);
  g.set_power_enforced_limit_w(500);
  const v1::Finding f = Only(DiagnoseNode(NodeWith(g)));
  EXPECT_EQ(f.code(), "gpu.board_power_low");
  EXPECT_EQ(f.summary(),
            "GPU 0 (H100 SXM) configured for 500 W, datasheet 700 W");
  EXPECT_EQ(f.evidence(0).expected(), 700);
  EXPECT_EQ(f.evidence(0).expectation_source(),
            "SKU table: H100 SXM (h100-datasheet)");
}

TEST(GpuNodeRulesTest, NarrowPcieLinkAtRestWarns) {
  v1::GpuFacts g = HealthyH100();
  g.mutable_readings()->set_pcie_gen_current(4);
  g.mutable_readings()->set_pcie_width_current(8);
  const v1::Finding f = Only(DiagnoseNode(NodeWith(g)));
  EXPECT_EQ(f.code(), "pcie.link_degraded");
  EXPECT_EQ(f.severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(f.summary(), "GPU 0 PCIe link Gen4 x8 at rest, max Gen5 x16");
  EXPECT_EQ(f.evidence(0).name(), "pcie.link_width");
  EXPECT_EQ(f.evidence(0).measured(), 8);
  EXPECT_EQ(f.evidence(0).expected(), 16);
}

TEST(GpuNodeRulesTest, SlowPcieLinkAtFullWidthAtRestIsOnlyInfo) {
  v1::GpuFacts g = HealthyH100();
  g.mutable_readings()->set_pcie_gen_current(1);
  const v1::Finding f = Only(DiagnoseNode(NodeWith(g)));
  EXPECT_EQ(f.code(), "pcie.link_degraded");
  EXPECT_EQ(f.severity(), v1::SEVERITY_INFO);
  EXPECT_THAT(f.context(), ElementsAre(HasSubstr("under load")));
}

TEST(GpuNodeRulesTest, LinkUnderLoadDecides) {
  // Idle downshift: Gen1 at rest, full Gen5 x16 while copying -> nothing.
  v1::GpuFacts g = HealthyH100();
  g.mutable_readings()->set_pcie_gen_current(1);
  NodeEvidence idle = NodeWith(g);
  v1::Sample h2d = GpuSample("pcie.h2d.GBps", 55, g);
  (*h2d.mutable_params())["pcie_link"] = "Gen5 x16";
  (*h2d.mutable_params())["pcie_link_max"] = "Gen5 x16";
  idle.samples.push_back(h2d);
  EXPECT_THAT(DiagnoseNode(idle), IsEmpty());

  // x8 under load: a warning with the measured copy rate and the link's.
  NodeEvidence loaded = NodeWith(HealthyH100());
  (*h2d.mutable_params())["pcie_link"] = "Gen5 x8";
  h2d.set_value(26);
  loaded.samples.push_back(h2d);
  const v1::Finding f = Only(DiagnoseNode(loaded));
  EXPECT_EQ(f.code(), "pcie.link_degraded");
  EXPECT_EQ(f.severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(f.summary(), "GPU 0 PCIe link Gen5 x8 under load, max Gen5 x16");
  ASSERT_EQ(f.evidence_size(), 3);
  EXPECT_EQ(f.evidence(2).name(), "pcie.h2d.GBps");
  EXPECT_EQ(f.evidence(2).measured(), 26);
  EXPECT_NEAR(f.evidence(2).expected(), 63.0, 0.1);
}

TEST(GpuNodeRulesTest, DegradedNonGpuDeviceFromSysfs) {
  NodeEvidence e = NodeWith(HealthyH100());
  v1::PcieDeviceFacts* nic = e.facts.add_pcie_devices();
  nic->set_address("0000:17:00.0");
  nic->set_class_code("0x020000");
  nic->set_current_link_speed("16.0 GT/s PCIe");
  nic->set_max_link_speed("16.0 GT/s PCIe");
  nic->set_current_link_width(8);
  nic->set_max_link_width(16);
  nic->set_degraded(true);
  // The GPU's own sysfs entry is judged by NVML, not twice.
  v1::PcieDeviceFacts* gpu_entry = e.facts.add_pcie_devices();
  gpu_entry->set_address("0000:3b:00.0");
  gpu_entry->set_degraded(true);
  const v1::Finding f = Only(DiagnoseNode(e));
  EXPECT_EQ(f.code(), "pcie.link_degraded");
  EXPECT_EQ(f.subject().device(), "0000:17:00.0");
  EXPECT_FALSE(f.subject().has_gpu_index());
  EXPECT_EQ(f.severity(), v1::SEVERITY_WARNING);
}

TEST(GpuNodeRulesTest, Mig) {
  v1::GpuFacts g = HealthyH100();
  g.set_mig_enabled(true);
  g.set_mig_pending_enabled(true);
  const v1::Finding on = Only(DiagnoseNode(NodeWith(g)));
  EXPECT_EQ(on.code(), "gpu.mig");
  EXPECT_EQ(on.severity(), v1::SEVERITY_WARNING);
  EXPECT_THAT(on.context(), IsEmpty());
  g.set_mig_pending_enabled(false);
  EXPECT_THAT(Only(DiagnoseNode(NodeWith(g))).context(),
              ElementsAre("MIG disable pending a GPU reset"));
  g.set_mig_enabled(false);
  g.set_mig_pending_enabled(true);
  const v1::Finding pending = Only(DiagnoseNode(NodeWith(g)));
  EXPECT_EQ(pending.severity(), v1::SEVERITY_INFO);
  EXPECT_EQ(pending.summary(), "GPU 0 MIG enable pending a GPU reset");
}

TEST(GpuNodeRulesTest, EccErrorsAndEccOff) {
  v1::GpuFacts g = HealthyH100();
  g.set_ecc_uncorrected_aggregate(5);
  const v1::Finding lifetime = Only(DiagnoseNode(NodeWith(g)));
  EXPECT_EQ(lifetime.code(), "gpu.ecc_errors");
  EXPECT_EQ(lifetime.severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(lifetime.summary(),
            "GPU 0 has 5 uncorrected ECC errors (board lifetime)");
  g.set_ecc_uncorrected_volatile(2);
  const v1::Finding recent = Only(DiagnoseNode(NodeWith(g)));
  EXPECT_EQ(recent.severity(), v1::SEVERITY_CRITICAL);
  EXPECT_EQ(recent.evidence_size(), 2);

  // New errors during the stress run are critical too.
  NodeEvidence stressed = NodeWith(HealthyH100());
  v1::Sample s = GpuSample("stress.gpu.sustained.tflops", 700, HealthyH100());
  (*s.mutable_params())["ecc_uncorrected_delta"] = "1";
  stressed.samples.push_back(s);
  EXPECT_EQ(Only(DiagnoseNode(stressed)).severity(), v1::SEVERITY_CRITICAL);

  v1::GpuFacts off = HealthyH100();
  off.set_ecc_enabled(false);
  const v1::Finding disabled = Only(DiagnoseNode(NodeWith(off)));
  EXPECT_EQ(disabled.code(), "gpu.ecc_disabled");
  EXPECT_THAT(disabled.context(), IsEmpty());
  off.set_ecc_pending_enabled(true);
  EXPECT_THAT(Only(DiagnoseNode(NodeWith(off))).context(),
              ElementsAre("enable pending a GPU reset"));
}

TEST(GpuNodeRulesTest, ThermalAtRest) {
  v1::GpuFacts g = HealthyH100();
  g.mutable_readings()->set_temperature_c(87);
  g.mutable_readings()->set_clock_event_reasons(gpu::kReasonSwThermalSlowdown |
                                                gpu::kReasonHwSlowdown);
  const v1::Finding f = Only(DiagnoseNode(NodeWith(g)));
  EXPECT_EQ(f.code(), "gpu.thermal_throttle");
  EXPECT_EQ(f.severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(
      f.summary(),
      "GPU 0 slowed by heat: 87 C at rest, hw_slowdown, sw_thermal_slowdown");
  EXPECT_EQ(f.evidence(0).name(), "gpu.temperature_c");
  EXPECT_EQ(f.evidence(0).expected(), 87);
}

TEST(GpuNodeRulesTest, HwSlowdownShareOfTheStressRun) {
  const v1::GpuFacts g = HealthyH100();
  auto with_share = [&](const char* reason, const char* share) {
    NodeEvidence e = NodeWith(g);
    v1::Sample s = GpuSample("stress.gpu.throttle_fraction.ratio", 0.5, g);
    (*s.mutable_params())[std::string("throttle_") + reason] = share;
    e.samples.push_back(s);
    v1::Sample first = GpuSample("stress.gpu.first_throttle.s", 140, g);
    (*first.mutable_params())["throttled"] = "yes";
    e.samples.push_back(first);
    return DiagnoseNode(e);
  };
  EXPECT_THAT(with_share("hw_slowdown", "0.05"), IsEmpty());  // below 10%
  const std::vector<v1::Finding> some =
      with_share("sw_thermal_slowdown", "0.3");
  ASSERT_EQ(some.size(), 1u);
  EXPECT_EQ(some[0].severity(), v1::SEVERITY_WARNING);
  EXPECT_THAT(some[0].context(), ElementsAre("first power or heat slowdown "
                                             "after 140 s of load"));
  const std::vector<v1::Finding> hw = with_share("hw_slowdown", "0.4");
  ASSERT_EQ(hw.size(), 1u);
  EXPECT_EQ(hw[0].code(), "gpu.thermal_throttle");
  EXPECT_EQ(hw[0].severity(), v1::SEVERITY_CRITICAL);
  EXPECT_EQ(hw[0].summary(),
            "GPU 0 slowed by heat: hw_slowdown 40% of the sustained run");
  EXPECT_EQ(hw[0].evidence(0).name(),
            "stress.gpu.throttle_fraction.ratio[hw_slowdown]");
  EXPECT_EQ(hw[0].evidence(0).measured(), 0.4);
  // sw_power_cap most of the run is the power limit, not heat.
  const std::vector<v1::Finding> power = with_share("sw_power_cap", "0.9");
  EXPECT_THAT(Codes(power), ElementsAre("gpu.power_throttle"));
  EXPECT_EQ(power[0].severity(), v1::SEVERITY_INFO);
}

TEST(GpuNodeRulesTest, WrongResultsAndSustainedDropUnderStress) {
  const v1::GpuFacts g = HealthyH100();
  NodeEvidence e = NodeWith(g);
  v1::Sample faulty = GpuSample("stress.gpu.faulty.count", 1, g);
  (*faulty.mutable_params())["checksum_mismatches"] = "3";
  (*faulty.mutable_params())["checksum_checks"] = "40";
  e.samples.push_back(faulty);
  v1::Sample sustained = GpuSample("stress.gpu.sustained.tflops", 600, g);
  (*sustained.mutable_params())["burst_tflops"] = "750";
  e.samples.push_back(sustained);
  const std::vector<v1::Finding> found = DiagnoseNode(e);
  EXPECT_THAT(Codes(found),
              ElementsAre("gpu.wrong_results", "gpu.sustained_drop"));
  EXPECT_EQ(found[0].severity(), v1::SEVERITY_CRITICAL);
  EXPECT_THAT(found[0].context(), ElementsAre("3 of 40 checksums differed"));
  EXPECT_EQ(found[1].summary(),
            "GPU 0 sustained 600 TFLOP/s, 80% of its first seconds (750)");

  NodeEvidence steady = NodeWith(g);
  (*sustained.mutable_params())["burst_tflops"] = "640";  // 94%
  steady.samples.push_back(sustained);
  EXPECT_THAT(DiagnoseNode(steady), IsEmpty());
}

TEST(GpuNodeRulesTest, GemmFarBelowDatasheet) {
  const v1::GpuFacts g = HealthyH100();
  NodeEvidence e = NodeWith(g);
  for (double tflops : {300.0, 420.0}) {  // two sizes; the best counts
    v1::Sample s = GpuSample("gemm.gpu.bf16.tflops", tflops, g);
    s.set_benchmark("gpu_gemm");
    (*s.mutable_params())["dtype"] = "bf16";
    e.samples.push_back(s);
  }
  const v1::Finding f = Only(DiagnoseNode(e));
  EXPECT_EQ(f.code(), "gpu.below_datasheet");
  EXPECT_EQ(f.evidence(0).measured(), 420);
  EXPECT_EQ(f.evidence(0).expected(), 989.5);
  e.samples[1].set_value(700);
  EXPECT_THAT(DiagnoseNode(e), IsEmpty());
}

TEST(GpuNodeRulesTest, VirtualGpu) {
  v1::GpuFacts g = HealthyH100();
  g.set_virtualization_mode("vgpu");
  EXPECT_THAT(Codes(DiagnoseNode(NodeWith(g))), ElementsAre("gpu.vgpu"));
  g.set_virtualization_mode("passthrough");
  EXPECT_THAT(DiagnoseNode(NodeWith(g)), IsEmpty());
}

TEST(GpuNodeRulesTest, SeveralFindingsWorstFirstThenByCode) {
  v1::GpuFacts g = HealthyH100();
  g.set_power_enforced_limit_w(400);
  g.mutable_readings()->set_pcie_width_current(8);
  g.set_mig_enabled(true);
  g.set_virtualization_mode("vgpu");
  g.set_ecc_uncorrected_volatile(1);
  EXPECT_THAT(Codes(DiagnoseNode(NodeWith(g))),
              ElementsAre("gpu.ecc_errors", "gpu.mig", "gpu.power_capped",
                          "gpu.vgpu", "pcie.link_degraded"));
}

TEST(GpuNodeRulesTest, SamplesMatchGpusByPciAddressNotIndex) {
  // CUDA index 0 is NVML index 1 here: the sample's address decides.
  NodeEvidence e = NodeWith(HealthyH100(0));
  *e.facts.add_gpus() = HealthyH100(1);
  v1::Sample faulty = GpuSample("stress.gpu.faulty.count", 1, HealthyH100(1));
  (*faulty.mutable_params())["gpu"] = "0";
  e.samples.push_back(faulty);
  const v1::Finding f = Only(DiagnoseNode(e));
  EXPECT_EQ(f.subject().gpu_index(), 1);
}

}  // namespace
}  // namespace fleetbench::diagnosis
