#include "agent/facts/parsers.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fleetbench::agent {
namespace {

// Splits "key<sep>value" and trims both sides; false when `sep` is absent.
bool SplitKeyValue(absl::string_view line, char sep, absl::string_view* key,
                   absl::string_view* value) {
  size_t pos = line.find(sep);
  if (pos == absl::string_view::npos) return false;
  *key = absl::StripAsciiWhitespace(line.substr(0, pos));
  *value = absl::StripAsciiWhitespace(line.substr(pos + 1));
  return true;
}

// Undoes the octal escapes /proc/self/mounts uses for space, tab, newline
// and backslash ("\040").
std::string UnescapeMountField(absl::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      absl::string_view digits = field.substr(i + 1, 3);
      bool octal = digits.size() == 3 &&
                   std::all_of(digits.begin(), digits.end(),
                               [](char c) { return c >= '0' && c <= '7'; });
      if (octal) {
        out.push_back(static_cast<char>((digits[0] - '0') * 64 +
                                        (digits[1] - '0') * 8 +
                                        (digits[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(field[i]);
  }
  return out;
}

// True when `prefix` is `path` or a parent folder of it.
bool IsPathPrefix(absl::string_view prefix, absl::string_view path) {
  if (prefix == "/") return absl::StartsWith(path, "/");
  if (!absl::StartsWith(path, prefix)) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '/';
}

std::string Unquote(absl::string_view value) {
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front()) {
    std::string out;
    absl::string_view inner = value.substr(1, value.size() - 2);
    for (size_t i = 0; i < inner.size(); ++i) {
      // os-release allows shell-style backslash escapes in double quotes.
      if (value.front() == '"' && inner[i] == '\\' && i + 1 < inner.size()) {
        ++i;
      }
      out.push_back(inner[i]);
    }
    return out;
  }
  return std::string(value);
}

}  // namespace

const std::vector<std::string>& CpuFlagsOfInterest() {
  static const auto* const kFlags = new std::vector<std::string>{
      "avx2",     "avx512f",  "avx512_bf16", "avx512_fp16", "amx_tile",
      "amx_bf16", "amx_int8", "sve",         "sve2"};
  return *kFlags;
}

CpuInfo ParseCpuInfo(absl::string_view cpuinfo) {
  CpuInfo info;
  std::set<std::string> sockets;
  std::set<std::pair<std::string, std::string>> cores;
  std::string physical_id;  // of the processor being read
  bool flags_seen = false;
  for (absl::string_view line : absl::StrSplit(cpuinfo, '\n')) {
    absl::string_view key, value;
    if (!SplitKeyValue(line, ':', &key, &value)) continue;
    if (key == "processor") {
      ++info.logical_cores;
      physical_id.clear();
    } else if (key == "model name") {
      if (info.model.empty()) info.model = std::string(value);
    } else if (key == "physical id") {
      physical_id = std::string(value);
      sockets.insert(physical_id);
    } else if (key == "core id") {
      cores.emplace(physical_id, std::string(value));
    } else if (key == "cpu MHz") {
      double mhz = 0;
      if (absl::SimpleAtod(value, &mhz)) {
        info.max_cpu_mhz = std::max(info.max_cpu_mhz, mhz);
      }
    } else if ((key == "flags" || key == "Features") && !flags_seen) {
      // Every processor lists the same flags; the first list is enough.
      flags_seen = true;
      std::set<absl::string_view> flags =
          absl::StrSplit(value, ' ', absl::SkipEmpty());
      info.hypervisor = flags.count("hypervisor") > 0;
      for (const std::string& flag : CpuFlagsOfInterest()) {
        if (flags.count(flag) > 0) info.flags_of_interest.push_back(flag);
      }
    }
  }
  if (sockets.empty()) {
    info.sockets = info.logical_cores > 0 ? 1 : 0;
    info.physical_cores = info.logical_cores;
  } else {
    info.sockets = static_cast<uint32_t>(sockets.size());
    info.physical_cores = cores.empty() ? info.logical_cores
                                        : static_cast<uint32_t>(cores.size());
  }
  return info;
}

absl::StatusOr<uint64_t> ParseMemInfo(absl::string_view meminfo) {
  for (absl::string_view line : absl::StrSplit(meminfo, '\n')) {
    absl::string_view key, value;
    if (!SplitKeyValue(line, ':', &key, &value) || key != "MemTotal") continue;
    std::vector<absl::string_view> parts =
        absl::StrSplit(value, ' ', absl::SkipEmpty());
    uint64_t amount = 0;
    if (parts.empty() || !absl::SimpleAtoi(parts[0], &amount)) {
      return absl::InvalidArgumentError(
          absl::StrCat("MemTotal is not a number: \"", value, "\""));
    }
    // The kernel prints "kB" and means KiB.
    bool kib = parts.size() > 1 && absl::AsciiStrToLower(parts[1]) == "kb";
    return kib ? amount * 1024 : amount;
  }
  return absl::NotFoundError("no MemTotal line");
}

absl::StatusOr<std::string> ParseOsRelease(absl::string_view os_release) {
  std::string pretty_name, name;
  for (absl::string_view line : absl::StrSplit(os_release, '\n')) {
    absl::string_view key, value;
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "#") ||
        !SplitKeyValue(line, '=', &key, &value)) {
      continue;
    }
    if (key == "PRETTY_NAME") pretty_name = Unquote(value);
    if (key == "NAME") name = Unquote(value);
  }
  if (!pretty_name.empty()) return pretty_name;
  if (!name.empty()) return name;
  return absl::NotFoundError("no PRETTY_NAME or NAME");
}

std::string DetectContainer(const ContainerEvidence& evidence) {
  const std::string cgroups =
      absl::StrCat(evidence.pid1_cgroup, "\n", evidence.self_cgroup);
  auto has = [&cgroups](absl::string_view needle) {
    return absl::StrContains(cgroups, needle);
  };
  if (has("kubepods") || evidence.kubernetes_secrets) return "kubernetes";
  if (has("libpod")) return "podman";
  // "/docker/<id>" (cgroupfs driver) or "docker-<id>.scope" (systemd driver);
  // a bare "docker" would also match the host's docker.service.
  if (has("/docker/") || has("/docker-")) return "docker";
  if (has("/lxc/") || has("lxc.payload")) return "lxc";
  if (evidence.containerenv) return "podman";
  if (evidence.dockerenv) return "docker";
  return std::string(absl::StripAsciiWhitespace(evidence.systemd_container));
}

absl::StatusOr<MountEntry> ParseMountsForPath(absl::string_view mounts,
                                              absl::string_view path) {
  std::optional<MountEntry> best;
  for (absl::string_view line : absl::StrSplit(mounts, '\n')) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() < 3) continue;
    MountEntry entry{UnescapeMountField(fields[0]),
                     UnescapeMountField(fields[1]), std::string(fields[2])};
    if (!IsPathPrefix(entry.mount_point, path)) continue;
    if (!best || entry.mount_point.size() >= best->mount_point.size()) {
      best = std::move(entry);
    }
  }
  if (!best) {
    return absl::NotFoundError(absl::StrCat("no mount holds ", path));
  }
  return *std::move(best);
}

