// The host rules: the data disk, RDMA, the software stack, the instance's
// lifetime, and the balance between CPU, host memory and the GPUs (whether
// the disk and the CPU's decode feed the GPUs is loader_node_rules.cc).
// Disk rules prefer the disk benchmark's samples (which name the disk under
// the scratch folder) and fall back to facts where facts can tell.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/filesystems.h"
#include "common/gpu_values.h"
#include "common/units.h"
#include "diagnosis/node_rule_support.h"

namespace fleetbench::diagnosis::node_rules {
namespace {

// The first disk benchmark sample: all of them carry the same storage
// params (filesystem, device, rotational, network_storage, ...).
const v1::Sample* DiskSample(const NodeEvidence& e) {
  for (const v1::Sample& s : e.samples) {
    if (s.benchmark() == "disk" && !Param(s, "filesystem").empty()) return &s;
  }
  return nullptr;
}

std::optional<double> BestValue(const NodeEvidence& e,
                                absl::string_view metric) {
  std::optional<double> best;
  for (const v1::Sample* s : SamplesOf(e, metric)) {
    if (!best || s->value() > *best) best = s->value();
  }
  return best;
}

std::string ScratchFilesystem(const NodeEvidence& e) {
  const v1::Sample* disk = DiskSample(e);
  if (disk != nullptr && Param(*disk, "filesystem") != "unknown") {
    return Param(*disk, "filesystem");
  }
  return e.facts.scratch_filesystem();
}

void AddDiskRates(const NodeEvidence& e, v1::Finding* f) {
  for (const char* metric : {"disk.seq_read.MBps", "disk.rand_read_4k.iops"}) {
    for (const v1::Sample* s : SamplesOf(e, metric)) {
      AddEvidence(f, metric, s->value(), std::nullopt, s->unit(),
                  "measured on the scratch folder");
    }
  }
}

// ---- disk.rotational -----------------------------------------------------
void DiskRotational(const NodeEvidence& e, const RuleInfo& rule,
                    std::vector<v1::Finding>* out) {
  const v1::Sample* disk = DiskSample(e);
  // virtio-blk reports rotational unless the hypervisor says otherwise, so
  // a virtual disk's flag proves nothing.
  if (disk == nullptr || Param(*disk, "rotational") != "1" ||
      Param(*disk, "virtual_device") == "1") {
    return;
  }
  v1::Finding f = NewFinding(e, rule);
  const std::string device = Param(*disk, "device");
  f.mutable_subject()->set_device(device);
  const std::string model = Param(*disk, "device_model");
  f.set_summary(absl::StrCat(
      "scratch disk ", device,
      model.empty() ? "" : absl::StrCat(" (", model, ")"), " is rotational"));
  AddEvidence(&f, "block_device.rotational", 1, std::nullopt, "flag",
              "sysfs queue/rotational of the disk under the scratch folder");
  AddDiskRates(e, &f);
  f.set_effect(
      "a spinning disk reads ~100-250 MB/s and ~100-200 random IOPS: a "
      "shuffled dataset loader stalls the GPUs");
  f.set_suggestion(
      "put the dataset on local NVMe or in RAM, or ask for an SSD-backed "
      "volume");
  out->push_back(std::move(f));
}

// ---- disk.network_storage ------------------------------------------------
void DiskNetworkStorage(const NodeEvidence& e, const RuleInfo& rule,
                        std::vector<v1::Finding>* out) {
  const v1::Sample* disk = DiskSample(e);
  v1::Finding f = NewFinding(e, rule);
  std::string reason;
  if (disk != nullptr && Param(*disk, "network_storage") == "1") {
    reason = Param(*disk, "network_storage_reason");
    f.mutable_subject()->set_device(Param(*disk, "device").empty()
                                        ? Param(*disk, "mount_source")
                                        : Param(*disk, "device"));
  } else if (IsNetworkFilesystem(ScratchFilesystem(e))) {
    reason = absl::StrCat("filesystem ", ScratchFilesystem(e));
  }
  if (!reason.empty()) {
    f.set_summary(
        absl::StrCat("scratch folder is on network storage (", reason, ")"));
    AddEvidence(&f, "scratch.network_storage", 1, std::nullopt, "flag",
                "mount table, block device name and model (agent/facts)");
    AddDiskRates(e, &f);
    f.set_effect(
        "reads cross the network: throughput and latency depend on the "
        "volume's provisioning and on other tenants");
    f.set_suggestion(
        "copy the dataset to local NVMe or RAM before training, or provision "
        "the volume for the rate disk.too_slow_to_feed asks for");
    out->push_back(std::move(f));
    return;
  }
  if (disk != nullptr && Param(*disk, "virtual_device") == "1") {
    const std::string device = Param(*disk, "device");
    f.set_severity(v1::SEVERITY_INFO);
    f.mutable_subject()->set_device(device);
    f.set_summary(
        absl::StrCat("scratch disk ", device, " is a virtual block device"));
    AddEvidence(&f, "block_device.virtual_device", 1, std::nullopt, "flag",
                "sysfs: virtio, xen or device-mapper path");
    AddDiskRates(e, &f);
    f.set_effect(
        "a hypervisor's disk, often a network volume: its speed is what the "
        "provider provisions, not the hardware's");
    f.set_suggestion("compare disk.seq_read.MBps with what the job needs");
    out->push_back(std::move(f));
  }
}

// ---- disk.scratch_ephemeral ----------------------------------------------
void ScratchEphemeral(const NodeEvidence& e, const RuleInfo& rule,
                      std::vector<v1::Finding>* out) {
  const std::string fs = ScratchFilesystem(e);
  if (!IsEphemeralFilesystem(fs)) return;
  v1::Finding f = NewFinding(e, rule);
  const bool memory = fs == "tmpfs" || fs == "ramfs";
  f.set_summary(absl::StrCat(
      "scratch folder is on ", fs, ": ",
      memory ? "gone after a reboot" : "gone when the container is recreated"));
  AddEvidence(&f, absl::StrCat("scratch_filesystem.", fs), 1, std::nullopt,
              "flag", "/proc/self/mounts");
  if (!e.facts.virtualization().container().empty()) {
    f.add_context(absl::StrCat("running in a container (",
                               e.facts.virtualization().container(), ")"));
  }
  f.set_effect(
      memory ? "data and checkpoints there live in RAM and are lost on restart"
             : "data, checkpoints and installed packages in the container's "
               "layer are lost when it is recreated");
  f.set_suggestion(
      "keep datasets and checkpoints on a mounted volume or object storage, "
      "and the environment in an image");
  out->push_back(std::move(f));
}

// ---- net.no_rdma ---------------------------------------------------------
void NoRdma(const NodeEvidence& e, const RuleInfo& rule,
            std::vector<v1::Finding>* out) {
  const v1::BenchmarkOutcome* skipped = nullptr;
  for (const v1::BenchmarkOutcome& o : e.outcomes) {
    if (o.benchmark() == "rdma" && o.state() == v1::TASK_STATE_SKIPPED)
      skipped = &o;
  }
  // Without a GPU there is no multi-node training to worry about, unless
  // someone asked for the RDMA benchmark.
  if (e.facts.rdma_devices_size() > 0) return;
  if (skipped == nullptr && e.facts.gpus().empty()) return;
  v1::Finding f = NewFinding(e, rule);
  f.set_summary("no RDMA device: traffic between nodes goes over TCP");
  AddEvidence(&f, "rdma_devices", e.facts.rdma_devices_size(), std::nullopt,
              "count", "/sys/class/infiniband");
  if (skipped != nullptr) {
    f.add_context(absl::StrCat("rdma benchmark skipped: ", skipped->reason()));
  }
  f.set_effect(
      "multi-node training (all-reduce between nodes) runs at TCP speed and "
      "CPU cost; single-node jobs are unaffected");
  f.set_suggestion(
      "for multi-node jobs ask for InfiniBand, RoCE or EFA and check the "
      "multi-node verdicts (net, allreduce between nodes)");
  out->push_back(std::move(f));
}

// "12.4" -> 12040, as CUDA numbers versions.
std::optional<int> CudaVersionNumber(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, '.');
  int major = 0, minor = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &major) ||
      !absl::SimpleAtoi(parts[1], &minor) || major <= 0 || minor < 0) {
    return std::nullopt;
  }
  return major * 1000 + minor * 10;
}

