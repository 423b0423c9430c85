// tests/fake_nvml/fake_nvml_script.h — for tests that load tests/fake_nvml
// through the real dlopen path (agent/facts/gpu_facts.h's Nvml): writing
// the script the fake answers from, and the scripts that more than one test
// file reads (the facts tests check what NVML says, the GPU plugin tests
// what the plugins make of it). The script format is described at the top
// of fake_nvml.cc.
//
// Test-only, header-only. The fake reads $FAKE_NVML_SCRIPT at nvmlInit_v2,
// so a script applies to every Nvml opened after UseScript() until
// ClearScript().
#ifndef FLEETBENCH_TESTS_FAKE_NVML_FAKE_NVML_SCRIPT_H_
#define FLEETBENCH_TESTS_FAKE_NVML_FAKE_NVML_SCRIPT_H_

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace fleetbench::fake_nvml {

// Writes `text` to a file named after the running test and points
// $FAKE_NVML_SCRIPT at it.
inline void UseScript(const std::string& text) {
  const std::string path =
      ::testing::TempDir() + "/fake_nvml_" + std::to_string(getpid()) + "_" +
      ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::ofstream(path) << text;
  setenv("FAKE_NVML_SCRIPT", path.c_str(), 1);
}

// Without a script the fake answers nvmlInit_v2 like a node without a driver.
inline void ClearScript() { unsetenv("FAKE_NVML_SCRIPT"); }

inline constexpr char kH100Script[] = R"(# an H100 SXM with a capped power limit
device_count=1
driver_version=550.54.15
cuda_driver_version=12040
name=NVIDIA H100 80GB HBM3
uuid=GPU-8c2c3c1e-0000-4000-8000-000000000001
pci_bus_id=00000000:3B:00.0
memory_total=85520809984
memory_used=1048576
pcie_gen_current=4
pcie_gen_max=5
pcie_width_current=8
pcie_width_max=16
power_enforced_mw=320000
power_default_mw=450000
power_min_mw=200000
power_max_mw=700000
power_usage_mw=71234
sm_clock=1980
mem_clock=2619
sm_clock_max=1980
mem_clock_max=2619
temperature=41
temp_slowdown=87
temp_shutdown=92
clock_event_reasons=0x5
ecc_current=1
ecc_pending=1
ecc_corrected_volatile=3
ecc_uncorrected_volatile=0
ecc_corrected_aggregate=10
ecc_uncorrected_aggregate=2
mig_current=0
mig_pending=0
virtualization_mode=0
persistence_mode=1
)";

// A T4 where most facts are "not supported", power readings are refused
// (NVML_ERROR_NO_PERMISSION) and ECC is off.
inline constexpr char kT4WithRefusalsScript[] = R"(device_count=1
name=Tesla T4
power_usage_mw.error=4
temperature=50
ecc_current=0
)";

// Two A100s with per-device values: the second has MIG on, runs under vGPU
// and is held back by heat.
inline constexpr char kTwoA100Script[] = R"(device_count=2
name=NVIDIA A100-SXM4-80GB
gpu0.pci_bus_id=00000000:07:00.0
gpu1.pci_bus_id=00000000:0F:00.0
mig_current=0
gpu1.mig_current=1
gpu1.virtualization_mode=2
pcie_gen_current=4
pcie_gen_max=4
pcie_width_current=16
pcie_width_max=16
clock_event_reasons=0
gpu1.clock_event_reasons=0x20
)";

}  // namespace fleetbench::fake_nvml

#endif  // FLEETBENCH_TESTS_FAKE_NVML_FAKE_NVML_SCRIPT_H_
