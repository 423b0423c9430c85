#include "agent/facts/facts.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "agent/facts/parsers.h"
#include "common/filesystems.h"

namespace fleetbench::agent {
namespace {

namespace fs = std::filesystem;

// Read access to one tree. Paths given to it are absolute inside the tree
// ("/proc/cpuinfo"), and so are the paths in its error messages, so that a
// captured tree reports the same text wherever it lies.
class Tree {
 public:
  explicit Tree(const std::string& root) : root_(root.empty() ? "/" : root) {}

  fs::path At(absl::string_view path) const {
    return root_ / fs::path(std::string(path)).relative_path();
  }

  absl::StatusOr<std::string> Read(absl::string_view path) const {
    // open/read rather than iostreams: sysfs answers some reads with an errno
    // worth reporting (EINVAL for the speed of a NIC without link).
    int fd = ::open(At(path).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return absl::ErrnoToStatus(errno, path);
    std::string text;
    char buffer[4096];
    while (true) {
      ssize_t n = ::read(fd, buffer, sizeof(buffer));
      if (n < 0) {
        if (errno == EINTR) continue;
        absl::Status status = absl::ErrnoToStatus(errno, path);
        ::close(fd);
        return status;
      }
      if (n == 0) break;
      text.append(buffer, static_cast<size_t>(n));
    }
    ::close(fd);
    return text;
  }

  // The file's content without surrounding whitespace; "" when unreadable.
  std::string ReadTrimmed(absl::string_view path) const {
    absl::StatusOr<std::string> text = Read(path);
    if (!text.ok()) return "";
    return std::string(absl::StripAsciiWhitespace(*text));
  }

  bool Exists(absl::string_view path) const {
    std::error_code ec;
    return fs::exists(fs::symlink_status(At(path), ec));
  }

  // Entry names of a folder, sorted so that facts compare equal run to run.
  absl::StatusOr<std::vector<std::string>> List(absl::string_view path) const {
    std::error_code ec;
    fs::directory_iterator it(At(path), ec);
    if (ec) return absl::ErrnoToStatus(ec.value(), path);
    std::vector<std::string> names;
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec) return absl::ErrnoToStatus(ec.value(), path);
      names.push_back(it->path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  // Last component of a symlink's target ("nvme" for a driver link); "" when
  // `path` is not a symlink.
  std::string LinkBasename(absl::string_view path) const {
    std::error_code ec;
    fs::path target = fs::read_symlink(At(path), ec);
    if (ec) return "";
    return target.lexically_normal().filename().string();
  }

  // `path` with symlinks resolved, as an absolute path inside the tree. When
  // it cannot be resolved or leads out of the tree: `path` normalized.
  std::string Resolve(absl::string_view path) const {
    fs::path lexical = fs::path(std::string(path)).lexically_normal();
    std::error_code ec;
    fs::path real = fs::weakly_canonical(At(lexical.string()), ec);
    if (ec) return lexical.string();
    fs::path root = fs::canonical(root_, ec);
    if (ec) return lexical.string();
    fs::path relative = real.lexically_relative(root);
    if (relative.empty() || *relative.begin() == "..") return lexical.string();
    return (fs::path("/") / relative).lexically_normal().string();
  }

 private:
  fs::path root_;
};

// A disk is virtual by name (loop, dm-, ...), by place (sysfs puts software
// devices under /sys/devices/virtual, paravirtual ones under a virtio or
// xen bus device) or by driver.
bool IsVirtualBlockDevice(const Tree& tree, const std::string& name) {
  if (IsVirtualBlockDeviceName(name)) return true;
  std::string real = tree.Resolve(absl::StrCat("/sys/block/", name));
  if (absl::StartsWith(real, "/sys/devices/virtual/")) return true;
  for (const fs::path& part : fs::path(real)) {
    std::string component = part.string();
    if (absl::StartsWith(component, "virtio") ||
        absl::StartsWith(component, "xen") ||
        absl::StartsWith(component, "vbd-")) {
      return true;
    }
  }
  std::string driver =
      tree.LinkBasename(absl::StrCat("/sys/block/", name, "/device/driver"));
  return absl::StartsWith(driver, "virtio") ||
         absl::StrContains(driver, "xen") || driver == "vbd";
}

// /sys/block/<name> as one BlockDeviceFacts.
void DescribeBlockDevice(const Tree& tree, const std::string& name,
                         uint64_t sectors, v1::BlockDeviceFacts* device) {
  const std::string dir = absl::StrCat("/sys/block/", name);
  device->set_name(name);
  // "size" counts 512-byte sectors whatever the logical block size.
  device->set_size_bytes(sectors * 512);
  device->set_model(tree.ReadTrimmed(dir + "/device/model"));
  device->set_rotational(tree.ReadTrimmed(dir + "/queue/rotational") == "1");
  absl::StatusOr<std::string> scheduler = tree.Read(dir + "/queue/scheduler");
  if (scheduler.ok()) {
    device->set_scheduler(ParseActiveScheduler(*scheduler));
  }
  device->set_virtual_device(IsVirtualBlockDevice(tree, name));
}

uint64_t BlockDeviceSectors(const Tree& tree, const std::string& name) {
  uint64_t sectors = 0;
  if (!absl::SimpleAtoi(tree.ReadTrimmed(absl::StrCat("/sys/block/", name,
                                                      "/size")),
                        &sectors)) {
    return 0;
  }
  return sectors;
}

class FactsReader {
 public:
  FactsReader(const FactsOptions& options, v1::NodeFacts* facts)
      : options_(options), tree_(options.root), facts_(facts) {}

  void ReadAll() {
    ReadIdentity();
    ReadCpuAndVirtualization();
    ReadCpuLimits();
    ReadMemory();
    ReadBlockDevices();
    ReadScratchFilesystem();
    ReadNics();
    ReadPcieDevices();
    ReadRdmaDevices();
  }

 private:
  void NoteUnreadable(absl::string_view what, const absl::Status& why) {
    facts_->add_unreadable(absl::StrCat(what, ": ", why.message()));
  }
  void NoteUnreadable(absl::string_view what, absl::string_view why) {
    facts_->add_unreadable(absl::StrCat(what, ": ", why));
  }

  // One line of text from a file; noted as unreadable when missing or empty.
  std::string ReadLine(absl::string_view what, absl::string_view path) {
    absl::StatusOr<std::string> text = tree_.Read(path);
    if (!text.ok()) {
      NoteUnreadable(what, text.status());
      return "";
    }
    absl::string_view line = absl::StripAsciiWhitespace(*text);
    if (line.empty()) NoteUnreadable(what, absl::StrCat(path, ": empty"));
    return std::string(line);
  }

  void ReadIdentity() {
    facts_->set_hostname(ReadLine("hostname", "/proc/sys/kernel/hostname"));
    facts_->set_kernel(ReadLine("kernel", "/proc/sys/kernel/osrelease"));

    // os-release(5): /etc first, /usr/lib when /etc has none.
    absl::StatusOr<std::string> text = tree_.Read("/etc/os-release");
    absl::string_view path = "/etc/os-release";
    if (!text.ok()) {
      absl::StatusOr<std::string> fallback = tree_.Read("/usr/lib/os-release");
      if (fallback.ok()) {
        text = std::move(fallback);
        path = "/usr/lib/os-release";
      }
    }
    if (!text.ok()) {
      NoteUnreadable("os", text.status());
      return;
    }
    absl::StatusOr<std::string> os = ParseOsRelease(*text);
    if (!os.ok()) {
      NoteUnreadable("os", absl::StrCat(path, ": ", os.status().message()));
      return;
    }
    facts_->set_os(*os);
  }

  // What of the machine's CPUs this process may use: the tightest cgroup
  // bandwidth limit along its cgroup path (a container's --cpus) and its
  // allowed-CPU list. A limit file that is absent is normal (no cgroup
  // there); nothing here is recorded as unreadable.
  void ReadCpuLimits() {
    v1::CpuFacts* cpu = facts_->mutable_cpu();
    if (absl::StatusOr<std::string> status = tree_.Read("/proc/self/status"); status.ok()) {
      if (absl::StatusOr<std::string> list = ParseProcStatusField(*status, "Cpus_allowed_list");
          list.ok()) {
        cpu->set_allowed_cores(CountCpuList(*list));
      }
    }
    absl::StatusOr<std::string> cgroup = tree_.Read("/proc/self/cgroup");
    if (!cgroup.ok()) return;
    const CgroupPaths paths = ParseProcSelfCgroup(*cgroup);
    std::optional<double> tightest;
    std::string source;
    auto consider = [&](std::optional<double> cores, const std::string& file) {
      if (cores && (!tightest || *cores < *tightest)) {
        tightest = cores;
        source = file;
      }
    };
    // Each folder from the process's cgroup up to the hierarchy's root. In a
    // cgroup namespace the path is relative to a root the mount already is,
    // so a path not found under the mount means the mount's root itself.
    auto walk = [&](const std::string& mount, const std::string& path,
                    const std::function<void(const std::string& dir)>& read) {
      std::string dir = absl::StrCat(mount, path == "/" ? "" : path);
      if (!tree_.List(dir).ok()) dir = mount;
      while (true) {
        read(dir);
        if (dir.size() <= mount.size()) break;
        dir = dir.substr(0, dir.rfind('/'));
      }
    };
    if (!paths.v2.empty()) {
      for (const char* mount : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
        walk(mount, paths.v2, [&](const std::string& dir) {
          if (absl::StatusOr<std::string> max = tree_.Read(dir + "/cpu.max"); max.ok()) {
            consider(ParseCpuMax(*max), dir + "/cpu.max");
          }
        });
      }
    }
    if (!paths.v1_cpu.empty()) {
      for (const std::string& mount :
           {absl::StrCat("/sys/fs/cgroup/", paths.v1_cpu_controllers),
            std::string("/sys/fs/cgroup/cpu")}) {
        walk(mount, paths.v1_cpu, [&](const std::string& dir) {
          absl::StatusOr<std::string> quota = tree_.Read(dir + "/cpu.cfs_quota_us");
          absl::StatusOr<std::string> period = tree_.Read(dir + "/cpu.cfs_period_us");
          if (quota.ok() && period.ok()) {
            consider(ParseCfsQuota(*quota, *period), dir + "/cpu.cfs_quota_us");
          }
        });
      }
    }
    if (tightest) {
      cpu->set_cgroup_limit_cores(*tightest);
      cpu->set_cgroup_limit_source(source);
    }
  }

  void ReadCpuAndVirtualization() {
    v1::CpuFacts* cpu = facts_->mutable_cpu();
    v1::VirtualizationFacts* virt = facts_->mutable_virtualization();

    CpuInfo info;
    absl::StatusOr<std::string> cpuinfo = tree_.Read("/proc/cpuinfo");
    if (!cpuinfo.ok()) {
      NoteUnreadable("cpu", cpuinfo.status());
    } else {
      info = ParseCpuInfo(*cpuinfo);
      if (info.logical_cores == 0) {
        NoteUnreadable("cpu", "/proc/cpuinfo: no processor entries");
      }
    }
    cpu->set_model(info.model);
    cpu->set_sockets(info.sockets);
    cpu->set_physical_cores(info.physical_cores);
    cpu->set_logical_cores(info.logical_cores);
    for (const std::string& flag : info.flags_of_interest) {
      cpu->add_flags_of_interest(flag);
    }
    virt->set_hypervisor(info.hypervisor);

    constexpr absl::string_view kNodes = "/sys/devices/system/node";
    absl::StatusOr<std::vector<std::string>> nodes = tree_.List(kNodes);
    if (!nodes.ok()) {
      NoteUnreadable("numa_nodes", nodes.status());
    } else {
      uint32_t count = 0;
      for (const std::string& name : *nodes) {
        if (name.size() > 4 && absl::StartsWith(name, "node") &&
            std::all_of(name.begin() + 4, name.end(), absl::ascii_isdigit)) {
          ++count;
        }
      }
      cpu->set_numa_nodes(count);
    }

    uint64_t max_khz = 0;
    if (absl::SimpleAtoi(
            tree_.ReadTrimmed(
                "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"),
            &max_khz) &&
        max_khz > 0) {
      cpu->set_max_mhz(static_cast<double>(max_khz) / 1000.0);
    } else if (info.max_cpu_mhz > 0) {
      // "cpu MHz" is the current clock and wanders; whole MHz keeps facts
      // from changing (and storing a new version) on every hello.
      cpu->set_max_mhz(std::round(info.max_cpu_mhz));
    } else {
      NoteUnreadable("cpu max_mhz",
                     "no cpufreq cpuinfo_max_freq and no cpu MHz in cpuinfo");
    }

    absl::StatusOr<std::string> vendor =
        tree_.Read("/sys/class/dmi/id/sys_vendor");
    if (vendor.ok()) {
      virt->set_dmi_vendor(std::string(absl::StripAsciiWhitespace(*vendor)));
    } else {
      NoteUnreadable("dmi sys_vendor", vendor.status());
    }
    absl::StatusOr<std::string> product =
        tree_.Read("/sys/class/dmi/id/product_name");
    if (product.ok()) {
      virt->set_dmi_product(std::string(absl::StripAsciiWhitespace(*product)));
    } else {
      NoteUnreadable("dmi product_name", product.status());
    }

    ContainerEvidence evidence;
    for (auto [path, text] :
         {std::pair{"/proc/1/cgroup", &evidence.pid1_cgroup},
          std::pair{"/proc/self/cgroup", &evidence.self_cgroup}}) {
      absl::StatusOr<std::string> cgroup = tree_.Read(path);
      if (cgroup.ok()) {
        *text = *std::move(cgroup);
      } else {
        NoteUnreadable("container", cgroup.status());
      }
    }
    evidence.dockerenv = tree_.Exists("/.dockerenv");
    evidence.containerenv = tree_.Exists("/run/.containerenv");
    evidence.kubernetes_secrets =
        tree_.Exists("/var/run/secrets/kubernetes.io") ||
        tree_.Exists("/run/secrets/kubernetes.io");
    evidence.systemd_container = tree_.ReadTrimmed("/run/systemd/container");
    virt->set_container(DetectContainer(evidence));
  }

  void ReadMemory() {
    absl::StatusOr<std::string> meminfo = tree_.Read("/proc/meminfo");
    if (!meminfo.ok()) {
      NoteUnreadable("memory", meminfo.status());
      return;
    }
    absl::StatusOr<uint64_t> bytes = ParseMemInfo(*meminfo);
    if (!bytes.ok()) {
      NoteUnreadable("memory",
                     absl::StrCat("/proc/meminfo: ", bytes.status().message()));
      return;
    }
    facts_->set_memory_total_bytes(*bytes);
  }

  void ReadBlockDevices() {
    absl::StatusOr<std::vector<std::string>> names = tree_.List("/sys/block");
    if (!names.ok()) {
      NoteUnreadable("block_devices", names.status());
      return;
    }
    for (const std::string& name : *names) {
      const uint64_t sectors = BlockDeviceSectors(tree_, name);
      // Unattached loop and ram devices exist by the dozen and say nothing.
      bool unattached_kind = absl::StartsWith(name, "loop") ||
                             absl::StartsWith(name, "ram") ||
                             absl::StartsWith(name, "zram");
      if (unattached_kind && sectors == 0) continue;
      DescribeBlockDevice(tree_, name, sectors, facts_->add_block_devices());
    }
  }

  void ReadScratchFilesystem() {
    if (options_.scratch_dir.empty()) return;
    fs::path scratch = fs::path(options_.scratch_dir);
    if (scratch.is_relative()) {
      std::error_code ec;
      fs::path absolute = fs::absolute(scratch, ec);
      if (!ec) scratch = absolute;
    }
    // Resolve symlinks: a scratch folder linked onto another disk lives on
    // that disk's filesystem.
    std::string path = tree_.Resolve(scratch.string());
    absl::StatusOr<std::string> mounts = tree_.Read("/proc/self/mounts");
    if (!mounts.ok()) {
      NoteUnreadable("scratch_filesystem", mounts.status());
      return;
    }
    absl::StatusOr<MountEntry> mount = ParseMountsForPath(*mounts, path);
    if (!mount.ok()) {
      NoteUnreadable(
          "scratch_filesystem",
          absl::StrCat("/proc/self/mounts: ", mount.status().message()));
      return;
    }
    facts_->set_scratch_filesystem(mount->fs_type);
  }

  void ReadNics() {
    absl::StatusOr<std::vector<std::string>> names =
        tree_.List("/sys/class/net");
    if (!names.ok()) {
      NoteUnreadable("nics", names.status());
      return;
    }
    for (const std::string& name : *names) {
      if (name == "lo") continue;
      const std::string dir = absl::StrCat("/sys/class/net/", name);
      // Only folders are interfaces (the folder also holds bonding_masters).
      std::error_code ec;
      if (!fs::is_directory(tree_.At(dir), ec)) continue;
      v1::NicFacts* nic = facts_->add_nics();
      nic->set_name(name);
      absl::StatusOr<std::string> speed = tree_.Read(dir + "/speed");
      nic->set_speed_mbps(speed.ok() ? ParseNicSpeedMbps(*speed) : -1);
      uint32_t mtu = 0;
      if (absl::SimpleAtoi(tree_.ReadTrimmed(dir + "/mtu"), &mtu)) {
        nic->set_mtu(mtu);
      }
      nic->set_driver(tree_.LinkBasename(dir + "/device/driver"));
    }
  }

  // No folder is the usual case (no RDMA driver loaded), not unreadable.
  void ReadRdmaDevices() {
    if (!tree_.Exists("/sys/class/infiniband")) return;
    absl::StatusOr<std::vector<std::string>> names =
        tree_.List("/sys/class/infiniband");
    if (!names.ok()) {
      NoteUnreadable("rdma_devices", names.status());
      return;
    }
    for (const std::string& name : *names) facts_->add_rdma_devices(name);
  }

  void ReadPcieDevices() {
    absl::StatusOr<std::vector<std::string>> addresses =
        tree_.List("/sys/bus/pci/devices");
    if (!addresses.ok()) {
      NoteUnreadable("pcie_devices", addresses.status());
      return;
    }
    for (const std::string& address : *addresses) {
      const std::string dir = absl::StrCat("/sys/bus/pci/devices/", address);
      absl::StatusOr<std::string> current_speed =
          tree_.Read(dir + "/current_link_speed");
      absl::StatusOr<std::string> max_speed =
          tree_.Read(dir + "/max_link_speed");
      absl::StatusOr<std::string> current_width =
          tree_.Read(dir + "/current_link_width");
      absl::StatusOr<std::string> max_width =
          tree_.Read(dir + "/max_link_width");
      // Host bridges and conventional PCI devices have no PCIe link.
      if (!current_speed.ok() || !max_speed.ok() || !current_width.ok() ||
          !max_width.ok()) {
        continue;
      }
      v1::PcieDeviceFacts* device = facts_->add_pcie_devices();
      device->set_address(address);
      device->set_class_code(tree_.ReadTrimmed(dir + "/class"));
      device->set_vendor_id(tree_.ReadTrimmed(dir + "/vendor"));
      device->set_device_id(tree_.ReadTrimmed(dir + "/device"));
      device->set_current_link_speed(
          std::string(absl::StripAsciiWhitespace(*current_speed)));
      device->set_max_link_speed(
          std::string(absl::StripAsciiWhitespace(*max_speed)));
      device->set_current_link_width(ParsePcieLinkWidth(*current_width));
      device->set_max_link_width(ParsePcieLinkWidth(*max_width));
      device->set_degraded(IsPcieLinkDegraded(
          device->current_link_speed(), device->max_link_speed(),
          device->current_link_width(), device->max_link_width()));
    }
  }

  const FactsOptions& options_;
  Tree tree_;
  v1::NodeFacts* facts_;
};

}  // namespace

v1::NodeFacts ReadNodeFacts(const FactsOptions& options) {
  v1::NodeFacts facts;
  FactsReader(options, &facts).ReadAll();
  return facts;
}

StorageFacts ReadStorageFacts(const std::string& root, const std::string& path,
                              unsigned device_major, unsigned device_minor) {
  const Tree tree(root);
  StorageFacts storage;
  absl::StatusOr<std::string> mounts = tree.Read("/proc/self/mounts");
  if (mounts.ok()) {
    absl::StatusOr<MountEntry> mount =
        ParseMountsForPath(*mounts, tree.Resolve(path));
    if (mount.ok()) {
      storage.filesystem = mount->fs_type;
      storage.mount_source = mount->device;
    }
  }
  if (IsNetworkFilesystem(storage.filesystem)) {
    storage.network_reason = absl::StrCat("filesystem ", storage.filesystem);
  }
  if (device_major == 0 && device_minor == 0) return storage;

  // st_dev names the partition (or the whole disk); its sysfs folder sits
  // inside the disk's, and only a partition has a "partition" file.
  const std::string real = tree.Resolve(
      absl::StrCat("/sys/dev/block/", device_major, ":", device_minor));
  if (!absl::StartsWith(real, "/sys/devices/")) return storage;
  fs::path disk = fs::path(real);
  if (tree.Exists(real + "/partition")) disk = disk.parent_path();
  const std::string name = disk.filename().string();
  if (name.empty() || !tree.Exists(absl::StrCat("/sys/block/", name))) {
    return storage;
  }
  DescribeBlockDevice(tree, name, BlockDeviceSectors(tree, name),
                      &storage.device);
  // A partition has no queue/ of its own: the disk's applies.
  int64_t logical_block_bytes = 0;
  if (absl::SimpleAtoi(tree.ReadTrimmed(absl::StrCat(
                           "/sys/block/", name, "/queue/logical_block_size")),
                       &logical_block_bytes) &&
      logical_block_bytes > 0) {
    storage.logical_block_bytes = logical_block_bytes;
  }
  if (storage.network_reason.empty()) {
    storage.network_reason = NetworkBlockDeviceReason(
        name, real, storage.device.model());
  }
  return storage;
}

}  // namespace fleetbench::agent
