// The host node rules on facts and samples fixtures.
#include <string>
#include <vector>

#include "diagnosis/node_rules.h"
#include "diagnosis/rules_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::diagnosis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A CPU node: no GPU, scratch on local ext4.
NodeEvidence CpuNode() {
  NodeEvidence e;
  e.node = "cpu-1";
  e.facts.mutable_cpu()->set_logical_cores(16);
  e.facts.set_scratch_filesystem("ext4");
  e.facts.set_gpu_unavailable_reason("libnvidia-ml.so.1: cannot open");
  return e;
}

// A node with `gpus` H100s on Gen5 x16 and an RDMA NIC.
NodeEvidence GpuNode(int gpus, int cores = 64) {
  NodeEvidence e = CpuNode();
  e.node = "gpu-1";
  e.facts.mutable_cpu()->set_logical_cores(cores);
  e.facts.add_rdma_devices("mlx5_0");
  for (int i = 0; i < gpus; ++i) {
    v1::GpuFacts* g = e.facts.add_gpus();
    g->set_index(i);
    g->set_name("NVIDIA H100 80GB HBM3");
    g->set_pci_bus_id("00000000:" + std::to_string(10 + i) + ":00.0");
    g->set_cuda_driver_version("12.4");
    g->set_pcie_gen_max(5);
    g->set_pcie_width_max(16);
  }
  return e;
}

// A disk benchmark sample with the storage params the plugin writes.
v1::Sample DiskSample(const std::string& metric, double value,
                      std::map<std::string, std::string> storage) {
  v1::Sample s;
  s.set_benchmark("disk");
  s.set_metric(metric);
  s.set_value(value);
  s.set_unit(metric.substr(metric.rfind('.') + 1));
  (*s.mutable_params())["filesystem"] = "ext4";
  (*s.mutable_params())["mount_source"] = "/dev/sdb1";
  (*s.mutable_params())["network_storage"] = "0";
  for (const auto& [k, v] : storage) (*s.mutable_params())[k] = v;
  return s;
}

v1::Sample Sample(const std::string& metric, double value,
                  std::map<std::string, std::string> params = {}) {
  v1::Sample s;
  s.set_benchmark(metric.substr(0, metric.find('.')));
  s.set_metric(metric);
  s.set_value(value);
  for (const auto& [k, v] : params) (*s.mutable_params())[k] = v;
  return s;
}

TEST(HostNodeRulesTest, HealthyCpuNodeHasNoFindings) {
  NodeEvidence e = CpuNode();
  e.samples.push_back(DiskSample(
      "disk.seq_read.MBps", 2500,
      {{"device", "nvme0n1"}, {"rotational", "0"}, {"virtual_device", "0"}}));
  e.samples.push_back(Sample("mem.copy.GBps", 80));
  EXPECT_THAT(DiagnoseNode(e), IsEmpty());
}

