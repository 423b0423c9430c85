#include "agent/facts/parsers.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Two sockets, two cores each, two threads per core, in the order Linux
// numbers them (first threads of every core, then the siblings).
std::string TwoSocketCpuInfo() {
  std::string text;
  const int layout[8][2] = {{0, 0}, {0, 4}, {1, 0}, {1, 4},
                            {0, 0}, {0, 4}, {1, 0}, {1, 4}};
  for (int i = 0; i < 8; ++i) {
    text += "processor\t: " + std::to_string(i) + "\n";
    text += "model name\t: Intel(R) Xeon(R) Platinum 8480+\n";
    text +=
        "cpu MHz\t\t: " + std::string(i == 3 ? "3800.000" : "800.000") + "\n";
    text += "physical id\t: " + std::to_string(layout[i][0]) + "\n";
    text += "core id\t\t: " + std::to_string(layout[i][1]) + "\n";
    text += "flags\t\t: fpu sse2 avx2 avx512f amx_tile amx_bf16\n\n";
  }
  return text;
}

TEST(ParseCpuInfoTest, CountsSocketsCoresAndThreads) {
  CpuInfo info = ParseCpuInfo(TwoSocketCpuInfo());
  EXPECT_EQ(info.model, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(info.sockets, 2u);
  EXPECT_EQ(info.physical_cores, 4u);
  EXPECT_EQ(info.logical_cores, 8u);
  EXPECT_DOUBLE_EQ(info.max_cpu_mhz, 3800.0);
  EXPECT_FALSE(info.hypervisor);
  EXPECT_THAT(info.flags_of_interest,
              ElementsAre("avx2", "avx512f", "amx_tile", "amx_bf16"));
}

TEST(ParseCpuInfoTest, HypervisorFlag) {
  CpuInfo info = ParseCpuInfo(
      "processor\t: 0\nmodel name\t: AMD EPYC\nphysical id\t: 0\n"
      "core id\t\t: 0\nflags\t\t: fpu avx2 hypervisor avx512f\n");
  EXPECT_TRUE(info.hypervisor);
  EXPECT_EQ(info.sockets, 1u);
  EXPECT_THAT(info.flags_of_interest, ElementsAre("avx2", "avx512f"));
}

TEST(ParseCpuInfoTest, Arm64HasNoTopologyLines) {
  CpuInfo info = ParseCpuInfo(
      "processor\t: 0\nBogoMIPS\t: 2000.00\n"
      "Features\t: fp asimd evtstrm aes sve sve2 bf16\n"
      "CPU implementer\t: 0x41\n\n"
      "processor\t: 1\nBogoMIPS\t: 2000.00\n"
      "Features\t: fp asimd evtstrm aes sve sve2 bf16\n"
      "CPU implementer\t: 0x41\n");
  EXPECT_EQ(info.logical_cores, 2u);
  EXPECT_EQ(info.sockets, 1u);
  EXPECT_EQ(info.physical_cores, 2u);
  EXPECT_EQ(info.model, "");
  EXPECT_DOUBLE_EQ(info.max_cpu_mhz, 0.0);
  EXPECT_THAT(info.flags_of_interest, ElementsAre("sve", "sve2"));
}

TEST(ParseCpuInfoTest, Empty) {
  CpuInfo info = ParseCpuInfo("");
  EXPECT_EQ(info.logical_cores, 0u);
  EXPECT_EQ(info.sockets, 0u);
  EXPECT_THAT(info.flags_of_interest, IsEmpty());
}

TEST(ParseMemInfoTest, MemTotalKibToBytes) {
  absl::StatusOr<uint64_t> bytes = ParseMemInfo(
      "MemTotal:       24684084 kB\nMemFree:        24176416 kB\n");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, 24684084ull * 1024);
}