// 12040 -> 12.4, the number users read (CUDA minors stay below 10).
double AsDecimal(int version) {
  return version / 1000 + ((version % 1000) / 10) / 10.0;
}

// ---- stack.version_mismatch ----------------------------------------------
void VersionMismatch(const NodeEvidence& e, const RuleInfo& rule,
                     std::vector<v1::Finding>* out) {
  std::vector<std::string> drivers;
  for (const v1::GpuFacts& g : e.facts.gpus()) {
    if (!g.driver_version().empty() &&
        std::find(drivers.begin(), drivers.end(), g.driver_version()) ==
            drivers.end()) {
      drivers.push_back(g.driver_version());
    }
  }
  const std::string nvml_cuda =
      e.facts.gpus().empty() ? "" : e.facts.gpus(0).cuda_driver_version();
  std::string runtime, driver;
  for (const v1::Sample& s : e.samples) {
    if (!Param(s, "cuda_runtime").empty() && !Param(s, "cuda_driver").empty()) {
      runtime = Param(s, "cuda_runtime");
      driver = Param(s, "cuda_driver");
      break;
    }
  }
  v1::Finding f = NewFinding(e, rule);
  std::vector<std::string> what;
  const std::optional<int> rt = CudaVersionNumber(runtime);
  const std::optional<int> dv = CudaVersionNumber(driver);
  if (rt && dv && *rt > *dv) {
    AddEvidence(&f, "cuda_runtime", AsDecimal(*rt), AsDecimal(*dv), "version",
                "the highest CUDA the driver supports (cudaDriverGetVersion)");
    // A newer major needs a newer driver; within a major, minor-version
    // compatibility runs most code but not PTX newer than the driver.
    if (*rt / 1000 > *dv / 1000) f.set_severity(v1::SEVERITY_CRITICAL);
    what.push_back(absl::StrCat("CUDA runtime ", runtime,
                                " is newer than the driver's CUDA ", driver));
  }
  const std::optional<int> nv = CudaVersionNumber(nvml_cuda);
  if (dv && nv && *dv != *nv) {
    AddEvidence(&f, "cuda_driver", AsDecimal(*dv), AsDecimal(*nv), "version",
                "NVML's CUDA version of the kernel driver");
    what.push_back(absl::StrCat("the CUDA driver library says ", driver,
                                ", the kernel driver (NVML) ", nvml_cuda));
    f.add_context(
        "a forward-compatibility libcuda (cuda-compat) or a "
        "container's own driver library is in use");
  }
  if (drivers.size() > 1) {
    AddEvidence(&f, "gpu.driver_versions", static_cast<double>(drivers.size()),
                1, "count", "one driver serves all GPUs of a node");
    what.push_back(
        absl::StrCat("GPUs report drivers ", absl::StrJoin(drivers, ", ")));
  }
  if (what.empty()) return;
  // A compat libcuda alone is a supported setup worth knowing, not a fault.
  if (f.evidence_size() == 1 && f.evidence(0).name() == "cuda_driver") {
    f.set_severity(v1::SEVERITY_INFO);
  }
  f.set_summary(absl::StrJoin(what, "; "));
  if (!drivers.empty()) f.add_context(absl::StrCat("driver ", drivers[0]));
  f.set_effect(
      "CUDA programs built for the newer version fail to start "
      "(cudaErrorInsufficientDriver) or lose features; versions that "
      "disagree make results hard to compare across nodes");
  f.set_suggestion(
      "use a container built for the node's driver CUDA version, or ask for a "
      "driver that supports your CUDA runtime");
  out->push_back(std::move(f));
}

