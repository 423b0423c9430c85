// NVML through the real dlopen path, against tests/fake_nvml (a scripted
// libnvidia-ml.so.1): no GPU or driver needed. What the plugins make of
// these facts (findings, samplers) is tested in agent/benchmarks/gpu/.
#include "agent/facts/gpu_facts.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <string>

#include "common/gpu_values.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fake_nvml/fake_nvml_script.h"

namespace fleetbench::gpu {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using fake_nvml::kH100Script;
using fake_nvml::kT4WithRefusalsScript;
using fake_nvml::kTwoA100Script;

class NvmlTest : public ::testing::Test {
 protected:
  void TearDown() override { fake_nvml::ClearScript(); }

  // Writes a script for the fake and points it there.
  void UseScript(const std::string& text) { fake_nvml::UseScript(text); }

  static NvmlOptions Fake() { return NvmlOptions{FAKE_NVML_LIBRARY}; }
};

TEST_F(NvmlTest, MissingLibraryIsAPreconditionWithDlerrorText) {
  absl::StatusOr<std::unique_ptr<Nvml>> nvml =
      Nvml::Open(NvmlOptions{"/nonexistent/libnvidia-ml.so.1"});
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(nvml.status().message(),
              HasSubstr("dlopen(/nonexistent/libnvidia-ml.so.1): "
                        "/nonexistent/libnvidia-ml.so.1: cannot open shared "
                        "object file"));
}

TEST_F(NvmlTest, NodeWithoutDriverReportsFactsAbsentWithTheReason) {
  // The system's libnvidia-ml.so.1 where there is one, else the dlopen error:
  // either way FillGpuFacts never fails.
  v1::NodeFacts facts;
  FillGpuFacts(&facts, NvmlOptions{"/nonexistent/libnvidia-ml.so.1"});
  EXPECT_THAT(facts.gpus(), IsEmpty());
  EXPECT_THAT(facts.gpu_unavailable_reason(), HasSubstr("cannot open shared"));
}

TEST_F(NvmlTest, DriverNotLoaded) {
  // No script: the fake answers nvmlInit_v2 like a node without a driver.
  absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Open(Fake());
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(nvml.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(nvml.status().message(),
            "nvmlInit_v2: Driver Not Loaded (nvml error 9)");
}

TEST_F(NvmlTest, ReadsEveryFact) {
  UseScript(kH100Script);
  absl::StatusOr<std::vector<v1::GpuFacts>> gpus = ReadGpuFacts(Fake());
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 1u);
  const v1::GpuFacts& f = (*gpus)[0];
  EXPECT_EQ(f.index(), 0u);
  EXPECT_EQ(f.name(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(f.uuid(), "GPU-8c2c3c1e-0000-4000-8000-000000000001");
  EXPECT_EQ(f.pci_bus_id(), "00000000:3B:00.0");
  EXPECT_EQ(f.driver_version(), "550.54.15");
  EXPECT_EQ(f.cuda_driver_version(), "12.4");
  EXPECT_EQ(f.memory_total_bytes(), 85520809984u);
  EXPECT_EQ(f.pcie_gen_max(), 5u);
  EXPECT_EQ(f.pcie_width_max(), 16u);
  EXPECT_DOUBLE_EQ(f.power_enforced_limit_w(), 320);
  EXPECT_DOUBLE_EQ(f.power_default_limit_w(), 450);
  EXPECT_DOUBLE_EQ(f.power_min_limit_w(), 200);
  EXPECT_DOUBLE_EQ(f.power_max_limit_w(), 700);
  EXPECT_EQ(f.sm_clock_max_mhz(), 1980u);
  EXPECT_EQ(f.memory_clock_max_mhz(), 2619u);
  EXPECT_EQ(f.temperature_slowdown_c(), 87u);
  EXPECT_EQ(f.temperature_shutdown_c(), 92u);
  EXPECT_TRUE(f.ecc_enabled());
  EXPECT_TRUE(f.ecc_pending_enabled());
  EXPECT_EQ(f.ecc_corrected_volatile(), 3u);
  EXPECT_EQ(f.ecc_uncorrected_volatile(), 0u);
  EXPECT_TRUE(f.has_ecc_uncorrected_volatile());
  EXPECT_EQ(f.ecc_corrected_aggregate(), 10u);
  EXPECT_EQ(f.ecc_uncorrected_aggregate(), 2u);
  EXPECT_FALSE(f.mig_enabled());
  EXPECT_TRUE(f.has_mig_enabled());
  EXPECT_EQ(f.virtualization_mode(), "none");
  EXPECT_TRUE(f.persistence_mode());
  const v1::GpuReadings& r = f.readings();
  EXPECT_DOUBLE_EQ(r.power_usage_w(), 71.234);
  EXPECT_EQ(r.sm_clock_mhz(), 1980u);
  EXPECT_EQ(r.memory_clock_mhz(), 2619u);
  EXPECT_EQ(r.temperature_c(), 41u);
  EXPECT_EQ(r.clock_event_reasons(), 5u);
  EXPECT_THAT(r.clock_event_reason_names(),
              ElementsAre("gpu_idle", "sw_power_cap"));
  EXPECT_EQ(r.pcie_gen_current(), 4u);
  EXPECT_EQ(r.pcie_width_current(), 8u);
  EXPECT_EQ(r.memory_used_bytes(), 1048576u);
  EXPECT_THAT(f.unreadable(), IsEmpty());
}

TEST_F(NvmlTest, UnsupportedFactsAreAbsentAndOtherErrorsNoted) {
  UseScript(kT4WithRefusalsScript);
  absl::StatusOr<std::vector<v1::GpuFacts>> gpus = ReadGpuFacts(Fake());
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  const v1::GpuFacts& f = (*gpus)[0];
  EXPECT_EQ(f.name(), "Tesla T4");
  EXPECT_FALSE(f.has_power_enforced_limit_w());   // "not supported"
  EXPECT_FALSE(f.readings().has_power_usage_w());  // no permission
  EXPECT_FALSE(f.has_mig_enabled());
  EXPECT_FALSE(f.ecc_enabled());
  EXPECT_TRUE(f.has_ecc_enabled());
  EXPECT_FALSE(f.has_ecc_uncorrected_volatile());  // not asked with ECC off
  EXPECT_EQ(f.readings().temperature_c(), 50u);
  EXPECT_THAT(f.unreadable(),
              ElementsAre("nvmlDeviceGetPowerUsage: Insufficient Permissions "
                          "(nvml error 4)"));
}

TEST_F(NvmlTest, SeveralDevicesWithPerDeviceValues) {
  UseScript(kTwoA100Script);
  absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Open(Fake());
  ASSERT_TRUE(nvml.ok()) << nvml.status();
  absl::StatusOr<std::vector<v1::GpuFacts>> gpus = (*nvml)->ReadFacts();
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[1].index(), 1u);

  // CUDA spells PCI addresses differently; the lookup does not care.
  absl::StatusOr<unsigned> index = (*nvml)->IndexOfPciBusId("0000:0f:00.0");
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(*index, 1u);
  EXPECT_EQ((*nvml)->IndexOfPciBusId("0000:10:00.0").status().code(),
            absl::StatusCode::kNotFound);

  absl::StatusOr<PcieLinkState> link = (*nvml)->ReadPcieLink(1);
  ASSERT_TRUE(link.ok()) << link.status();
  EXPECT_EQ(link->gen_current, 4);
  EXPECT_EQ(link->width_max, 16);
  absl::StatusOr<uint64_t> reasons = (*nvml)->ReadClockEventReasons(1);
  ASSERT_TRUE(reasons.ok()) << reasons.status();
  EXPECT_EQ(*reasons, kReasonSwThermalSlowdown);
  EXPECT_EQ((*nvml)->ReadDeviceFacts(2).status().code(),
            absl::StatusCode::kInternal);  // NVML_ERROR_INVALID_ARGUMENT
}

TEST_F(NvmlTest, OldDriverFallsBackAndToleratesMissingEntryPoints) {
  UseScript(R"(device_count=1
name=Tesla V100-SXM2-16GB
clock_event_reasons=0x4
persistence_mode=1
)");
  absl::StatusOr<std::vector<v1::GpuFacts>> gpus =
      ReadGpuFacts(NvmlOptions{FAKE_NVML_OLD_LIBRARY});
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  const v1::GpuFacts& f = (*gpus)[0];
  // nvmlDeviceGetCurrentClocksThrottleReasons answered instead.
  EXPECT_EQ(f.readings().clock_event_reasons(), kReasonSwPowerCap);
  EXPECT_FALSE(f.has_persistence_mode());
  EXPECT_THAT(f.unreadable(),
              Contains("nvmlDeviceGetPersistenceMode: not in this "
                       "libnvidia-ml (older driver)"));
}

TEST_F(NvmlTest, ShutsDownWhatItInitialised) {
  UseScript("device_count=0\n");
  // A second handle keeps the fake loaded, and its counter readable, after
  // Nvml's own dlclose.
  void* fake = dlopen(FAKE_NVML_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(fake, nullptr) << dlerror();
  auto active = reinterpret_cast<int (*)()>(dlsym(fake, "fake_nvml_active_inits"));
  ASSERT_NE(active, nullptr);
  {
    absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Open(Fake());
    ASSERT_TRUE(nvml.ok()) << nvml.status();
    EXPECT_EQ(active(), 1);
    absl::StatusOr<std::vector<v1::GpuFacts>> gpus = (*nvml)->ReadFacts();
    ASSERT_TRUE(gpus.ok());
    EXPECT_THAT(*gpus, IsEmpty());
  }
  EXPECT_EQ(active(), 0);
  dlclose(fake);
}

TEST_F(NvmlTest, NoGpusIsAReasonToo) {
  UseScript("device_count=0\n");
  v1::NodeFacts facts;
  FillGpuFacts(&facts, Fake());
  EXPECT_THAT(facts.gpus(), IsEmpty());
  EXPECT_EQ(facts.gpu_unavailable_reason(), "NVML reports no GPUs");
}

TEST_F(NvmlTest, FillGpuFactsFillsNodeFacts) {
  UseScript(kH100Script);
  v1::NodeFacts facts;
  facts.set_gpu_unavailable_reason("stale");
  FillGpuFacts(&facts, Fake());
  ASSERT_EQ(facts.gpus_size(), 1);
  EXPECT_EQ(facts.gpus(0).name(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(facts.gpu_unavailable_reason(), "");
}

TEST_F(NvmlTest, DefaultOptionsHonourTheEnvironment) {
  setenv("FLEETBENCH_NVML_LIBRARY", "/opt/test/libnvidia-ml.so.1", 1);
  EXPECT_EQ(DefaultNvmlOptions().library, "/opt/test/libnvidia-ml.so.1");
  unsetenv("FLEETBENCH_NVML_LIBRARY");
  EXPECT_EQ(DefaultNvmlOptions().library, "libnvidia-ml.so.1");
}

}  // namespace
}  // namespace fleetbench::gpu