TEST(HostNodeRulesTest, RotationalScratchDisk) {
  NodeEvidence e = CpuNode();
  e.samples.push_back(DiskSample("disk.rand_read_4k.iops", 180,
                                 {{"device", "sdb"},
                                  {"device_model", "ST8000NM"},
                                  {"rotational", "1"},
                                  {"virtual_device", "0"}}));
  const v1::Finding f = Only(DiagnoseNode(e));
  EXPECT_EQ(f.code(), "disk.rotational");
  EXPECT_EQ(f.severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(f.subject().device(), "sdb");
  EXPECT_EQ(f.summary(), "scratch disk sdb (ST8000NM) is rotational");
  ASSERT_EQ(f.evidence_size(), 2);
  EXPECT_EQ(f.evidence(1).name(), "disk.rand_read_4k.iops");
  EXPECT_EQ(f.evidence(1).measured(), 180);

  // virtio-blk claims to spin: a virtual disk's flag says nothing (it is
  // disk.network_storage's info instead).
  NodeEvidence virt = CpuNode();
  virt.samples.push_back(DiskSample(
      "disk.seq_read.MBps", 900,
      {{"device", "vda"}, {"rotational", "1"}, {"virtual_device", "1"}}));
  const v1::Finding v = Only(DiagnoseNode(virt));
  EXPECT_EQ(v.code(), "disk.network_storage");
  EXPECT_EQ(v.severity(), v1::SEVERITY_INFO);
  EXPECT_EQ(v.summary(), "scratch disk vda is a virtual block device");
}

TEST(HostNodeRulesTest, NetworkStorageFromSamplesOrFacts) {
  NodeEvidence e = CpuNode();
  e.samples.push_back(DiskSample(
      "disk.seq_read.MBps", 125,
      {{"device", "nvme1n1"},
       {"network_storage", "1"},
       {"network_storage_reason", "model Amazon Elastic Block Store"}}));
  const v1::Finding f = Only(DiagnoseNode(e));
  EXPECT_EQ(f.code(), "disk.network_storage");
  EXPECT_EQ(f.severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(f.summary(),
            "scratch folder is on network storage (model Amazon "
            "Elastic Block Store)");
  EXPECT_EQ(f.subject().device(), "nvme1n1");

  for (const char* fs : {"nfs4", "ceph", "fuse.gcsfuse"}) {
    NodeEvidence facts_only = CpuNode();
    facts_only.facts.set_scratch_filesystem(fs);
    const v1::Finding n = Only(DiagnoseNode(facts_only));
    EXPECT_EQ(n.code(), "disk.network_storage") << fs;
    EXPECT_THAT(n.summary(), HasSubstr(std::string("filesystem ") + fs));
  }
}

TEST(HostNodeRulesTest, EphemeralScratch) {
  NodeEvidence e = CpuNode();
  e.facts.set_scratch_filesystem("overlay");
  e.facts.mutable_virtualization()->set_container("docker");
  const v1::Finding f = Only(DiagnoseNode(e));
  EXPECT_EQ(f.code(), "disk.scratch_ephemeral");
  EXPECT_EQ(f.severity(), v1::SEVERITY_INFO);
  EXPECT_EQ(
      f.summary(),
      "scratch folder is on overlay: gone when the container is recreated");
  EXPECT_THAT(f.context(), ElementsAre("running in a container (docker)"));
  e.facts.set_scratch_filesystem("tmpfs");
  EXPECT_THAT(Only(DiagnoseNode(e)).summary(),
              HasSubstr("gone after a reboot"));
}

TEST(HostNodeRulesTest, NoRdma) {
  NodeEvidence gpu = GpuNode(1);
  gpu.facts.clear_rdma_devices();
  const v1::Finding f = Only(DiagnoseNode(gpu));
  EXPECT_EQ(f.code(), "net.no_rdma");
  EXPECT_EQ(f.severity(), v1::SEVERITY_INFO);
  // A CPU node says nothing unless the rdma benchmark was asked for.
  NodeEvidence cpu = CpuNode();
  EXPECT_THAT(DiagnoseNode(cpu), IsEmpty());
  v1::BenchmarkOutcome skipped;
  skipped.set_benchmark("rdma");
  skipped.set_state(v1::TASK_STATE_SKIPPED);
  skipped.set_reason("no RDMA device (libibverbs lists none)");
  cpu.outcomes.push_back(skipped);
  EXPECT_THAT(Only(DiagnoseNode(cpu)).context(),
              ElementsAre("rdma benchmark skipped: no RDMA device (libibverbs "
                          "lists none)"));
}

TEST(HostNodeRulesTest, CudaRuntimeNewerThanDriver) {
  NodeEvidence e = GpuNode(1);
  e.samples.push_back(Sample(
      "gemm.gpu.bf16.tflops", 700,
      {{"gpu", "0"}, {"cuda_runtime", "13.0"}, {"cuda_driver", "12.4"}}));
  const v1::Finding major = Only(DiagnoseNode(e));
  EXPECT_EQ(major.code(), "stack.version_mismatch");
  EXPECT_EQ(major.severity(), v1::SEVERITY_CRITICAL);
  EXPECT_EQ(major.evidence(0).measured(), 13.0);
  EXPECT_EQ(major.evidence(0).expected(), 12.4);

  (*e.samples[0].mutable_params())["cuda_runtime"] = "12.6";
  EXPECT_EQ(Only(DiagnoseNode(e)).severity(), v1::SEVERITY_WARNING);
  (*e.samples[0].mutable_params())["cuda_runtime"] = "12.4";
  EXPECT_THAT(DiagnoseNode(e), IsEmpty());
  // A driver library newer than the kernel driver: cuda-compat.
  (*e.samples[0].mutable_params())["cuda_driver"] = "12.8";
  const v1::Finding compat = Only(DiagnoseNode(e));
  EXPECT_THAT(compat.summary(), HasSubstr("kernel driver (NVML) 12.4"));
  EXPECT_EQ(compat.severity(), v1::SEVERITY_INFO);
}

TEST(HostNodeRulesTest, PreemptibleByLabel) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{
           {"spot", "true"},
           {"preemptible", "yes"},
           {"eks.amazonaws.com/capacityType", "SPOT"},
           {"cloud.google.com/gke-spot", "true"},
           {"kubernetes.azure.com/scalesetpriority", "spot"}}) {
    NodeEvidence e = CpuNode();
    e.labels[key] = value;
    const v1::Finding f = Only(DiagnoseNode(e));
    EXPECT_EQ(f.code(), "node.preemptible") << key;
    EXPECT_THAT(f.context(), ElementsAre(HasSubstr("on ext4, local")));
    EXPECT_THAT(f.suggestion(), HasSubstr("object store"));
  }
  NodeEvidence on_demand = CpuNode();
  on_demand.labels["spot"] = "false";
  on_demand.labels["capacity_type"] = "on-demand";
  EXPECT_THAT(DiagnoseNode(on_demand), IsEmpty());
}

