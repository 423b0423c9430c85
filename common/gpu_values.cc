#include "common/gpu_values.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fleetbench::gpu {

std::vector<std::string> DecodeClockEventReasons(uint64_t reasons) {
  static constexpr struct {
    uint64_t bit;
    const char* name;
  } kNames[] = {
      {kReasonGpuIdle, "gpu_idle"},
      {kReasonApplicationsClocksSetting, "applications_clocks_setting"},
      {kReasonSwPowerCap, "sw_power_cap"},
      {kReasonHwSlowdown, "hw_slowdown"},
      {kReasonSyncBoost, "sync_boost"},
      {kReasonSwThermalSlowdown, "sw_thermal_slowdown"},
      {kReasonHwThermalSlowdown, "hw_thermal_slowdown"},
      {kReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {kReasonDisplayClockSetting, "display_clock_setting"},
  };
  std::vector<std::string> names;
  for (int bit = 0; bit < 64; ++bit) {
    const uint64_t mask = uint64_t{1} << bit;
    if ((reasons & mask) == 0) continue;
    const auto* known = std::find_if(std::begin(kNames), std::end(kNames),
                                     [mask](const auto& n) { return n.bit == mask; });
    names.push_back(known != std::end(kNames) ? std::string(known->name)
                                              : absl::StrCat("bit_", bit));
  }
  return names;
}

std::optional<PciAddress> ParsePciAddress(absl::string_view text) {
  // [domain:]bus:device.function, all hexadecimal.
  std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  if (parts.size() == 2) parts.insert(parts.begin(), "0");
  if (parts.size() != 3) return std::nullopt;
  std::vector<absl::string_view> dev_fn = absl::StrSplit(parts[2], '.');
  if (dev_fn.size() != 2) return std::nullopt;
  PciAddress address;
  const absl::string_view fields[] = {parts[0], parts[1], dev_fn[0], dev_fn[1]};
  uint32_t* outs[] = {&address.domain, &address.bus, &address.device,
                      &address.function};
  for (int i = 0; i < 4; ++i) {
    if (fields[i].empty() || fields[i].size() > 8 ||
        !absl::SimpleHexAtoi(fields[i], outs[i])) {
      return std::nullopt;
    }
  }
  if (address.bus > 0xff || address.device > 0x1f || address.function > 7) {
    return std::nullopt;
  }
  return address;
}

bool SamePciAddress(absl::string_view a, absl::string_view b) {
  const std::optional<PciAddress> pa = ParsePciAddress(a);
  const std::optional<PciAddress> pb = ParsePciAddress(b);
  return pa.has_value() && pb.has_value() && *pa == *pb;
}

double PcieTheoreticalGBps(int generation, int width) {
  // Per lane, one direction, in GB/s: transfer rate × encoding efficiency / 8.
  double per_lane = 0;
  switch (generation) {
    case 1: per_lane = 2.5 * 8 / 10 / 8; break;        // 0.25
    case 2: per_lane = 5.0 * 8 / 10 / 8; break;        // 0.5
    case 3: per_lane = 8.0 * 128 / 130 / 8; break;     // 0.985
    case 4: per_lane = 16.0 * 128 / 130 / 8; break;    // 1.969
    case 5: per_lane = 32.0 * 128 / 130 / 8; break;    // 3.938
    case 6: per_lane = 64.0 * 242 / 256 / 8; break;    // 7.563
    default: return 0;
  }
  if (width <= 0) return 0;
  return per_lane * width;
}

std::string FormatPcieLink(int generation, int width) {
  return absl::StrCat("Gen", generation, " x", width);
}

std::optional<std::pair<int, int>> ParsePcieLink(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, ' ');
  int generation = 0, width = 0;
  if (parts.size() != 2 || !absl::ConsumePrefix(&parts[0], "Gen") ||
      !absl::ConsumePrefix(&parts[1], "x") ||
      !absl::SimpleAtoi(parts[0], &generation) ||
      !absl::SimpleAtoi(parts[1], &width) || generation <= 0 || width <= 0) {
    return std::nullopt;
  }
  return std::make_pair(generation, width);
}

std::string FormatCudaVersion(int version) {
  if (version <= 0) return "";
  return absl::StrCat(version / 1000, ".", (version % 1000) / 10);
}

}  // namespace fleetbench::gpu