bool Truthy(std::string value) {
  absl::AsciiStrToLower(&value);
  return value == "true" || value == "yes" || value == "1";
}

// ---- node.preemptible ----------------------------------------------------
void Preemptible(const NodeEvidence& e, const RuleInfo& rule,
                 std::vector<v1::Finding>* out) {
  // Flags whose true value means "may be taken away", and keys whose value
  // names the capacity kind (fleetbench's own, then the clouds' Kubernetes
  // node labels).
  static constexpr const char* kFlags[] = {
      "spot", "preemptible", "interruptible", "cloud.google.com/gke-spot",
      "cloud.google.com/gke-preemptible"};
  static constexpr const char* kKinds[] = {
      "capacity_type",
      "lifecycle",
      "eks.amazonaws.com/capacityType",
      "karpenter.sh/capacity-type",
      "kubernetes.azure.com/scalesetpriority",
      "node.kubernetes.io/lifecycle"};
  std::string label;
  for (const char* key : kFlags) {
    auto it = e.labels.find(key);
    if (it != e.labels.end() && Truthy(it->second))
      label = absl::StrCat(key, "=", it->second);
  }
  for (const char* key : kKinds) {
    auto it = e.labels.find(key);
    if (it == e.labels.end()) continue;
    std::string kind = absl::AsciiStrToLower(it->second);
    if (kind == "spot" || kind == "preemptible" || kind == "interruptible") {
      label = absl::StrCat(key, "=", it->second);
    }
  }
  if (label.empty()) return;
  v1::Finding f = NewFinding(e, rule);
  f.set_summary(
      absl::StrCat("preemptible (spot) instance (label ", label, ")"));
  AddEvidence(&f, absl::StrCat("label.", label.substr(0, label.find('='))), 1,
              std::nullopt, "flag", "node labels");
  const std::string fs = ScratchFilesystem(e);
  if (!fs.empty() && !IsNetworkFilesystem(fs)) {
    f.add_context(absl::StrCat("the scratch folder is on ", fs,
                               ", local to the instance: lost with it"));
  }
  f.set_effect(
      "the provider may stop the instance at short notice: the environment, "
      "local disks and unsaved progress go with it");
  f.set_suggestion(
      "checkpoint often (every 10-30 minutes) to storage that outlives the "
      "instance: an object store (s3://, gs://, az://) or a network volume; "
      "keep nothing only on local disk, and the environment in an image");
  out->push_back(std::move(f));
}

