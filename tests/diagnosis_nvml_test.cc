// The node rules over what real fleetbench code reads from tests/fake_nvml
// through the real dlopen path: facts from gpu_facts.h, the link read after
// copying as the pcie benchmark reads it, and the stress benchmark's own
// samples (StressSamples) from a scripted NVML reason series. The fake NVML
// scenarios: power cap, x8 link under load vs idle downshift,
// MIG on, ECC errors, hardware slowdown fraction.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/benchmarks/gpu/gpu_stress.h"
#include "agent/facts/gpu_facts.h"
#include "diagnosis/node_rules.h"
#include "diagnosis/rules_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fake_nvml/fake_nvml_script.h"

namespace fleetbench::diagnosis {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class DiagnosisFromNvmlTest : public ::testing::Test {
 protected:
  void TearDown() override { fake_nvml::ClearScript(); }

  static gpu::NvmlOptions Fake() { return gpu::NvmlOptions{FAKE_NVML_LIBRARY}; }

  // A node whose GPUs are what the fake says; enough cores and an RDMA
  // NIC, so only GPU rules speak.
  static NodeEvidence NodeFromFake() {
    NodeEvidence e;
    e.node = "fake-gpu-node";
    e.facts.mutable_cpu()->set_logical_cores(64);
    e.facts.add_rdma_devices("mlx5_0");
    gpu::FillGpuFacts(&e.facts, Fake());
    EXPECT_EQ(e.facts.gpu_unavailable_reason(), "");
    return e;
  }