TEST(ParseMemInfoTest, MissingOrGarbled) {
  EXPECT_EQ(ParseMemInfo("MemFree: 1 kB\n").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ParseMemInfo("MemTotal: lots kB\n").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ParseOsReleaseTest, PrettyNameUnquoted) {
  absl::StatusOr<std::string> os = ParseOsRelease(
      "# comment\nNAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\n"
      "ID=ubuntu\n");
  ASSERT_TRUE(os.ok());
  EXPECT_EQ(*os, "Ubuntu 22.04.4 LTS");
  EXPECT_EQ(*ParseOsRelease("PRETTY_NAME='Alpine Linux v3.19'\n"),
            "Alpine Linux v3.19");
  EXPECT_EQ(*ParseOsRelease("PRETTY_NAME=\"Say \\\"hi\\\"\"\n"), "Say \"hi\"");
}

TEST(ParseOsReleaseTest, FallsBackToName) {
  EXPECT_EQ(*ParseOsRelease("NAME=Fedora\n"), "Fedora");
  EXPECT_EQ(ParseOsRelease("ID=x\n").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(DetectContainerTest, BareHost) {
  ContainerEvidence evidence;
  evidence.pid1_cgroup = "0::/init.scope\n";
  evidence.self_cgroup = "0::/user.slice/user-1000.slice/session-3.scope\n";
  EXPECT_EQ(DetectContainer(evidence), "");
}

TEST(DetectContainerTest, HostServiceNamedDockerIsNotAContainer) {
  ContainerEvidence evidence;
  evidence.pid1_cgroup = "0::/init.scope\n";
  evidence.self_cgroup = "0::/system.slice/docker.service\n";
  EXPECT_EQ(DetectContainer(evidence), "");
}

TEST(DetectContainerTest, FromCgroupPaths) {
  ContainerEvidence evidence;
  evidence.pid1_cgroup =
      "11:memory:/kubepods/burstable/pod5b0e/3c9f\n1:name=systemd:/kubepods/"
      "burstable/pod5b0e/3c9f\n";
  EXPECT_EQ(DetectContainer(evidence), "kubernetes");
  evidence.pid1_cgroup =
      "0::/kubepods.slice/kubepods-besteffort.slice/"
      "kubepods-besteffort-pod1.slice/cri-containerd-ab.scope\n";
  EXPECT_EQ(DetectContainer(evidence), "kubernetes");
  evidence.pid1_cgroup = "12:cpu:/docker/4f2a9b\n";
  EXPECT_EQ(DetectContainer(evidence), "docker");
  evidence.pid1_cgroup = "0::/system.slice/docker-4f2a9b.scope\n";
  EXPECT_EQ(DetectContainer(evidence), "docker");
  evidence.pid1_cgroup = "0::/machine.slice/libpod-77aa.scope/container\n";
  EXPECT_EQ(DetectContainer(evidence), "podman");
  evidence.pid1_cgroup = "0::/lxc.payload.web01\n";
  EXPECT_EQ(DetectContainer(evidence), "lxc");
}

TEST(DetectContainerTest, KubernetesWinsOverDockerMarkers) {
  ContainerEvidence evidence;
  evidence.self_cgroup = "4:cpuset:/kubepods/pod9/docker-1.scope\n";
  evidence.dockerenv = true;
  EXPECT_EQ(DetectContainer(evidence), "kubernetes");
}

TEST(DetectContainerTest, MarkerFilesWhenCgroupIsPrivate) {
  ContainerEvidence evidence;
  evidence.pid1_cgroup = "0::/\n";
  evidence.self_cgroup = "0::/\n";
  evidence.dockerenv = true;
  EXPECT_EQ(DetectContainer(evidence), "docker");
  evidence.containerenv = true;
  EXPECT_EQ(DetectContainer(evidence), "podman");
  evidence.kubernetes_secrets = true;
  EXPECT_EQ(DetectContainer(evidence), "kubernetes");

  ContainerEvidence nspawn;
  nspawn.systemd_container = "systemd-nspawn\n";
  EXPECT_EQ(DetectContainer(nspawn), "systemd-nspawn");
}

constexpr char kMounts[] =
    "/dev/vda1 / ext4 rw,relatime 0 0\n"
    "proc /proc proc rw 0 0\n"
    "/dev/nvme0n1 /scratch xfs rw 0 0\n"
    "/dev/nvme1n1 /scratch2 ext4 rw 0 0\n"
    "/dev/sdb1 /mnt/my\\040disk btrfs rw 0 0\n"
    "tmpfs /scratch/tmp tmpfs rw 0 0\n"
    "/dev/nvme2n1 /scratch/tmp xfs rw 0 0\n";

TEST(ParseMountsForPathTest, LongestWholeComponentPrefix) {
  absl::StatusOr<MountEntry> mount =
      ParseMountsForPath(kMounts, "/scratch/fleetbench");
  ASSERT_TRUE(mount.ok()) << mount.status();
  EXPECT_EQ(mount->mount_point, "/scratch");
  EXPECT_EQ(mount->fs_type, "xfs");
  EXPECT_EQ(mount->device, "/dev/nvme0n1");

  EXPECT_EQ(ParseMountsForPath(kMounts, "/scratch")->fs_type, "xfs");
  EXPECT_EQ(ParseMountsForPath(kMounts, "/scratch2/x")->fs_type, "ext4");
  EXPECT_EQ(ParseMountsForPath(kMounts, "/scratchy")->mount_point, "/");
  EXPECT_EQ(ParseMountsForPath(kMounts, "/")->fs_type, "ext4");
}

TEST(ParseMountsForPathTest, LaterMountOverSamePointWins) {
  EXPECT_EQ(ParseMountsForPath(kMounts, "/scratch/tmp/a")->fs_type, "xfs");
}

TEST(ParseMountsForPathTest, EscapedSpaces) {
  absl::StatusOr<MountEntry> mount =
      ParseMountsForPath(kMounts, "/mnt/my disk/scratch");
  ASSERT_TRUE(mount.ok());
  EXPECT_EQ(mount->mount_point, "/mnt/my disk");
  EXPECT_EQ(mount->fs_type, "btrfs");
}

TEST(ParseMountsForPathTest, NoMount) {
  EXPECT_EQ(
      ParseMountsForPath("proc /proc proc rw 0 0\n", "/data").status().code(),
      absl::StatusCode::kNotFound);
}

TEST(ParseActiveSchedulerTest, BracketedOrBare) {
  EXPECT_EQ(ParseActiveScheduler("none [mq-deadline] kyber bfq \n"),
            "mq-deadline");
  EXPECT_EQ(ParseActiveScheduler("[none] mq-deadline\n"), "none");
  EXPECT_EQ(ParseActiveScheduler("none\n"), "none");
  EXPECT_EQ(ParseActiveScheduler("noop deadline\n"), "");
  EXPECT_EQ(ParseActiveScheduler(""), "");
}

TEST(IsVirtualBlockDeviceNameTest, Names) {
  for (const char* name : {"loop3", "ram0", "zram0", "nbd1", "rbd0", "dm-2"}) {
    EXPECT_TRUE(IsVirtualBlockDeviceName(name)) << name;
  }
  for (const char* name : {"sda", "nvme0n1", "vda", "xvda", "mmcblk0"}) {
    EXPECT_FALSE(IsVirtualBlockDeviceName(name)) << name;
  }
}

TEST(NetworkBlockDeviceReasonTest, NamePathOrModel) {
  EXPECT_EQ(NetworkBlockDeviceReason("rbd0", "/sys/devices/virtual/block/rbd0", ""),
            "block device rbd0");
  EXPECT_EQ(NetworkBlockDeviceReason("nbd3", "", ""), "block device nbd3");
  EXPECT_EQ(NetworkBlockDeviceReason(
                "sdb",
                "/sys/devices/platform/host3/session1/target3:0:0/3:0:0:0/block/sdb",
                "VIRTUAL-DISK"),
            "block device sdb is on an iSCSI session");
  EXPECT_EQ(NetworkBlockDeviceReason(
                "nvme2n1", "/sys/devices/virtual/nvme-fabrics/ctl/nvme2/nvme2n1", ""),
            "block device nvme2n1 is NVMe over fabrics");
  EXPECT_EQ(NetworkBlockDeviceReason("sdb", "/sys/devices/pci0000:00/x/block/sdb",
                                     "PersistentDisk"),
            "model PersistentDisk");
  EXPECT_EQ(NetworkBlockDeviceReason(
                "nvme0n1", "/sys/devices/pci0000:00/0000:00:1d.0/nvme/nvme0/nvme0n1",
                "Samsung SSD 980 PRO 2TB"),
            "");
}

TEST(ParseNicSpeedMbpsTest, ValidAndUnknown) {
  EXPECT_EQ(ParseNicSpeedMbps("100000\n"), 100000);
  EXPECT_EQ(ParseNicSpeedMbps("25000"), 25000);
  EXPECT_EQ(ParseNicSpeedMbps("-1\n"), -1);
  EXPECT_EQ(ParseNicSpeedMbps("0\n"), -1);
  EXPECT_EQ(ParseNicSpeedMbps("65535\n"), -1);
  EXPECT_EQ(ParseNicSpeedMbps("4294967295\n"), -1);
  EXPECT_EQ(ParseNicSpeedMbps(""), -1);
  EXPECT_EQ(ParseNicSpeedMbps("fast"), -1);
}

TEST(ParsePcieLinkSpeedGtsTest, Formats) {
  EXPECT_DOUBLE_EQ(*ParsePcieLinkSpeedGts("16.0 GT/s PCIe\n"), 16.0);
  EXPECT_DOUBLE_EQ(*ParsePcieLinkSpeedGts("8 GT/s"), 8.0);
  EXPECT_DOUBLE_EQ(*ParsePcieLinkSpeedGts("2.5 GT/s PCIe"), 2.5);
  EXPECT_FALSE(ParsePcieLinkSpeedGts("Unknown").has_value());
  EXPECT_FALSE(ParsePcieLinkSpeedGts("Unknown speed").has_value());
  EXPECT_FALSE(ParsePcieLinkSpeedGts("").has_value());
}

TEST(ParsePcieLinkWidthTest, Formats) {
  EXPECT_EQ(ParsePcieLinkWidth("16\n"), 16u);
  EXPECT_EQ(ParsePcieLinkWidth("x8"), 8u);
  EXPECT_EQ(ParsePcieLinkWidth("garbage"), 0u);
}

TEST(IsPcieLinkDegradedTest, WidthOrSpeedBelowMax) {
  // The "x8 instead of x16" finding.
  EXPECT_TRUE(IsPcieLinkDegraded("32.0 GT/s PCIe", "32.0 GT/s PCIe", 8, 16));
  // Gen3 in a Gen4 slot: numeric compare, not string compare.
  EXPECT_TRUE(IsPcieLinkDegraded("8.0 GT/s PCIe", "16.0 GT/s PCIe", 16, 16));
  EXPECT_TRUE(IsPcieLinkDegraded("2.5 GT/s PCIe", "16.0 GT/s PCIe", 16, 16));
  EXPECT_FALSE(IsPcieLinkDegraded("16.0 GT/s PCIe", "16.0 GT/s PCIe", 16, 16));
  EXPECT_FALSE(IsPcieLinkDegraded("16.0 GT/s PCIe", "8.0 GT/s PCIe", 4, 4));
}

TEST(IsPcieLinkDegradedTest, LinkDownOrUnknownIsNotDegraded) {
  EXPECT_FALSE(IsPcieLinkDegraded("2.5 GT/s PCIe", "8.0 GT/s PCIe", 0, 1));
  EXPECT_FALSE(IsPcieLinkDegraded("Unknown", "16.0 GT/s PCIe", 16, 16));
  EXPECT_TRUE(IsPcieLinkDegraded("Unknown", "16.0 GT/s PCIe", 8, 16));
}

}  // namespace
}  // namespace fleetbench::agent

namespace fleetbench::agent {
namespace {

TEST(CountCpuListTest, RangesAndSingles) {
  EXPECT_EQ(CountCpuList("0-1\n"), 2u);
  EXPECT_EQ(CountCpuList("0-3,8,10-11"), 7u);
  EXPECT_EQ(CountCpuList("5"), 1u);
  EXPECT_EQ(CountCpuList(""), 0u);
  EXPECT_EQ(CountCpuList("3-1"), 0u);
  EXPECT_EQ(CountCpuList("a-b"), 0u);
}

TEST(ParseProcStatusFieldTest, FindsTheKey) {
  constexpr char kStatus[] = "Name:\tfleetbench\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n";
  EXPECT_EQ(*ParseProcStatusField(kStatus, "Cpus_allowed_list"), "0-1");
  EXPECT_EQ(*ParseProcStatusField(kStatus, "Cpus_allowed"), "3");
  EXPECT_FALSE(ParseProcStatusField(kStatus, "Mems_allowed").ok());
}

TEST(ParseProcSelfCgroupTest, V1CpuHierarchyAndV2Path) {
  const CgroupPaths hybrid = ParseProcSelfCgroup(
      "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/docker/abc\n");
  EXPECT_EQ(hybrid.v2, "/docker/abc");
  EXPECT_EQ(hybrid.v1_cpu, "/docker/abc");
  EXPECT_EQ(hybrid.v1_cpu_controllers, "cpu,cpuacct");
  const CgroupPaths v2 = ParseProcSelfCgroup("0::/system.slice/fleetbench-agent.service\n");
  EXPECT_EQ(v2.v2, "/system.slice/fleetbench-agent.service");
  EXPECT_EQ(v2.v1_cpu, "");
  // "cpuacct" alone is not the cpu controller; a path may hold colons.
  const CgroupPaths odd = ParseProcSelfCgroup("2:cpuacct:/a\n1:cpu:/b:c\n");
  EXPECT_EQ(odd.v1_cpu, "/b:c");
  EXPECT_EQ(odd.v1_cpu_controllers, "cpu");
}

TEST(ParseCpuLimitTest, V2AndV1) {
  EXPECT_DOUBLE_EQ(*ParseCpuMax("200000 100000\n"), 2.0);
  EXPECT_DOUBLE_EQ(*ParseCpuMax("50000 100000"), 0.5);
  EXPECT_EQ(ParseCpuMax("max 100000\n"), std::nullopt);
  EXPECT_EQ(ParseCpuMax("garbage"), std::nullopt);
  EXPECT_DOUBLE_EQ(*ParseCfsQuota("150000\n", "100000\n"), 1.5);
  EXPECT_EQ(ParseCfsQuota("-1\n", "100000\n"), std::nullopt);
  EXPECT_EQ(ParseCfsQuota("x", "100000"), std::nullopt);
}

}  // namespace
}  // namespace fleetbench::agent