// ---- host.cpu_starved ----------------------------------------------------
void CpuStarved(const NodeEvidence& e, const RuleInfo& rule,
                std::vector<v1::Finding>* out) {
  const int gpus = e.facts.gpus_size();
  const v1::CpuFacts& cpu = e.facts.cpu();
  if (gpus == 0 || cpu.logical_cores() == 0) return;
  std::string limited_by;
  const double cores = UsableCores(cpu, &limited_by);
  const double per_gpu = cores / gpus;
  if (per_gpu >= kMinCoresPerGpu) return;
  v1::Finding f = NewFinding(e, rule);
  f.set_summary(absl::StrCat(
      FormatNumber(cores), limited_by.empty() ? " logical CPU cores" : " CPU cores",
      " for ", gpus, " GPU", gpus == 1 ? "" : "s", " (", FormatNumber(per_gpu), " per GPU)",
      limited_by.empty()
          ? ""
          : absl::StrCat("; the machine has ", cpu.logical_cores(), ", limited by ", limited_by)));
  AddEvidence(&f, "cpu.usable_cores_per_gpu", per_gpu, kMinCoresPerGpu, "cores",
              "rule of thumb: a data loader wants 4+ worker cores per GPU");
  f.set_effect(
      "data loading, augmentation and the Python training loop compete for "
      "too few cores: the GPUs wait while the CPU is busy");
  f.set_suggestion(
      "choose an offer with more vCPUs per GPU, or move decoding and "
      "augmentation to the GPU (DALI)");
  out->push_back(std::move(f));
}

// ---- host.mem_bandwidth_low ----------------------------------------------
void MemBandwidthLow(const NodeEvidence& e, const RuleInfo& rule,
                     std::vector<v1::Finding>* out) {
  double links_GBps = 0;
  int gpus = 0;
  for (const v1::GpuFacts& g : e.facts.gpus()) {
    if (!g.has_pcie_gen_max() || !g.has_pcie_width_max()) continue;
    links_GBps +=
        gpu::PcieTheoreticalGBps(static_cast<int>(g.pcie_gen_max()),
                                 static_cast<int>(g.pcie_width_max()));
    ++gpus;
  }
  const std::optional<double> mem = BestValue(e, "mem.copy.GBps");
  if (gpus == 0 || !(links_GBps > 0) || !mem) return;
  const double expected = kHostMemoryShareOfPcie * links_GBps;
  if (*mem >= expected) return;
  v1::Finding f = NewFinding(e, rule);
  f.set_summary(absl::StrCat("host memory copies ", WithUnit(*mem, "GB/s"),
                             "; ", gpus, " GPU links take ",
                             WithUnit(links_GBps, "GB/s")));
  AddEvidence(&f, "mem.copy.GBps", *mem, expected, "GBps",
              absl::StrCat(FormatNumber(100 * kHostMemoryShareOfPcie), "% of ",
                           gpus, " GPUs' PCIe max links, one direction (",
                           FormatNumber(links_GBps), " GB/s)"));
  f.set_effect(
      "host-to-GPU staging (pinned buffers, loader output, offloaded "
      "optimizer state) is limited by host memory, not by the links");
  f.set_suggestion(
      "check that all memory channels are populated (few large DIMMs halve "
      "bandwidth) and NUMA placement; or prefer an offer with more memory "
      "bandwidth per GPU");
  out->push_back(std::move(f));
}