TEST(HostNodeRulesTest, CpuCoresPerGpu) {
  const v1::Finding f = Only(DiagnoseNode(GpuNode(8, 24)));
  EXPECT_EQ(f.code(), "host.cpu_starved");
  EXPECT_EQ(f.summary(), "24 logical CPU cores for 8 GPUs (3 per GPU)");
  EXPECT_EQ(f.evidence(0).expected(), kMinCoresPerGpu);
  EXPECT_THAT(DiagnoseNode(GpuNode(8, 32)), IsEmpty());
}

TEST(HostNodeRulesTest, ContainerCpuLimitCountsNotTheMachinesCores) {
  // 64 cores on the machine, a container limited to 6 of them by a cgroup
  // (docker --cpus=6): 0.75 per GPU.
  NodeEvidence e = GpuNode(8, 64);
  e.facts.mutable_cpu()->set_cgroup_limit_cores(6);
  e.facts.mutable_cpu()->set_cgroup_limit_source("/sys/fs/cgroup/docker/x/cpu.max");
  const v1::Finding f = Only(DiagnoseNode(e));
  EXPECT_EQ(f.code(), "host.cpu_starved");
  EXPECT_EQ(f.summary(),
            "6 CPU cores for 8 GPUs (0.75 per GPU); the machine has 64, limited by a cgroup "
            "CPU limit (/sys/fs/cgroup/docker/x/cpu.max)");
  // A cpuset of 16 CPUs: 2 per GPU.
  NodeEvidence pinned = GpuNode(8, 64);
  pinned.facts.mutable_cpu()->set_allowed_cores(16);
  EXPECT_THAT(Only(DiagnoseNode(pinned)).summary(), HasSubstr("limited by the allowed-CPU list"));
  // A limit above the machine's cores changes nothing.
  NodeEvidence loose = GpuNode(8, 64);
  loose.facts.mutable_cpu()->set_cgroup_limit_cores(128);
  EXPECT_THAT(DiagnoseNode(loose), IsEmpty());
}

TEST(HostNodeRulesTest, HostMemoryBandwidthAgainstGpuLinks) {
  NodeEvidence e = GpuNode(8);  // 8 x 63 GB/s; half is 252
  e.samples.push_back(Sample("mem.copy.GBps", 180));
  const v1::Finding f = Only(DiagnoseNode(e));
  EXPECT_EQ(f.code(), "host.mem_bandwidth_low");
  EXPECT_NEAR(f.evidence(0).expected(), 252, 0.5);
  e.samples[0].set_value(300);
  EXPECT_THAT(DiagnoseNode(e), IsEmpty());
}

TEST(HostNodeRulesTest, NoGpuWhereOneIsExpected) {
  NodeEvidence cpu = CpuNode();
  EXPECT_THAT(DiagnoseNode(cpu), IsEmpty());  // a CPU node is fine
  cpu.labels["gpus"] = "8";
  const v1::Finding by_label = Only(DiagnoseNode(cpu));
  EXPECT_EQ(by_label.code(), "gpu.none");
  EXPECT_EQ(by_label.severity(), v1::SEVERITY_CRITICAL);
  EXPECT_EQ(by_label.evidence(0).expected(), 8);
  EXPECT_EQ(by_label.summary(),
            "no GPU visible (libnvidia-ml.so.1: cannot open)");

  NodeEvidence container = CpuNode();
  container.facts.mutable_virtualization()->set_container("docker");
  v1::PcieDeviceFacts* gpu = container.facts.add_pcie_devices();
  gpu->set_vendor_id("0x10de");
  gpu->set_class_code("0x030200");
  v1::PcieDeviceFacts* nvswitch = container.facts.add_pcie_devices();
  nvswitch->set_vendor_id("0x10de");
  nvswitch->set_class_code("0x068000");
  const v1::Finding on_bus = Only(DiagnoseNode(container));
  EXPECT_EQ(on_bus.evidence(0).expected(), 1);
  EXPECT_THAT(on_bus.suggestion(), HasSubstr("--gpus all"));
}

}  // namespace
}  // namespace fleetbench::diagnosis
