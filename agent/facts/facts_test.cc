#include "agent/facts/facts.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

namespace fs = std::filesystem;

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::string TestTree(const std::string& name) {
  return std::string(FLEETBENCH_SOURCE_DIR) + "/agent/facts/testdata/" + name;
}

// A scratch tree for one test, removed afterwards.
class TempTree {
 public:
  TempTree() {
    const testing::TestInfo* info =
        testing::UnitTest::GetInstance()->current_test_info();
    root_ =
        fs::path(testing::TempDir()) / ("facts_" + std::string(info->name()) +
                                        "_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~TempTree() { fs::remove_all(root_); }

  void Write(const std::string& path, const std::string& text) {
    fs::path file = root_ / fs::path(path).relative_path();
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }
  std::string root() const { return root_.string(); }
  fs::path At(const std::string& path) const {
    return root_ / fs::path(path).relative_path();
  }

 private:
  fs::path root_;
};

std::vector<std::string> BlockNames(const v1::NodeFacts& facts) {
  std::vector<std::string> names;
  for (const auto& d : facts.block_devices()) names.push_back(d.name());
  return names;
}

TEST(ReadNodeFactsTest, GpuServer) {
  FactsOptions options;
  options.root = TestTree("gpu_server");
  options.scratch_dir = "/scratch/fleetbench";
  v1::NodeFacts facts = ReadNodeFacts(options);

  EXPECT_THAT(facts.unreadable(), IsEmpty());
  EXPECT_EQ(facts.hostname(), "gpu-node-07");
  EXPECT_EQ(facts.kernel(), "5.15.0-105-generic");
  EXPECT_EQ(facts.os(), "Ubuntu 22.04.4 LTS");
  EXPECT_EQ(facts.memory_total_bytes(), 2113407036ull * 1024);
  EXPECT_EQ(facts.scratch_filesystem(), "xfs");

  const v1::CpuFacts& cpu = facts.cpu();
  EXPECT_EQ(cpu.model(), "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(cpu.sockets(), 2u);
  EXPECT_EQ(cpu.physical_cores(), 4u);
  EXPECT_EQ(cpu.logical_cores(), 8u);
  EXPECT_EQ(cpu.numa_nodes(), 2u);
  EXPECT_DOUBLE_EQ(cpu.max_mhz(), 3800.0);  // cpufreq, not "cpu MHz"
  EXPECT_THAT(cpu.flags_of_interest(),
              ElementsAre("avx2", "avx512f", "avx512_bf16", "avx512_fp16",
                          "amx_tile", "amx_bf16", "amx_int8"));

  const v1::VirtualizationFacts& virt = facts.virtualization();
  EXPECT_FALSE(virt.hypervisor());
  EXPECT_EQ(virt.dmi_vendor(), "Supermicro");
  EXPECT_EQ(virt.dmi_product(), "SYS-821GE-TNHR");
  EXPECT_EQ(virt.container(), "kubernetes");

  // loop0 is unattached (size 0) and left out.
  ASSERT_THAT(BlockNames(facts), ElementsAre("loop1", "nvme0n1", "sda"));
  const v1::BlockDeviceFacts& loop = facts.block_devices(0);
  EXPECT_TRUE(loop.virtual_device());
  EXPECT_EQ(loop.size_bytes(), 130288ull * 512);
  const v1::BlockDeviceFacts& nvme = facts.block_devices(1);
  EXPECT_EQ(nvme.size_bytes(), 7501476528ull * 512);
  EXPECT_EQ(nvme.model(), "SAMSUNG MZQL23T8HCLS-00A07");
  EXPECT_FALSE(nvme.rotational());
  EXPECT_EQ(nvme.scheduler(), "none");
  EXPECT_FALSE(nvme.virtual_device());
  const v1::BlockDeviceFacts& sda = facts.block_devices(2);
  EXPECT_EQ(sda.model(), "Micron_5400_MTFD");
  EXPECT_EQ(sda.scheduler(), "mq-deadline");
  EXPECT_FALSE(sda.virtual_device());

  // lo is skipped, bonding_masters is a file, not an interface.
  ASSERT_EQ(facts.nics_size(), 2);
  EXPECT_EQ(facts.nics(0).name(), "cni0");
  EXPECT_EQ(facts.nics(0).speed_mbps(), -1);
  EXPECT_EQ(facts.nics(0).mtu(), 1450u);
  EXPECT_EQ(facts.nics(0).driver(), "");
  EXPECT_EQ(facts.nics(1).name(), "ens1f0np0");
  EXPECT_EQ(facts.nics(1).speed_mbps(), 100000);
  EXPECT_EQ(facts.nics(1).mtu(), 9000u);
  EXPECT_EQ(facts.nics(1).driver(), "mlx5_core");

  // The host bridge has no link files and is left out.
  ASSERT_EQ(facts.pcie_devices_size(), 5);
  std::map<std::string, v1::PcieDeviceFacts> pcie;
  for (const auto& d : facts.pcie_devices()) pcie[d.address()] = d;
  const v1::PcieDeviceFacts& gpu = pcie["0000:16:00.0"];
  EXPECT_EQ(gpu.class_code(), "0x030200");
  EXPECT_EQ(gpu.vendor_id(), "0x10de");
  EXPECT_EQ(gpu.device_id(), "0x2330");
  EXPECT_EQ(gpu.current_link_speed(), "32.0 GT/s PCIe");
  EXPECT_EQ(gpu.current_link_width(), 8u);
  EXPECT_EQ(gpu.max_link_width(), 16u);
  EXPECT_TRUE(gpu.degraded());
  EXPECT_TRUE(pcie["0000:15:01.0"].degraded());   // the GPU's root port
  EXPECT_FALSE(pcie["0000:00:1c.0"].degraded());  // empty slot, link down
  EXPECT_FALSE(pcie["0000:5e:00.0"].degraded());  // NVMe x4 of x4
  EXPECT_FALSE(pcie["0000:af:00.0"].degraded());  // NIC x16 of x16
}

TEST(ReadNodeFactsTest, CloudVm) {
  FactsOptions options;
  options.root = TestTree("cloud_vm");
  options.scratch_dir = "/var/lib/fleetbench/scratch";
  v1::NodeFacts facts = ReadNodeFacts(options);

  EXPECT_THAT(facts.unreadable(), IsEmpty());
  EXPECT_EQ(facts.hostname(), "cloud-vm-1");
  EXPECT_EQ(facts.kernel(), "6.1.0-26-cloud-amd64");
  EXPECT_EQ(facts.os(), "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(facts.memory_total_bytes(), 24684084ull * 1024);
  EXPECT_EQ(facts.scratch_filesystem(), "ext4");

  EXPECT_EQ(facts.cpu().model(), "AMD EPYC");
  EXPECT_EQ(facts.cpu().sockets(), 1u);
  EXPECT_EQ(facts.cpu().physical_cores(), 2u);
  EXPECT_EQ(facts.cpu().logical_cores(), 2u);
  EXPECT_EQ(facts.cpu().numa_nodes(), 1u);
  // No cpufreq in the guest: cpuinfo's 2596.142, rounded.
  EXPECT_DOUBLE_EQ(facts.cpu().max_mhz(), 2596.0);
  EXPECT_THAT(facts.cpu().flags_of_interest(),
              ElementsAre("avx2", "avx512f", "avx512_bf16"));

  EXPECT_TRUE(facts.virtualization().hypervisor());
  EXPECT_EQ(facts.virtualization().dmi_vendor(), "QEMU");
  EXPECT_EQ(facts.virtualization().dmi_product(),
            "Standard PC (i440FX + PIIX, 1996)");
  EXPECT_EQ(facts.virtualization().container(), "");

  ASSERT_THAT(BlockNames(facts), ElementsAre("vda"));
  const v1::BlockDeviceFacts& vda = facts.block_devices(0);
  EXPECT_EQ(vda.size_bytes(), 536870912ull * 512);
  EXPECT_TRUE(vda.virtual_device());
  EXPECT_EQ(vda.scheduler(), "mq-deadline");
  EXPECT_EQ(vda.model(), "");
  // virtio-blk claims to rotate unless the host says otherwise.
  EXPECT_TRUE(vda.rotational());

  ASSERT_EQ(facts.nics_size(), 1);
  EXPECT_EQ(facts.nics(0).name(), "eth0");
  EXPECT_EQ(facts.nics(0).speed_mbps(), -1);
  EXPECT_EQ(facts.nics(0).mtu(), 1500u);
  EXPECT_EQ(facts.nics(0).driver(), "virtio_net");

  // virtio PCI functions have no PCIe link files.
  EXPECT_EQ(facts.pcie_devices_size(), 0);
}

TEST(ReadNodeFactsTest, SameTreeSameFacts) {
  FactsOptions options;
  options.root = TestTree("gpu_server");
  options.scratch_dir = "/scratch";
  EXPECT_EQ(ReadNodeFacts(options).SerializeAsString(),
            ReadNodeFacts(options).SerializeAsString());
}

TEST(ReadNodeFactsTest, EmptyTreeRecordsWhatIsMissing) {
  TempTree tree;
  FactsOptions options;
  options.root = tree.root();
  options.scratch_dir = "/scratch";
  v1::NodeFacts facts = ReadNodeFacts(options);

  EXPECT_EQ(facts.hostname(), "");
  EXPECT_EQ(facts.cpu().logical_cores(), 0u);
  EXPECT_EQ(facts.memory_total_bytes(), 0u);
  EXPECT_THAT(facts.unreadable(),
              Contains("hostname: /proc/sys/kernel/hostname: No such file or "
                       "directory"));
  EXPECT_THAT(facts.unreadable(),
              Contains("memory: /proc/meminfo: No such file or directory"));
  EXPECT_THAT(facts.unreadable(),
              Contains("pcie_devices: /sys/bus/pci/devices: No such file or "
                       "directory"));
  EXPECT_THAT(facts.unreadable(),
              Contains("scratch_filesystem: /proc/self/mounts: No such file "
                       "or directory"));
  EXPECT_EQ(facts.unreadable_size(), 15);
}

TEST(ReadNodeFactsTest, ParseProblemsAreRecorded) {
  TempTree tree;
  tree.Write("/proc/sys/kernel/hostname", "\n");
  tree.Write("/proc/meminfo", "MemFree: 1 kB\n");
  tree.Write("/etc/os-release", "ID=x\n");
  tree.Write("/proc/self/mounts", "proc /proc proc rw 0 0\n");
  FactsOptions options;
  options.root = tree.root();
  options.scratch_dir = "/scratch";
  v1::NodeFacts facts = ReadNodeFacts(options);
  EXPECT_THAT(facts.unreadable(),
              Contains("hostname: /proc/sys/kernel/hostname: empty"));
  EXPECT_THAT(facts.unreadable(),
              Contains("memory: /proc/meminfo: no MemTotal line"));
  EXPECT_THAT(facts.unreadable(),
              Contains("os: /etc/os-release: no PRETTY_NAME or NAME"));
  EXPECT_THAT(facts.unreadable(),
              Contains("scratch_filesystem: /proc/self/mounts: no mount "
                       "holds /scratch"));
}

TEST(ReadNodeFactsTest, OsReleaseFallsBackToUsrLib) {
  TempTree tree;
  tree.Write("/usr/lib/os-release", "PRETTY_NAME=\"Fedora Linux 40\"\n");
  FactsOptions options;
  options.root = tree.root();
  EXPECT_EQ(ReadNodeFacts(options).os(), "Fedora Linux 40");
}

TEST(ReadNodeFactsTest, RdmaDevicesSortedAndAbsentIsNormal) {
  TempTree tree;
  fs::create_directories(tree.At("/sys/class/infiniband/mlx5_1"));
  fs::create_directories(tree.At("/sys/class/infiniband/mlx5_0"));
  FactsOptions options;
  options.root = tree.root();
  v1::NodeFacts facts = ReadNodeFacts(options);
  EXPECT_THAT(facts.rdma_devices(), ElementsAre("mlx5_0", "mlx5_1"));
  EXPECT_THAT(facts.unreadable(), Not(Contains(HasSubstr("rdma"))));

  options.root = TestTree("gpu_server");  // no /sys/class/infiniband
  facts = ReadNodeFacts(options);
  EXPECT_THAT(facts.rdma_devices(), IsEmpty());
  EXPECT_THAT(facts.unreadable(), Not(Contains(HasSubstr("rdma"))));
}

TEST(ReadNodeFactsTest, CgroupV2LimitIsTheTightestAlongThePath) {
  TempTree tree;
  tree.Write("/proc/self/cgroup", "0::/kubepods/pod1/ctr\n");
  tree.Write("/proc/self/status", "Name:\tagent\nCpus_allowed_list:\t0-15\n");
  tree.Write("/sys/fs/cgroup/cpu.max", "max 100000\n");  // the root: none
  tree.Write("/sys/fs/cgroup/kubepods/pod1/cpu.max", "400000 100000\n");
  tree.Write("/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "max 100000\n");
  FactsOptions options;
  options.root = tree.root();
  const v1::CpuFacts cpu = ReadNodeFacts(options).cpu();
  EXPECT_DOUBLE_EQ(cpu.cgroup_limit_cores(), 4.0);
  EXPECT_EQ(cpu.cgroup_limit_source(), "/sys/fs/cgroup/kubepods/pod1/cpu.max");
  EXPECT_EQ(cpu.allowed_cores(), 16u);
}

TEST(ReadNodeFactsTest, CgroupV1QuotaAndANamespacedPath) {
  TempTree tree;
  // In a cgroup namespace the path names a folder the mount does not have:
  // the mount's root is the container's cgroup.
  tree.Write("/proc/self/cgroup", "4:cpu,cpuacct:/docker/abc\n0::/\n");
  tree.Write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "250000\n");
  tree.Write("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  FactsOptions options;
  options.root = tree.root();
  const v1::CpuFacts cpu = ReadNodeFacts(options).cpu();
  EXPECT_DOUBLE_EQ(cpu.cgroup_limit_cores(), 2.5);
  EXPECT_EQ(cpu.cgroup_limit_source(), "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us");
}

TEST(ReadNodeFactsTest, NoCgroupLimitIsZero) {
  TempTree tree;
  tree.Write("/proc/self/cgroup", "1:cpu:/\n0::/\n");
  tree.Write("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
  tree.Write("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  FactsOptions options;
  options.root = tree.root();
  const v1::NodeFacts facts = ReadNodeFacts(options);
  EXPECT_EQ(facts.cpu().cgroup_limit_cores(), 0);
  EXPECT_EQ(facts.cpu().cgroup_limit_source(), "");
  EXPECT_THAT(facts.unreadable(), Not(Contains(HasSubstr("cpu.max"))));
  EXPECT_THAT(facts.unreadable(), Not(Contains(HasSubstr("cfs_quota"))));
}

TEST(ReadNodeFactsTest, ScratchDirFollowsSymlinks) {
  TempTree tree;
  tree.Write("/proc/self/mounts",
             "/dev/sda1 / ext4 rw 0 0\n/dev/nvme0n1 /data xfs rw 0 0\n");
  tree.Write("/data/scratch/.keep", "");
  fs::create_directories(tree.At("/srv"));
  fs::create_directory_symlink("../data/scratch", tree.At("/srv/scratch"));
  FactsOptions options;
  options.root = tree.root();
  options.scratch_dir = "/srv/scratch";
  EXPECT_EQ(ReadNodeFacts(options).scratch_filesystem(), "xfs");
  // A folder not created yet still lands on the right mount.
  options.scratch_dir = "/data/scratch/later/../run1";
  EXPECT_EQ(ReadNodeFacts(options).scratch_filesystem(), "xfs");
}

// A VM's disk as sysfs shows it: /sys/dev/block/MAJ:MIN links to the
// partition's folder inside the disk's, /sys/block/<disk> to the disk's.
void WriteVirtioDisk(TempTree& tree) {
  const std::string disk =
      "/sys/devices/pci0000:00/0000:00:04.0/virtio2/block/vda";
  tree.Write(disk + "/size", "41943040\n");
  tree.Write(disk + "/queue/rotational", "0\n");
  tree.Write(disk + "/queue/scheduler", "[none] mq-deadline\n");
  tree.Write(disk + "/queue/logical_block_size", "512\n");
  tree.Write(disk + "/vda1/partition", "1\n");
  fs::create_directories(tree.At("/sys/block"));
  fs::create_directory_symlink("../devices/pci0000:00/0000:00:04.0/virtio2/block/vda",
                               tree.At("/sys/block/vda"));
  fs::create_directories(tree.At("/sys/dev/block"));
  fs::create_directory_symlink(
      "../../devices/pci0000:00/0000:00:04.0/virtio2/block/vda/vda1",
      tree.At("/sys/dev/block/253:1"));
  fs::create_directory_symlink(
      "../../devices/pci0000:00/0000:00:04.0/virtio2/block/vda",
      tree.At("/sys/dev/block/253:0"));
}

TEST(ReadStorageFactsTest, PartitionLeadsToItsDisk) {
  TempTree tree;
  tree.Write("/proc/self/mounts", "/dev/vda1 / ext4 rw 0 0\n");
  WriteVirtioDisk(tree);
  StorageFacts storage = ReadStorageFacts(tree.root(), "/var/tmp", 253, 1);
  EXPECT_EQ(storage.filesystem, "ext4");
  EXPECT_EQ(storage.mount_source, "/dev/vda1");
  EXPECT_EQ(storage.device.name(), "vda");
  EXPECT_EQ(storage.device.size_bytes(), 41943040ull * 512);
  EXPECT_FALSE(storage.device.rotational());
  EXPECT_EQ(storage.device.scheduler(), "none");
  EXPECT_TRUE(storage.device.virtual_device());  // under a virtio device
  EXPECT_EQ(storage.logical_block_bytes, 512);  // the disk's, not vda1's
  EXPECT_EQ(storage.network_reason, "");
  // The whole disk as st_dev: the same disk.
  EXPECT_EQ(ReadStorageFacts(tree.root(), "/", 253, 0).device.name(), "vda");
}

TEST(ReadStorageFactsTest, NetworkFilesystemHasNoDevice) {
  TempTree tree;
  tree.Write("/proc/self/mounts",
             "/dev/vda1 / ext4 rw 0 0\nfiler:/export /data nfs4 rw 0 0\n");
  WriteVirtioDisk(tree);
  // NFS files have an anonymous st_dev (major 0) with no sysfs folder.
  StorageFacts storage = ReadStorageFacts(tree.root(), "/data/scratch", 0, 53);
  EXPECT_EQ(storage.filesystem, "nfs4");
  EXPECT_EQ(storage.mount_source, "filer:/export");
  EXPECT_EQ(storage.network_reason, "filesystem nfs4");
  EXPECT_EQ(storage.device.name(), "");
  EXPECT_EQ(storage.logical_block_bytes, 0);
}

TEST(ReadStorageFactsTest, CloudNetworkVolumeByModel) {
  TempTree tree;
  tree.Write("/proc/self/mounts", "/dev/nvme1n1 /scratch xfs rw 0 0\n");
  const std::string disk =
      "/sys/devices/pci0000:00/0000:00:1f.0/nvme/nvme1/nvme1n1";
  tree.Write(disk + "/size", "2097152\n");
  tree.Write(disk + "/device/model", "Amazon Elastic Block Store              \n");
  tree.Write(disk + "/queue/rotational", "0\n");
  fs::create_directories(tree.At("/sys/block"));
  fs::create_directory_symlink(".." + disk.substr(4), tree.At("/sys/block/nvme1n1"));
  fs::create_directories(tree.At("/sys/dev/block"));
  fs::create_directory_symlink("../.." + disk.substr(4),
                               tree.At("/sys/dev/block/259:1"));
  StorageFacts storage = ReadStorageFacts(tree.root(), "/scratch/fb", 259, 1);
  EXPECT_EQ(storage.device.name(), "nvme1n1");
  EXPECT_EQ(storage.device.model(), "Amazon Elastic Block Store");
  EXPECT_FALSE(storage.device.virtual_device());
  EXPECT_EQ(storage.network_reason, "model Amazon Elastic Block Store");
}

TEST(ReadStorageFactsTest, NothingReadableLeavesItEmpty) {
  TempTree tree;
  StorageFacts storage = ReadStorageFacts(tree.root(), "/scratch", 8, 1);
  EXPECT_EQ(storage.filesystem, "");
  EXPECT_EQ(storage.device.name(), "");
  EXPECT_EQ(storage.network_reason, "");
}

TEST(ReadNodeFactsTest, ThisMachine) {
  FactsOptions options;
  options.scratch_dir = testing::TempDir();
  v1::NodeFacts facts = ReadNodeFacts(options);
  EXPECT_FALSE(facts.hostname().empty());
  EXPECT_FALSE(facts.kernel().empty());
  EXPECT_GT(facts.cpu().logical_cores(), 0u);
  EXPECT_GT(facts.cpu().sockets(), 0u);
  EXPECT_GT(facts.memory_total_bytes(), 0u);
  EXPECT_FALSE(facts.scratch_filesystem().empty());
  std::string text;
  google::protobuf::TextFormat::PrintToString(facts, &text);
  std::cout << "This machine's facts:\n" << text;
}

}  // namespace
}  // namespace fleetbench::agent