  // A GPU sample tagged as AddGpuParams (gpu_plugin.cc) tags them.
  static void TagGpu(const v1::GpuFacts& g, v1::Sample* s) {
    (*s->mutable_params())["gpu"] = absl::StrCat(g.index());
    (*s->mutable_params())["gpu_pci_bus_id"] = g.pci_bus_id();
  }
};

std::vector<std::string> CodesOfGpu(const std::vector<v1::Finding>& findings,
                                    int gpu) {
  std::vector<std::string> codes;
  for (const v1::Finding& f : findings) {
    if (f.subject().has_gpu_index() && f.subject().gpu_index() == gpu) {
      codes.push_back(f.code());
    }
  }
  return codes;
}

const v1::Finding* Find(const std::vector<v1::Finding>& findings,
                        const std::string& code) {
  for (const v1::Finding& f : findings) {
    if (f.code() == code) return &f;
  }
  return nullptr;
}

TEST_F(DiagnosisFromNvmlTest, PowerCapNarrowLinkAndEccErrors) {
  fake_nvml::UseScript(fake_nvml::kH100Script);
  const std::vector<v1::Finding> findings = DiagnoseNode(NodeFromFake());
  EXPECT_THAT(
      Codes(findings),
      ElementsAre("gpu.board_power_low", "gpu.ecc_errors", "gpu.power_capped",
                  "pcie.link_degraded", "gpu.power_throttle"));
  const v1::Finding* cap = Find(findings, "gpu.power_capped");
  ASSERT_NE(cap, nullptr);
  EXPECT_EQ(cap->summary(), "GPU 0 power capped at 320 W of 450 W default");
  const v1::Finding* ecc = Find(findings, "gpu.ecc_errors");
  ASSERT_NE(ecc, nullptr);
  // Two lifetime errors, none since the driver loaded: a warning.
  EXPECT_EQ(ecc->severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(ecc->summary(),
            "GPU 0 has 2 uncorrected ECC errors (board lifetime)");
  EXPECT_EQ(Find(findings, "pcie.link_degraded")->summary(),
            "GPU 0 PCIe link Gen4 x8 at rest, max Gen5 x16");
}

TEST_F(DiagnosisFromNvmlTest, AbsentFactsGiveNoFindings) {
  fake_nvml::UseScript(fake_nvml::kT4WithRefusalsScript);
  EXPECT_THAT(Codes(DiagnoseNode(NodeFromFake())),
              ElementsAre("gpu.ecc_disabled"));
}

TEST_F(DiagnosisFromNvmlTest, MigVgpuAndHeatPerDevice) {
  fake_nvml::UseScript(fake_nvml::kTwoA100Script);
  const std::vector<v1::Finding> findings = DiagnoseNode(NodeFromFake());
  EXPECT_THAT(CodesOfGpu(findings, 0), IsEmpty());
  EXPECT_THAT(CodesOfGpu(findings, 1),
              ElementsAre("gpu.mig", "gpu.thermal_throttle", "gpu.vgpu"));
}

// The pcie benchmark's sample as gpu_copy.cc writes it: the link read right
// after the copies.
v1::Sample CopySample(const gpu::Nvml& nvml, const v1::GpuFacts& g) {
  absl::StatusOr<gpu::PcieLinkState> link = nvml.ReadPcieLink(g.index());
  EXPECT_TRUE(link.ok()) << link.status();
  v1::Sample s;
  s.set_benchmark("pcie");
  s.set_metric("pcie.h2d.GBps");
  s.set_value(24);
  (*s.mutable_params())["pcie_link"] =
      absl::StrCat("Gen", link->gen_current, " x", link->width_current);
  (*s.mutable_params())["pcie_link_max"] =
      absl::StrCat("Gen", link->gen_max, " x", link->width_max);
  return s;
}

TEST_F(DiagnosisFromNvmlTest, LinkDownAtRestButFullUnderLoadIsFine) {
  // At rest (the facts' read) Gen1 x16; when read after copying Gen5 x16.
  fake_nvml::UseScript(
      "device_count=1\nname=NVIDIA H100 80GB HBM3\n"
      "pci_bus_id=00000000:3B:00.0\n"
      "pcie_gen_max=5\npcie_width_max=16\npcie_width_current=16\n"
      "pcie_gen_current_series=1,5\n");
  NodeEvidence e = NodeFromFake();
  ASSERT_EQ(e.facts.gpus_size(), 1);
  EXPECT_THAT(Codes(DiagnoseNode(e)), ElementsAre("pcie.link_degraded"));
  EXPECT_EQ(DiagnoseNode(e)[0].severity(), v1::SEVERITY_INFO);

  absl::StatusOr<std::unique_ptr<gpu::Nvml>> nvml = gpu::Nvml::Open(Fake());
  ASSERT_TRUE(nvml.ok()) << nvml.status();
  ASSERT_TRUE((*nvml)->ReadDeviceFacts(0).ok());  // the rest read, again
  v1::Sample copy = CopySample(**nvml, e.facts.gpus(0));
  EXPECT_EQ(copy.params().at("pcie_link"), "Gen5 x16");
  TagGpu(e.facts.gpus(0), &copy);
  e.samples.push_back(copy);
  EXPECT_THAT(DiagnoseNode(e), IsEmpty());
}

TEST_F(DiagnosisFromNvmlTest, X8UnderLoadIsAWarning) {
  fake_nvml::UseScript(
      "device_count=1\nname=NVIDIA H100 80GB HBM3\n"
      "pci_bus_id=00000000:3B:00.0\n"
      "pcie_gen_max=5\npcie_width_max=16\npcie_gen_current=5\n"
      "pcie_width_current=8\n");
  NodeEvidence e = NodeFromFake();
  absl::StatusOr<std::unique_ptr<gpu::Nvml>> nvml = gpu::Nvml::Open(Fake());
  ASSERT_TRUE(nvml.ok()) << nvml.status();
  v1::Sample copy = CopySample(**nvml, e.facts.gpus(0));
  TagGpu(e.facts.gpus(0), &copy);
  e.samples.push_back(copy);
  const std::vector<v1::Finding> findings = DiagnoseNode(e);
  ASSERT_THAT(Codes(findings), ElementsAre("pcie.link_degraded"));
  EXPECT_EQ(findings[0].severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(findings[0].summary(),
            "GPU 0 PCIe link Gen5 x8 under load, max Gen5 x16");
}

TEST_F(DiagnosisFromNvmlTest, HardwareSlowdownFractionOfAStressRun) {
  // 10 telemetry reads: 4 with hw_slowdown (0x8), the rest at work (0x0).
  fake_nvml::UseScript(
      "device_count=1\nname=NVIDIA H100 80GB HBM3\n"
      "pci_bus_id=00000000:3B:00.0\ntemperature=60\ntemp_slowdown=87\n"
      "clock_event_reasons_series=0x0,0x0,0x0,0x8,0x8,0x0,0x8,0x8,0x0,0x0\n");
  NodeEvidence e = NodeFromFake();
  absl::StatusOr<std::unique_ptr<gpu::Nvml>> nvml = gpu::Nvml::Open(Fake());
  ASSERT_TRUE(nvml.ok()) << nvml.status();
  // What the TelemetrySampler collects, read by hand (no timing involved).
  gpu::StressOutcome outcome;
  outcome.seconds = 10;
  outcome.flops_per_product = 2.0 * 8192 * 8192 * 8192;
  outcome.has_telemetry = true;
  outcome.facts_before = e.facts.gpus(0);
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<uint64_t> reasons = (*nvml)->ReadClockEventReasons(0);
    ASSERT_TRUE(reasons.ok()) << reasons.status();
    gpu::TelemetrySample t;
    t.seconds = i;
    t.reasons = *reasons;
    outcome.telemetry.push_back(t);
    gpu::StressBatch batch;
    batch.end_seconds = i + 1;
    batch.products = 500;
    outcome.batches.push_back(batch);
  }
  gpu::StressConfig config;
  config.seconds = 10;
  config.burst_seconds = 2;
  gpu::StressSamplesForGpu stress = gpu::StressSamples(config, outcome);
  for (v1::Sample& s : stress.samples) {
    s.set_benchmark("stress");
    TagGpu(e.facts.gpus(0), &s);
    e.samples.push_back(s);
  }
  const std::vector<v1::Finding> findings = DiagnoseNode(e);
  const v1::Finding* heat = Find(findings, "gpu.thermal_throttle");
  ASSERT_NE(heat, nullptr) << ::testing::PrintToString(Codes(findings));
  EXPECT_EQ(heat->severity(), v1::SEVERITY_CRITICAL);  // 40% >= 25%
  EXPECT_EQ(heat->summary(),
            "GPU 0 slowed by heat: hw_slowdown 40% of the sustained run");
  EXPECT_THAT(heat->context(),
              ElementsAre("first power or heat slowdown after 3 s of load"));
}

}  // namespace
}  // namespace fleetbench::diagnosis