std::string ParseActiveScheduler(absl::string_view scheduler) {
  size_t open = scheduler.find('[');
  size_t close = scheduler.find(']', open);
  if (open != absl::string_view::npos && close != absl::string_view::npos) {
    return std::string(scheduler.substr(open + 1, close - open - 1));
  }
  absl::string_view bare = absl::StripAsciiWhitespace(scheduler);
  if (!bare.empty() && !absl::StrContains(bare, ' ')) return std::string(bare);
  return "";
}

bool IsVirtualBlockDeviceName(absl::string_view name) {
  for (absl::string_view prefix :
       {"loop", "ram", "zram", "nbd", "rbd", "dm-"}) {
    if (absl::StartsWith(name, prefix)) return true;
  }
  return false;
}

std::string NetworkBlockDeviceReason(absl::string_view name,
                                     absl::string_view sysfs_path,
                                     absl::string_view model) {
  for (absl::string_view prefix : {"rbd", "nbd", "drbd"}) {
    if (absl::StartsWith(name, prefix)) {
      return absl::StrCat("block device ", name);
    }
  }
  if (absl::StrContains(sysfs_path, "/session")) {
    return absl::StrCat("block device ", name, " is on an iSCSI session");
  }
  if (absl::StrContains(sysfs_path, "nvme-fabrics")) {
    return absl::StrCat("block device ", name, " is NVMe over fabrics");
  }
  for (absl::string_view cloud : {"Elastic Block Store", "PersistentDisk"}) {
    if (absl::StrContains(model, cloud)) {
      return absl::StrCat("model ", model);
    }
  }
  return "";
}