// ---- gpu.none ------------------------------------------------------------
void GpuNone(const NodeEvidence& e, const RuleInfo& rule,
             std::vector<v1::Finding>* out) {
  if (!e.facts.gpus().empty()) return;
  int on_bus = 0;
  for (const v1::PcieDeviceFacts& d : e.facts.pcie_devices()) {
    if (absl::AsciiStrToLower(d.vendor_id()) == kNvidiaVendorId &&
        absl::StartsWith(d.class_code(), kDisplayClassPrefix)) {
      ++on_bus;
    }
  }
  int expected = 0;
  std::string source;
  auto label = e.labels.find("gpus");
  if (label != e.labels.end() && absl::SimpleAtoi(label->second, &expected) &&
      expected > 0) {
    source = absl::StrCat("node label gpus=", label->second);
  } else if (on_bus > 0) {
    expected = on_bus;
    source = "NVIDIA display/3D controllers on the PCIe bus (sysfs)";
  } else {
    return;
  }
  v1::Finding f = NewFinding(e, rule);
  f.set_summary(
      absl::StrCat("no GPU visible (", e.facts.gpu_unavailable_reason(), ")"));
  AddEvidence(&f, "gpus", 0, expected, "count", source);
  const std::string container = e.facts.virtualization().container();
  if (!container.empty())
    f.add_context(absl::StrCat("in a container (", container, ")"));
  f.set_effect("nothing can run on a GPU here");
  f.set_suggestion(
      container.empty()
          ? "install or load the NVIDIA driver (nvidia-smi must list the GPUs)"
          : "start the container with the GPUs: the NVIDIA container toolkit "
            "(docker --gpus all) or a Kubernetes nvidia.com/gpu request");
  out->push_back(std::move(f));
}

}  // namespace

const std::vector<NodeRule>& HostNodeRules() {
  static const std::vector<NodeRule>* rules = new std::vector<NodeRule>{
      {{"gpu.none", v1::SEVERITY_CRITICAL,
        "node label gpus=N, or NVIDIA controllers on the PCIe bus",
        "NVML sees no GPU where one is expected"},
       GpuNone},
      {{"disk.rotational", v1::SEVERITY_WARNING,
        "sysfs queue/rotational (disk benchmark's samples)",
        "the non-virtual disk under the scratch folder is rotational"},
       DiskRotational},
      {{"disk.network_storage", v1::SEVERITY_WARNING,
        "mount table, block device name and model",
        "scratch on a network filesystem or block device (nfs, ceph, rbd, "
        "iSCSI, EBS, ...); info for a virtual (virtio/xen) disk"},
       DiskNetworkStorage},
      {{"disk.scratch_ephemeral", v1::SEVERITY_INFO, "mount table",
        "scratch on tmpfs, ramfs, overlay or aufs"},
       ScratchEphemeral},
      {{"net.no_rdma", v1::SEVERITY_INFO, "/sys/class/infiniband; rdma outcome",
        "a GPU node with no RDMA device, or the rdma benchmark skipped"},
       NoRdma},
      {{"stack.version_mismatch", v1::SEVERITY_WARNING,
        "cudaRuntimeGetVersion, cudaDriverGetVersion, NVML",
        "CUDA runtime newer than the driver's CUDA (critical for a newer "
        "major); GPUs on different drivers; info when only the driver "
        "library and NVML disagree"},
       VersionMismatch},
      {{"node.preemptible", v1::SEVERITY_WARNING, "node labels",
        "spot/preemptible=true, or a capacity-type label of spot/preemptible"},
       Preemptible},
      {{"host.cpu_starved", v1::SEVERITY_WARNING,
        "rule of thumb (loader workers)",
        "usable CPU cores per GPU < 4 (logical cores, fewer under a cpuset or cgroup CPU limit)"},
       CpuStarved},
      {{"host.mem_bandwidth_low", v1::SEVERITY_WARNING,
        "PCIe max links of the GPUs (NVML)",
        "STREAM copy < 50% of the GPUs' summed one-direction link rate"},
       MemBandwidthLow},
  };
  return *rules;
}

}  // namespace fleetbench::diagnosis::node_rules
