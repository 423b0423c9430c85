// The GPU rules: what in a GPU's facts (NVML, read at rest) and in the GPU
// benchmarks' samples (read under load) explains a low number. One finding
// per GPU and rule; absent facts say nothing.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/gpu_skus.h"
#include "common/gpu_values.h"
#include "common/units.h"
#include "diagnosis/node_rule_support.h"

namespace fleetbench::diagnosis::node_rules {
namespace {

using gpu::kReasonHwPowerBrakeSlowdown;
using gpu::kReasonHwSlowdown;
using gpu::kReasonHwThermalSlowdown;
using gpu::kReasonSwPowerCap;
using gpu::kReasonSwThermalSlowdown;

// Reasons that mean heat or a hardware-signalled slowdown (not the power
// limit, which is gpu.power_throttle).
constexpr uint64_t kHeatReasons = kReasonSwThermalSlowdown |
                                  kReasonHwThermalSlowdown | kReasonHwSlowdown |
                                  kReasonHwPowerBrakeSlowdown;
// Of those, the ones the hardware signals (critical past a share of a run).
constexpr uint64_t kHardwareReasons =
    kReasonHwThermalSlowdown | kReasonHwSlowdown | kReasonHwPowerBrakeSlowdown;

std::string GpuLabel(const v1::GpuFacts& g) {
  return absl::StrCat("GPU ", g.index());
}

v1::Finding GpuFinding(const NodeEvidence& e, const RuleInfo& rule,
                       const v1::GpuFacts& g) {
  v1::Finding f = NewFinding(e, rule);
  f.mutable_subject()->set_gpu_index(static_cast<int32_t>(g.index()));
  f.mutable_subject()->set_device(g.pci_bus_id());
  return f;
}

// Does a GPU plugin's sample describe GPU `g`? CUDA and NVML may number
// devices differently, so the PCI address decides; the index only when a
// sample has no address.
bool SampleIsOf(const v1::Sample& s, const v1::GpuFacts& g) {
  const std::string address = Param(s, "gpu_pci_bus_id");
  if (!address.empty() && !g.pci_bus_id().empty()) {
    return gpu::SamePciAddress(address, g.pci_bus_id());
  }
  std::optional<int> index = GpuOfSample(s);
  return index.has_value() && *index == static_cast<int>(g.index());
}

std::vector<const v1::Sample*> GpuSamples(const NodeEvidence& e,
                                          absl::string_view metric,
                                          const v1::GpuFacts& g) {
  std::vector<const v1::Sample*> found;
  for (const v1::Sample* s : SamplesOf(e, metric)) {
    if (SampleIsOf(*s, g)) found.push_back(s);
  }
  return found;
}

// The largest share among the stress sample's throttle_<reason> params for
// the reasons in `mask`, and which reason it is.
double MaxReasonShare(const v1::Sample& s, uint64_t mask, std::string* which) {
  double best = 0;
  for (const std::string& name : gpu::DecodeClockEventReasons(mask)) {
    const double share =
        NumberParam(s, absl::StrCat("throttle_", name)).value_or(0);
    if (share > best) {
      best = share;
      *which = name;
    }
  }
  return best;
}

std::string Percent(double share) {
  return absl::StrCat(FormatNumber(100 * share), "%");
}

// ---- gpu.power_capped ----------------------------------------------------
void PowerCapped(const NodeEvidence& e, const RuleInfo& rule,
                 std::vector<v1::Finding>* out) {
  for (const v1::GpuFacts& g : e.facts.gpus()) {
    if (!g.has_power_enforced_limit_w() || !g.has_power_default_limit_w() ||
        !(g.power_default_limit_w() > 0) ||
        g.power_enforced_limit_w() >=
            kPowerCapShare * g.power_default_limit_w()) {
      continue;
    }
    v1::Finding f = GpuFinding(e, rule, g);
    const double share = g.power_enforced_limit_w() / g.power_default_limit_w();
    f.set_summary(absl::StrCat(GpuLabel(g), " power capped at ",
                               WithUnit(g.power_enforced_limit_w(), "W"),
                               " of ", WithUnit(g.power_default_limit_w(), "W"),
                               " default"));
    AddEvidence(&f, "gpu.power_enforced_limit_w", g.power_enforced_limit_w(),
                g.power_default_limit_w(), "W", "NVML default power limit");
    for (const v1::Sample* s :
         GpuSamples(e, "stress.gpu.sustained.tflops", g)) {
      if (std::optional<double> w = NumberParam(*s, "mean_power_W")) {
        f.add_context(absl::StrCat("under sustained load it drew ",
                                   WithUnit(*w, "W"), " on average"));
      }
    }
    f.set_effect(absl::StrCat(
        "compute-bound training runs slower: the board may draw only ",
        Percent(share), " of its default power, and clocks fall with it"));
    f.set_suggestion(
        "ask the provider to restore the default limit (nvidia-smi -pl needs "
        "root on the host), or price the node for what it measures");
    out->push_back(std::move(f));
  }
}

// ---- gpu.board_power_low -------------------------------------------------
void BoardPowerLow(const NodeEvidence& e, const RuleInfo& rule,
                   std::vector<v1::Finding>* out) {
  for (const v1::GpuFacts& g : e.facts.gpus()) {
    const gpu::GpuSku* sku = gpu::FindGpuSku(g.name());
    if (sku == nullptr || !g.has_power_default_limit_w() ||
        !(g.power_default_limit_w() > 0) ||
        g.power_default_limit_w() >= kBoardPowerShare * sku->board_power_w) {
      continue;
    }
    v1::Finding f = GpuFinding(e, rule, g);
    f.set_summary(
        absl::StrCat(GpuLabel(g), " (", sku->label, ") configured for ",
                     WithUnit(g.power_default_limit_w(), "W"), ", datasheet ",
                     WithUnit(sku->board_power_w, "W")));
    AddEvidence(
        &f, "gpu.power_default_limit_w", g.power_default_limit_w(),
        sku->board_power_w, "W",
        absl::StrCat("SKU table: ", sku->label, " (", sku->source, ")"));
    f.set_effect(
        "the board is built or configured (VBIOS, cloud) below its datasheet "
        "power: expect less than the datasheet's throughput on every run");
    f.set_suggestion(
        "compare its measured work per dollar with full-power offers; the "
        "limit cannot be raised past the board's default from inside");
    out->push_back(std::move(f));
  }
}

// ---- pcie.link_degraded --------------------------------------------------
void GpuLinkDegraded(const NodeEvidence& e, const RuleInfo& rule,
                     const v1::GpuFacts& g, std::vector<v1::Finding>* out) {
  if (!g.has_pcie_gen_max() || !g.has_pcie_width_max()) return;
  const int gen_max = static_cast<int>(g.pcie_gen_max());
  const int width_max = static_cast<int>(g.pcie_width_max());
  const std::string max_name = absl::StrCat("Gen", gen_max, " x", width_max);
  // Under load first: the copy benchmarks read the link right after copying.
  const v1::Sample* worst = nullptr;
  std::pair<int, int> worst_link;
  for (const char* metric : {"pcie.h2d.GBps", "pcie.d2h.GBps"}) {
    for (const v1::Sample* s : GpuSamples(e, metric, g)) {
      std::optional<std::pair<int, int>> link =
          gpu::ParsePcieLink(Param(*s, "pcie_link"));
      if (!link) continue;
      if (worst == nullptr ||
          gpu::PcieTheoreticalGBps(link->first, link->second) <
              gpu::PcieTheoreticalGBps(worst_link.first, worst_link.second)) {
        worst = s;
        worst_link = *link;
      }
    }
  }
  v1::Finding f = GpuFinding(e, rule, g);
  const double max_rate = gpu::PcieTheoreticalGBps(gen_max, width_max);
  if (worst != nullptr) {
    // The reading under load decides: a link that was down at rest and full
    // under load was only saving power.
    if (worst_link.first >= gen_max && worst_link.second >= width_max) return;
    f.set_summary(absl::StrCat(GpuLabel(g), " PCIe link Gen", worst_link.first,
                               " x", worst_link.second, " under load, max ",
                               max_name));
    AddEvidence(&f, "pcie.link_width", worst_link.second, width_max, "lanes",
                "NVML max link width, read after the copies");
    AddEvidence(&f, "pcie.link_gen", worst_link.first, gen_max, "gen",
                "NVML max link generation, read after the copies");
    AddEvidence(&f, worst->metric(), worst->value(), max_rate, "GBps",
                absl::StrCat("theoretical ", max_name, " rate, one direction"));
  } else {
    const v1::GpuReadings& r = g.readings();
    if (!r.has_pcie_gen_current() || !r.has_pcie_width_current()) return;
    const int gen = static_cast<int>(r.pcie_gen_current());
    const int width = static_cast<int>(r.pcie_width_current());
    if (gen >= gen_max && width >= width_max) return;
    f.set_summary(absl::StrCat(GpuLabel(g), " PCIe link Gen", gen, " x", width,
                               " at rest, max ", max_name));
    AddEvidence(&f, "pcie.link_width", width, width_max, "lanes",
                "NVML max link width, read at rest");
    AddEvidence(&f, "pcie.link_gen", gen, gen_max, "gen",
                "NVML max link generation, read at rest");
    if (width >= width_max) {
      // Idle GPUs train their link down to save power; only the width is a
      // verdict without load.
      f.set_severity(v1::SEVERITY_INFO);
      f.add_context(
          "idle GPUs lower the link speed to save power: run the "
          "pcie benchmark to read it under load");
    }
  }
  f.set_effect(
      "host-device copies (data loading, offload, checkpoints) and PCIe "
      "peer traffic run at the narrower link's rate");
  f.set_suggestion(
      "ask the provider to reseat the GPU or move it to a full slot; a GPU "
      "wired narrower by design shows the same on all its peers");
  out->push_back(std::move(f));
}

bool IsGpuAddress(const NodeEvidence& e, const std::string& address) {
  for (const v1::GpuFacts& g : e.facts.gpus()) {
    if (gpu::SamePciAddress(g.pci_bus_id(), address)) return true;
  }
  return false;
}

void LinkDegraded(const NodeEvidence& e, const RuleInfo& rule,
                  std::vector<v1::Finding>* out) {
  for (const v1::GpuFacts& g : e.facts.gpus()) GpuLinkDegraded(e, rule, g, out);
  // Other devices (NICs, NVMe, GPUs NVML does not see) from sysfs.
  for (const v1::PcieDeviceFacts& d : e.facts.pcie_devices()) {
    if (!d.degraded() || IsGpuAddress(e, d.address())) continue;
    v1::Finding f = NewFinding(e, rule);
    f.mutable_subject()->set_device(d.address());
    f.set_summary(absl::StrCat("PCIe ", d.address(), " (class ", d.class_code(),
                               ") at ", d.current_link_speed(), " x",
                               d.current_link_width(), ", max ",
                               d.max_link_speed(), " x", d.max_link_width()));
    AddEvidence(&f, "pcie.link_width", d.current_link_width(),
                d.max_link_width(), "lanes", "sysfs max_link_width");
    if (d.current_link_width() >= d.max_link_width()) {
      f.set_severity(v1::SEVERITY_INFO);
      f.add_context(
          "only the speed is lower, which devices do at rest to "
          "save power");
    }
    f.set_effect("the device moves data at the narrower link's rate");
    f.set_suggestion("ask the provider to check the slot and the riser");
    out->push_back(std::move(f));
  }
}

// ---- gpu.mig -------------------------------------------------------------
void Mig(const NodeEvidence& e, const RuleInfo& rule,
         std::vector<v1::Finding>* out) {
  for (const v1::GpuFacts& g : e.facts.gpus()) {
    if (!g.has_mig_enabled()) continue;
    const bool pending_change = g.has_mig_pending_enabled() &&
                                g.mig_pending_enabled() != g.mig_enabled();
    if (!g.mig_enabled() && !pending_change) continue;
    v1::Finding f = GpuFinding(e, rule, g);
    AddEvidence(&f, "gpu.mig_enabled", g.mig_enabled() ? 1 : 0, std::nullopt,
                "flag", "NVML current MIG mode");
    if (g.mig_enabled()) {
      f.set_summary(absl::StrCat(GpuLabel(g), " is MIG-partitioned"));
      if (pending_change) f.add_context("MIG disable pending a GPU reset");
      f.set_effect(
          "a process sees one slice: a fraction of the SMs and memory, so "
          "every number is the slice's, not the GPU's");
      f.set_suggestion(
          "ask for the whole GPU (MIG off needs host root and a GPU reset), "
          "or price the slice as a slice");
    } else {
      f.set_severity(v1::SEVERITY_INFO);
      f.set_summary(
          absl::StrCat(GpuLabel(g), " MIG enable pending a GPU reset"));
      f.set_effect("after the next reset the GPU will be partitioned");
      f.set_suggestion("check with the provider before the node is reset");
    }
    out->push_back(std::move(f));
  }
}

// ---- gpu.vgpu ------------------------------------------------------------
void Vgpu(const NodeEvidence& e, const RuleInfo& rule,
          std::vector<v1::Finding>* out) {
  for (const v1::GpuFacts& g : e.facts.gpus()) {
    if (g.virtualization_mode() != "vgpu") continue;
    v1::Finding f = GpuFinding(e, rule, g);
    f.set_summary(absl::StrCat(GpuLabel(g), " is a vGPU"));
    AddEvidence(&f, "gpu.virtualization_mode.vgpu", 1, std::nullopt, "flag",
                "NVML virtualization mode");
    f.set_effect(
        "the GPU is shared through a vGPU profile (time-sliced or "
        "partitioned): throughput depends on the other tenants");
    f.set_suggestion("ask for a passthrough or bare-metal GPU");
    out->push_back(std::move(f));
  }
}

// ---- gpu.ecc_errors ------------------------------------------------------
void EccErrors(const NodeEvidence& e, const RuleInfo& rule,
               std::vector<v1::Finding>* out) {
  for (const v1::GpuFacts& g : e.facts.gpus()) {
    v1::Finding f = GpuFinding(e, rule, g);
    uint64_t new_under_load = 0;
    for (const v1::Sample* s :
         GpuSamples(e, "stress.gpu.sustained.tflops", g)) {
      new_under_load = std::max<uint64_t>(
          new_under_load,
          static_cast<uint64_t>(
              NumberParam(*s, "ecc_uncorrected_delta").value_or(0)));
    }
    const uint64_t since_load = g.ecc_uncorrected_volatile();
    const uint64_t lifetime = g.ecc_uncorrected_aggregate();
    if (since_load == 0 && lifetime == 0 && new_under_load == 0) continue;
    // Aggregate counts survive reboots; volatile ones start at driver load.
    // Errors now (since the driver loaded, or during the run) are critical.
    if (since_load > 0 || new_under_load > 0)
      f.set_severity(v1::SEVERITY_CRITICAL);
    const uint64_t shown = std::max({since_load, lifetime, new_under_load});
    f.set_summary(absl::StrCat(GpuLabel(g), " has ", shown,
                               " uncorrected ECC error", shown == 1 ? "" : "s",
                               since_load > 0 || new_under_load > 0
                                   ? " (recent)"
                                   : " (board lifetime)"));
    const char* none = "none on a healthy board";
    if (since_load > 0) {
      AddEvidence(&f, "gpu.ecc_uncorrected_volatile",
                  static_cast<double>(since_load), 0, "count", none);
    }
    if (lifetime > 0) {
      AddEvidence(&f, "gpu.ecc_uncorrected_aggregate",
                  static_cast<double>(lifetime), 0, "count", none);
    }
    if (new_under_load > 0) {
      AddEvidence(&f, "stress.ecc_uncorrected_delta",
                  static_cast<double>(new_under_load), 0, "count",
                  "none during a sustained run");
    }
    f.set_effect(
        "uncorrected memory errors crash jobs (Xid 48) or retire memory "
        "pages; recent ones mean the board is failing now");
    f.set_suggestion(
        "do not train here until the provider replaces or resets the GPU");
    out->push_back(std::move(f));
  }
}

// ---- gpu.ecc_disabled ----------------------------------------------------
void EccDisabled(const NodeEvidence& e, const RuleInfo& rule,
                 std::vector<v1::Finding>* out) {
  for (const v1::GpuFacts& g : e.facts.gpus()) {
    if (!g.has_ecc_enabled() || g.ecc_enabled()) continue;
    v1::Finding f = GpuFinding(e, rule, g);
    f.set_summary(absl::StrCat(GpuLabel(g), " ECC disabled"));
    AddEvidence(&f, "gpu.ecc_enabled", 0, std::nullopt, "flag",
                "NVML current ECC mode");
    if (g.has_ecc_pending_enabled() && g.ecc_pending_enabled()) {
      f.add_context("enable pending a GPU reset");
    }
    f.set_effect(
        "memory errors go undetected: a flipped bit corrupts weights or "
        "gradients silently");
    f.set_suggestion("ask for ECC on (nvidia-smi -e 1 and a reset, host root)");
    out->push_back(std::move(f));
  }
}

// ---- gpu.thermal_throttle ------------------------------------------------
void ThermalThrottle(const NodeEvidence& e, const RuleInfo& rule,
                     std::vector<v1::Finding>* out) {
  for (const v1::GpuFacts& g : e.facts.gpus()) {
    v1::Finding f = GpuFinding(e, rule, g);
    std::vector<std::string> why;
    const v1::GpuReadings& r = g.readings();
    if (r.has_temperature_c() && g.has_temperature_slowdown_c() &&
        g.temperature_slowdown_c() > 0 &&
        r.temperature_c() >= g.temperature_slowdown_c()) {
      AddEvidence(&f, "gpu.temperature_c", r.temperature_c(),
                  g.temperature_slowdown_c(), "C",
                  "NVML slowdown temperature (at rest)");
      why.push_back(absl::StrCat(r.temperature_c(), " C at rest"));
    }
    if (r.has_clock_event_reasons() &&
        (r.clock_event_reasons() & kHeatReasons)) {
      for (const std::string& name : gpu::DecodeClockEventReasons(
               r.clock_event_reasons() & kHeatReasons)) {
        AddEvidence(&f, absl::StrCat("gpu.clock_event_reasons.", name), 1,
                    std::nullopt, "flag", "NVML clock event reasons (at rest)");
        why.push_back(name);
      }
    }
    for (const v1::Sample* s :
         GpuSamples(e, "stress.gpu.throttle_fraction.ratio", g)) {
      std::string heat_name, hw_name;
      const double heat = MaxReasonShare(*s, kHeatReasons, &heat_name);
      const double hw = MaxReasonShare(*s, kHardwareReasons, &hw_name);
      if (heat < kThrottleShareWarning) continue;
      AddEvidence(&f, absl::StrCat(s->metric(), "[", heat_name, "]"), heat, 0,
                  "ratio",
                  "a cooled board under sustained load: no heat slowdown");
      why.push_back(
          absl::StrCat(heat_name, " ", Percent(heat), " of the sustained run"));
      if (hw >= kHwSlowdownShareCritical) f.set_severity(v1::SEVERITY_CRITICAL);
    }
    for (const v1::Sample* s : GpuSamples(e, "stress.gpu.max_temp.C", g)) {
      std::optional<double> slowdown = NumberParam(*s, "slowdown_C");
      if (!slowdown || !(*slowdown > 0) || s->value() < *slowdown) continue;
      AddEvidence(&f, s->metric(), s->value(), *slowdown, "C",
                  "NVML slowdown temperature");
      why.push_back(absl::StrCat(FormatNumber(s->value()), " C under load"));
    }
    if (why.empty()) continue;
    for (const v1::Sample* s :
         GpuSamples(e, "stress.gpu.first_throttle.s", g)) {
      if (Param(*s, "throttled") == "yes") {
        f.add_context(absl::StrCat("first power or heat slowdown after ",
                                   FormatNumber(s->value()), " s of load"));
      }
    }
    f.set_summary(absl::StrCat(GpuLabel(g),
                               " slowed by heat: ", absl::StrJoin(why, ", ")));
    f.set_effect(
        "clocks drop after minutes of load, so long runs are slower than "
        "short benchmarks say; hardware slowdown halves clocks or worse");
    f.set_suggestion(
        "ask the provider to check cooling (fans, airflow, inlet "
        "temperature) and the power supply; rerun the stress benchmark after");
    out->push_back(std::move(f));
  }
}

// ---- gpu.power_throttle --------------------------------------------------
void PowerThrottle(const NodeEvidence& e, const RuleInfo& rule,
                   std::vector<v1::Finding>* out) {
  for (const v1::GpuFacts& g : e.facts.gpus()) {
    v1::Finding f = GpuFinding(e, rule, g);
    const v1::GpuReadings& r = g.readings();
    std::string summary;
    if (r.has_clock_event_reasons() &&
        (r.clock_event_reasons() & kReasonSwPowerCap)) {
      AddEvidence(&f, "gpu.clock_event_reasons.sw_power_cap", 1, std::nullopt,
                  "flag", "NVML clock event reasons (at rest)");
      summary = "clocks held back by the power limit (sw_power_cap) at rest";
    }
    for (const v1::Sample* s :
         GpuSamples(e, "stress.gpu.throttle_fraction.ratio", g)) {
      const double share = NumberParam(*s, "throttle_sw_power_cap").value_or(0);
      if (share < kPowerThrottleShareInfo) continue;
      AddEvidence(&f, absl::StrCat(s->metric(), "[sw_power_cap]"), share,
                  std::nullopt, "ratio", "NVML reasons sampled during the run");
      summary = absl::StrCat("at its power limit ", Percent(share),
                             " of the sustained run");
    }
    if (summary.empty()) continue;
    f.set_summary(absl::StrCat(GpuLabel(g), " ", summary));
    if (g.has_power_enforced_limit_w()) {
      f.add_context(absl::StrCat("enforced power limit ",
                                 WithUnit(g.power_enforced_limit_w(), "W")));
    }
    f.set_effect(
        "throughput is set by the power limit: normal for a board at full "
        "load, a loss when the limit is capped (see gpu.power_capped)");
    f.set_suggestion("compare the enforced limit with the board's default");
    out->push_back(std::move(f));
  }
}

// ---- gpu.wrong_results ---------------------------------------------------
void WrongResults(const NodeEvidence& e, const RuleInfo& rule,
                  std::vector<v1::Finding>* out) {
  for (const v1::Sample* s : SamplesOf(e, "stress.gpu.faulty.count")) {
    if (s->value() < 1) continue;
    v1::Finding f = NewFinding(e, rule);
    const v1::GpuFacts* g = nullptr;
    for (const v1::GpuFacts& candidate : e.facts.gpus()) {
      if (SampleIsOf(*s, candidate)) g = &candidate;
    }
    std::optional<int> index =
        g != nullptr ? std::optional<int>(g->index()) : GpuOfSample(*s);
    if (index) f.mutable_subject()->set_gpu_index(*index);
    f.mutable_subject()->set_device(Param(*s, "gpu_pci_bus_id"));
    f.set_summary(absl::StrCat("GPU ", index ? absl::StrCat(*index) : "?",
                               " computed wrong results under sustained load"));
    AddEvidence(&f, s->metric(), s->value(), 0, "count",
                "the same product gives the same checksum every time");
    const std::string mismatches = Param(*s, "checksum_mismatches");
    if (!mismatches.empty()) {
      f.add_context(absl::StrCat(mismatches, " of ",
                                 Param(*s, "checksum_checks"),
                                 " checksums differed"));
    }
    f.set_effect("training on this GPU produces corrupt weights");
    f.set_suggestion("do not use this GPU; report it to the provider");
    out->push_back(std::move(f));
  }
}

// ---- gpu.sustained_drop --------------------------------------------------
void SustainedDrop(const NodeEvidence& e, const RuleInfo& rule,
                   std::vector<v1::Finding>* out) {
  for (const v1::GpuFacts& g : e.facts.gpus()) {
    for (const v1::Sample* s :
         GpuSamples(e, "stress.gpu.sustained.tflops", g)) {
      std::optional<double> burst = NumberParam(*s, "burst_tflops");
      if (!burst || !(*burst > 0) ||
          s->value() >= kSustainedShareOfBurst * *burst) {
        continue;
      }
      v1::Finding f = GpuFinding(e, rule, g);
      f.set_summary(absl::StrCat(
          GpuLabel(g), " sustained ", WithUnit(s->value(), "TFLOP/s"), ", ",
          Percent(s->value() / *burst), " of its first seconds (",
          FormatNumber(*burst), ")"));
      AddEvidence(&f, s->metric(), s->value(), *burst, "tflops",
                  "the same run's burst (its first seconds)");
      f.set_effect(
          "the GPU slows down as it heats or hits its power limit: long "
          "training runs get the sustained rate, not the burst");
      f.set_suggestion(
          "see gpu.thermal_throttle and gpu.power_throttle for the reason; "
          "compare offers on the sustained rate");
      out->push_back(std::move(f));
    }
  }
}

// ---- gpu.below_datasheet -------------------------------------------------
void BelowDatasheet(const NodeEvidence& e, const RuleInfo& rule,
                    std::vector<v1::Finding>* out) {
  for (const v1::GpuFacts& g : e.facts.gpus()) {
    const gpu::GpuSku* sku = gpu::FindGpuSku(g.name());
    if (sku == nullptr) continue;
    // The best size per dtype: small sizes never reach the peak.
    std::map<std::string, double> best;
    for (const v1::Sample& s : e.samples) {
      if (s.benchmark() != "gpu_gemm" || !SampleIsOf(s, g)) continue;
      const std::string dtype = Param(s, "dtype");
      best[dtype] = std::max(best[dtype], s.value());
    }
    v1::Finding f = GpuFinding(e, rule, g);
    std::vector<std::string> low;
    for (const auto& [dtype, value] : best) {
      const double peak = gpu::PeakTflops(*sku, dtype);
      if (!(peak > 0) || value >= kGemmShareOfPeak * peak) continue;
      AddEvidence(&f, absl::StrCat("gemm.gpu.", dtype, ".tflops"), value, peak,
                  "tflops",
                  absl::StrCat("SKU table: ", sku->label, " dense ", dtype,
                               " (", sku->source, ")"));
      low.push_back(absl::StrCat(dtype, " ", Percent(value / peak)));
    }
    if (low.empty()) continue;
    f.set_summary(absl::StrCat(GpuLabel(g), " GEMM far below the ", sku->label,
                               " datasheet: ", absl::StrJoin(low, ", ")));
    f.set_effect(
        "a weak or held-back board: training is slower than the model's "
        "spec sheet promises");
    f.set_suggestion(
        "look for a power cap, heat or a shared GPU among the other "
        "findings; compare with peers of the same SKU (fleet.outlier)");
    out->push_back(std::move(f));
  }
}

}  // namespace

const std::vector<NodeRule>& GpuNodeRules() {
  static const std::vector<NodeRule>* rules = new std::vector<NodeRule>{
      {{"gpu.power_capped", v1::SEVERITY_WARNING, "NVML default power limit",
        "enforced power limit < 99% of the default limit"},
       PowerCapped},
      {{"gpu.board_power_low", v1::SEVERITY_WARNING,
        "SKU table (common/gpu_skus.cc)",
        "default power limit < 95% of the SKU's board power"},
       BoardPowerLow},
      {{"pcie.link_degraded", v1::SEVERITY_WARNING,
        "NVML max link (GPUs), sysfs max link (other devices)",
        "link below max gen or width under load (pcie samples); at rest only "
        "a narrower width warns, a lower speed is info"},
       LinkDegraded},
      {{"gpu.mig", v1::SEVERITY_WARNING, "NVML MIG mode",
        "MIG enabled; info when only a change is pending a reset"},
       Mig},
      {{"gpu.vgpu", v1::SEVERITY_WARNING, "NVML virtualization mode",
        "virtualization mode vgpu"},
       Vgpu},
      {{"gpu.ecc_errors", v1::SEVERITY_WARNING, "NVML ECC counters",
        "uncorrected errors > 0 over the board's lifetime; critical when "
        "since the driver loaded or during the stress run"},
       EccErrors},
      {{"gpu.ecc_disabled", v1::SEVERITY_WARNING, "NVML ECC mode",
        "ECC mode off (where the board reports one)"},
       EccDisabled},
      {{"gpu.thermal_throttle", v1::SEVERITY_WARNING,
        "NVML slowdown temperature and clock event reasons",
        "temperature >= slowdown, a heat reason at rest, or a heat reason in "
        ">= 10% of the stress run; critical when a hardware slowdown is in "
        ">= 25%"},
       ThermalThrottle},
      {{"gpu.power_throttle", v1::SEVERITY_INFO, "NVML clock event reasons",
        "sw_power_cap at rest, or in >= 50% of the stress run"},
       PowerThrottle},
      {{"gpu.wrong_results", v1::SEVERITY_CRITICAL, "stress checksums",
        "any checksum of the repeated product differs (faulty.count >= 1)"},
       WrongResults},
      {{"gpu.sustained_drop", v1::SEVERITY_WARNING,
        "the same stress run's burst",
        "sustained TFLOP/s < 90% of the first seconds'"},
       SustainedDrop},
      {{"gpu.below_datasheet", v1::SEVERITY_WARNING,
        "SKU table (common/gpu_skus.cc)",
        "best GEMM of a dtype < 50% of the SKU's dense peak"},
       BelowDatasheet},
  };
  return *rules;
}

}  // namespace fleetbench::diagnosis::node_rules
