// agent/facts/parsers.h — pure parsers behind ReadNodeFacts().
//
// Each function takes the text of one /proc or /sys file (or a few facts
// already gathered) and returns a value; none touches the filesystem, so each
// is tested on strings. Errors: NOT_FOUND when the text lacks the one thing
// asked for; the caller records it as unreadable. Thread-safe.
#ifndef FLEETBENCH_AGENT_FACTS_PARSERS_H_
#define FLEETBENCH_AGENT_FACTS_PARSERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetbench::agent {

// The CPU flags worth reporting for compute benchmarks, in report order.
const std::vector<std::string>& CpuFlagsOfInterest();

struct CpuInfo {
  std::string model;            // first "model name"
  uint32_t sockets = 0;         // distinct "physical id"
  uint32_t physical_cores = 0;  // distinct ("physical id", "core id")
  uint32_t logical_cores = 0;   // "processor" entries
  double max_cpu_mhz = 0;       // highest "cpu MHz"; 0 when absent
  bool hypervisor = false;      // "hypervisor" flag
  std::vector<std::string> flags_of_interest;
};

// /proc/cpuinfo. Without "physical id" (arm64, some VMs) sockets is 1 and
// physical_cores is logical_cores: the file does not say more. Reads x86
// "flags" and arm64 "Features" lines.
CpuInfo ParseCpuInfo(absl::string_view cpuinfo);

// The CPUs a list names ("0-3,8,10-11" -> 7), as in /proc/self/status's
// Cpus_allowed_list; 0 for text that is not such a list.
uint32_t CountCpuList(absl::string_view list);

// The value of one "Key:\tvalue" line of /proc/self/status; NOT_FOUND
// without that key.
absl::StatusOr<std::string> ParseProcStatusField(absl::string_view status,
                                                 absl::string_view key);

// Where /proc/self/cgroup puts this process for the CPU controller: the
// cgroup v2 path (the "0::" line) and the v1 path of the hierarchy that has
// "cpu" among its controllers ("4:cpu,cpuacct:/x"); "" for one not there.
struct CgroupPaths {
  std::string v2;
  std::string v1_cpu;
  std::string v1_cpu_controllers;  // the hierarchy's name: "cpu,cpuacct"
};
CgroupPaths ParseProcSelfCgroup(absl::string_view cgroup);

// A CPU bandwidth limit in cores: cgroup v2 cpu.max ("200000 100000" ->
// 2.0; "max 100000" -> nullopt: no limit) and v1 cpu.cfs_quota_us with
// cpu.cfs_period_us (-1 -> nullopt). nullopt also for text that is not one.
std::optional<double> ParseCpuMax(absl::string_view cpu_max);
std::optional<double> ParseCfsQuota(absl::string_view quota_us, absl::string_view period_us);

// /proc/meminfo: MemTotal in bytes.
absl::StatusOr<uint64_t> ParseMemInfo(absl::string_view meminfo);

// /etc/os-release: PRETTY_NAME, else NAME, unquoted.
absl::StatusOr<std::string> ParseOsRelease(absl::string_view os_release);

// What a process can see of the container it runs in.
struct ContainerEvidence {
  std::string pid1_cgroup;          // /proc/1/cgroup
  std::string self_cgroup;          // /proc/self/cgroup
  bool dockerenv = false;           // /.dockerenv exists
  bool containerenv = false;        // /run/.containerenv exists (podman)
  bool kubernetes_secrets = false;  // /var/run/secrets/kubernetes.io exists
  std::string systemd_container;    // /run/systemd/container
};

// "kubernetes", "podman", "docker", "lxc", what /run/systemd/container says
// (e.g. "systemd-nspawn"), or "" on a bare host. Cgroup paths win over marker
// files because Kubernetes runs on docker/containerd and inherits their
// markers. With cgroup v2 and a private cgroup namespace the cgroup reads
// "0::/" and only the marker files are left.
std::string DetectContainer(const ContainerEvidence& evidence);

struct MountEntry {
  std::string device;
  std::string mount_point;
  std::string fs_type;
};

// /proc/self/mounts: the mount holding `path` (absolute, normalized), i.e.
// the longest mount point that is a whole-component prefix of it; the later
// line wins for the same mount point (it is mounted over the earlier one).
absl::StatusOr<MountEntry> ParseMountsForPath(absl::string_view mounts,
                                              absl::string_view path);

// queue/scheduler, e.g. "none [mq-deadline] kyber" -> "mq-deadline". A file
// with one bare name (no brackets) is that name; otherwise "".
std::string ParseActiveScheduler(absl::string_view scheduler);

// Names of block devices that are never real disks.
bool IsVirtualBlockDeviceName(absl::string_view name);

// Which filesystem types are network or ephemeral: common/filesystems.h
// (the diagnosis rules read them too).

// Why a block device is reached over a network, from its name (rbd, nbd,
// drbd), its sysfs path (an iSCSI session, NVMe over fabrics) or a model
// string cloud providers give their network volumes (EBS, GCP Persistent
// Disk); "" when none of them says so. `sysfs_path` is the resolved
// /sys/devices/... folder of the device or its partition.
std::string NetworkBlockDeviceReason(absl::string_view name,
                                     absl::string_view sysfs_path,
                                     absl::string_view model);

// /sys/class/net/X/speed in Mb/s; -1 for anything that is not a positive
// speed (the kernel prints -1 with no link; old drivers print 65535).
int64_t ParseNicSpeedMbps(absl::string_view speed);

// "16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s" -> GT/s; nullopt for "Unknown".
std::optional<double> ParsePcieLinkSpeedGts(absl::string_view speed);

// current_link_width / max_link_width: "16" (old kernels "x16"); 0 when
// unparsable.
uint32_t ParsePcieLinkWidth(absl::string_view width);

// True when the link trained narrower or slower than it can. A width of 0
// (link down, an empty slot's port) or an unparsable speed is not degraded:
// there is nothing trained to compare.
bool IsPcieLinkDegraded(absl::string_view current_speed,
                        absl::string_view max_speed, uint32_t current_width,
                        uint32_t max_width);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_FACTS_PARSERS_H_
