#include "agent/benchmarks/gpu/gpu_findings.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/benchmarks/gpu/gpu_math.h"
#include "common/gpu_skus.h"
#include "common/gpu_values.h"

namespace fleetbench::gpu {
namespace {

std::string Watts(double w) { return absl::StrFormat("%.0f W", w); }

void PowerFindings(const v1::GpuFacts& f, std::vector<std::string>* out) {
  if (f.has_power_enforced_limit_w() && f.has_power_default_limit_w() &&
      f.power_default_limit_w() > 0 &&
      f.power_enforced_limit_w() <
          kPowerCapShare * f.power_default_limit_w()) {
    out->push_back(absl::StrCat("power capped: enforced ",
                                Watts(f.power_enforced_limit_w()), " of ",
                                Watts(f.power_default_limit_w()), " default"));
  }
  const GpuSku* sku = FindGpuSku(f.name());
  if (sku != nullptr && f.has_power_default_limit_w() &&
      f.power_default_limit_w() > 0 &&
      f.power_default_limit_w() < kBoardPowerShare * sku->board_power_w) {
    out->push_back(absl::StrCat("board configured below datasheet power: "
                                "default ",
                                Watts(f.power_default_limit_w()), " of ",
                                Watts(sku->board_power_w), " (", sku->label,
                                ")"));
  }
}

void PcieFindings(const v1::GpuFacts& f, std::vector<std::string>* out) {
  const v1::GpuReadings& r = f.readings();
  if (!r.has_pcie_gen_current() || !r.has_pcie_width_current() ||
      !f.has_pcie_gen_max() || !f.has_pcie_width_max()) {
    return;
  }
  const bool slower = r.pcie_gen_current() < f.pcie_gen_max();
  const bool narrower = r.pcie_width_current() < f.pcie_width_max();
  if (!slower && !narrower) return;
  std::string finding = absl::StrCat(
      "PCIe link Gen", r.pcie_gen_current(), " x", r.pcie_width_current(),
      " below max Gen", f.pcie_gen_max(), " x", f.pcie_width_max());
  // Idle GPUs train their link down to save power; only the width is a
  // verdict without load.
  if (!narrower) absl::StrAppend(&finding, " (speed drops at idle; check under load)");
  out->push_back(std::move(finding));
}

void MigFindings(const v1::GpuFacts& f, std::vector<std::string>* out) {
  if (f.has_mig_enabled() && f.mig_enabled()) out->push_back("MIG enabled");
  if (f.has_mig_enabled() && f.has_mig_pending_enabled() &&
      f.mig_pending_enabled() != f.mig_enabled()) {
    out->push_back(absl::StrCat("MIG ",
                                f.mig_pending_enabled() ? "enable" : "disable",
                                " pending a GPU reset"));
  }
}

void EccFindings(const v1::GpuFacts& f, std::vector<std::string>* out) {
  if (f.has_ecc_enabled() && !f.ecc_enabled()) {
    out->push_back(f.has_ecc_pending_enabled() && f.ecc_pending_enabled()
                       ? "ECC disabled (enable pending a GPU reset)"
                       : "ECC disabled");
  }
  // Aggregate counts survive reboots; volatile ones start at driver load.
  // Either being non-zero is worth reporting; the larger is the better
  // estimate of what the board has seen.
  const uint64_t uncorrected =
      std::max(f.ecc_uncorrected_volatile(), f.ecc_uncorrected_aggregate());
  if (uncorrected > 0) {
    out->push_back(absl::StrCat("ECC errors: ", uncorrected, " uncorrected"));
  }
}

void ThermalFindings(const v1::GpuFacts& f, std::vector<std::string>* out) {
  const v1::GpuReadings& r = f.readings();
  if (r.has_temperature_c() && f.has_temperature_slowdown_c() &&
      f.temperature_slowdown_c() > 0 &&
      r.temperature_c() >= f.temperature_slowdown_c()) {
    out->push_back(absl::StrCat("thermal: at/above slowdown threshold (",
                                r.temperature_c(), " C, slowdown at ",
                                f.temperature_slowdown_c(), " C)"));
  }
  if (r.has_clock_event_reasons() &&
      (r.clock_event_reasons() & kThrottlingReasons) != 0) {
    out->push_back(absl::StrCat(
        "clocks held back: ",
        absl::StrJoin(DecodeClockEventReasons(r.clock_event_reasons() &
                                              kThrottlingReasons),
                      ", ")));
  }
}

}  // namespace

std::vector<std::string> DiagnoseGpu(const v1::GpuFacts& facts) {
  std::vector<std::string> findings;
  PowerFindings(facts, &findings);
  PcieFindings(facts, &findings);
  MigFindings(facts, &findings);
  EccFindings(facts, &findings);
  ThermalFindings(facts, &findings);
  if (facts.virtualization_mode() == "vgpu") {
    findings.push_back("running under vGPU");
  }
  return findings;
}

}  // namespace fleetbench::gpu