int64_t ParseNicSpeedMbps(absl::string_view speed) {
  int64_t mbps = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(speed), &mbps)) return -1;
  if (mbps <= 0 || mbps == 65535 || mbps >= 0xFFFFFFFFLL) return -1;
  return mbps;
}

std::optional<double> ParsePcieLinkSpeedGts(absl::string_view speed) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(speed, ' ', absl::SkipEmpty());
  double gts = 0;
  if (parts.empty() || !absl::SimpleAtod(parts[0], &gts) || gts <= 0) {
    return std::nullopt;
  }
  return gts;
}

uint32_t ParsePcieLinkWidth(absl::string_view width) {
  width = absl::StripAsciiWhitespace(width);
  if (absl::StartsWith(width, "x")) width.remove_prefix(1);
  uint32_t lanes = 0;
  return absl::SimpleAtoi(width, &lanes) ? lanes : 0;
}

bool IsPcieLinkDegraded(absl::string_view current_speed,
                        absl::string_view max_speed, uint32_t current_width,
                        uint32_t max_width) {
  if (current_width > 0 && current_width < max_width) return true;
  std::optional<double> current = ParsePcieLinkSpeedGts(current_speed);
  std::optional<double> max = ParsePcieLinkSpeedGts(max_speed);
  return current_width > 0 && current && max && *current < *max;
}

uint32_t CountCpuList(absl::string_view list) {
  list = absl::StripAsciiWhitespace(list);
  if (list.empty()) return 0;
  uint32_t count = 0;
  for (absl::string_view part : absl::StrSplit(list, ',')) {
    std::vector<absl::string_view> range = absl::StrSplit(part, '-');
    uint32_t first = 0;
    uint32_t last = 0;
    if (range.size() == 1 && absl::SimpleAtoi(range[0], &first)) {
      ++count;
    } else if (range.size() == 2 && absl::SimpleAtoi(range[0], &first) &&
               absl::SimpleAtoi(range[1], &last) && last >= first) {
      count += last - first + 1;
    } else {
      return 0;
    }
  }
  return count;
}

absl::StatusOr<std::string> ParseProcStatusField(absl::string_view status,
                                                 absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(status, '\n')) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos || line.substr(0, colon) != key) continue;
    return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  return absl::NotFoundError(absl::StrCat("no ", key, " line"));
}

CgroupPaths ParseProcSelfCgroup(absl::string_view cgroup) {
  CgroupPaths paths;
  for (absl::string_view line : absl::StrSplit(cgroup, '\n', absl::SkipEmpty())) {
    // hierarchy-id:controllers:path (the path may itself hold colons).
    std::vector<absl::string_view> fields = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (fields.size() != 3) continue;
    if (fields[0] == "0" && fields[1].empty()) {
      paths.v2 = std::string(fields[2]);
      continue;
    }
    for (absl::string_view controller : absl::StrSplit(fields[1], ',')) {
      if (controller == "cpu") {
        paths.v1_cpu = std::string(fields[2]);
        paths.v1_cpu_controllers = std::string(fields[1]);
      }
    }
  }
  return paths;
}

std::optional<double> ParseCpuMax(absl::string_view cpu_max) {
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::StripAsciiWhitespace(cpu_max), ' ', absl::SkipEmpty());
  if (fields.size() != 2 || fields[0] == "max") return std::nullopt;
  int64_t quota = 0;
  int64_t period = 0;
  if (!absl::SimpleAtoi(fields[0], &quota) || !absl::SimpleAtoi(fields[1], &period) ||
      quota <= 0 || period <= 0) {
    return std::nullopt;
  }
  return static_cast<double>(quota) / static_cast<double>(period);
}

std::optional<double> ParseCfsQuota(absl::string_view quota_us, absl::string_view period_us) {
  int64_t quota = 0;
  int64_t period = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(quota_us), &quota) ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(period_us), &period) || quota <= 0 ||
      period <= 0) {
    return std::nullopt;
  }
  return static_cast<double>(quota) / static_cast<double>(period);
}

}  // namespace fleetbench::agent
