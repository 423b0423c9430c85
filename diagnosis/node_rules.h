// diagnosis/node_rules.h — the rules that judge one node from what it says
// about itself: its facts (GPU power, PCIe links, MIG, ECC, disks, NICs,
// versions, virtualisation) and the samples of one run on it, against fixed
// expectations (the SKU tables, NVML's own defaults, documented ratios).
// What a node's peers or its own history expect is fleet_rules.h.
//
// Used by `probe` (no controller, no fleet) and by the controller for every
// node of a run. Pure; see diagnosis/finding.h for the layer's contract.
// The rules, their thresholds and where each expectation comes from are
// listed in docs/findings.md ("Node rules"); the constants below are those
// thresholds. GPU rules are in gpu_node_rules.cc, the host's (disk, network,
// software stack, instance, balance) in host_node_rules.cc, whether the disk
// and the CPU feed the GPUs (the data loader) in loader_node_rules.cc.
#ifndef FLEETBENCH_DIAGNOSIS_NODE_RULES_H_
#define FLEETBENCH_DIAGNOSIS_NODE_RULES_H_

#include <map>
#include <string>
#include <vector>

#include "diagnosis/finding.h"
#include "fleetbench/v1/facts.pb.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench::diagnosis {

// Everything a node rule may read. `samples` may be empty (facts only).
struct NodeEvidence {
  std::string node;
  v1::NodeFacts facts;
  std::map<std::string, std::string> labels;
  std::string run_id;  // copied into each finding; empty for facts only
  std::vector<v1::Sample> samples;
  // How each benchmark of the run ended (a skipped rdma says "no RDMA").
  std::vector<v1::BenchmarkOutcome> outcomes;
  int64_t time_unix_ms = 0;  // copied into each finding
};

// Thresholds (docs/findings.md says why each is what it is).
// gpu.power_capped: enforced power limit below this share of NVML's default.
inline constexpr double kPowerCapShare = 0.99;
// gpu.board_power_low: default limit below this share of the SKU's board
// power (a board configured by the vendor or cloud below its datasheet).
inline constexpr double kBoardPowerShare = 0.95;
// gpu.thermal_throttle: share of a sustained run's NVML samples with a heat
// or hardware slowdown reason that warns, and the hardware-slowdown share
// (hw_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown) that is
// critical.
inline constexpr double kThrottleShareWarning = 0.10;
inline constexpr double kHwSlowdownShareCritical = 0.25;
// gpu.power_throttle: share of a sustained run held at the power limit.
inline constexpr double kPowerThrottleShareInfo = 0.50;
// gpu.sustained_drop: sustained throughput below this share of the burst.
inline constexpr double kSustainedShareOfBurst = 0.90;
// gpu.below_datasheet: GEMM below this share of the SKU's dense peak.
inline constexpr double kGemmShareOfPeak = 0.50;
// host.cpu_starved: logical CPU cores per GPU below this.
inline constexpr double kMinCoresPerGpu = 4;
// host.mem_bandwidth_low: host memory bandwidth (STREAM copy) below this
// share of what all GPUs' links can take at once (one direction).
inline constexpr double kHostMemoryShareOfPcie = 0.5;
// disk.too_slow_to_feed and host.decode_too_slow: the data-loader model. An
// image-training loader (ResNet-50 class, MLPerf-like throughput) reads one
// file, a JPEG of kBytesPerSample, per sample and decodes it on the CPU; a
// GPU trains kSamplesPerSecondPerTflop samples per second per TFLOP/s of its
// measured dense bf16 GEMM rate. The disk should deliver what all GPUs
// consume, times kDiskHeadroom for shuffling and epochs past the page cache:
// as files/s when smallfiles ran (its files stand for the samples), else as
// kBytesPerSample x samples/s of sequential read.
inline constexpr double kBytesPerSample = 110e3;
inline constexpr double kSamplesPerSecondPerTflop = 3.5;
inline constexpr double kDiskHeadroom = 1.0;
// host.decode_too_slow: the loader's decode, as decode measures it: the
// all-cores case whose resize is nearest kLoaderResizeSide squared (the
// network input of ResNet-class models), then whose picture is nearest
// kLoaderPicturePixels (500x375, ImageNet's most common photo size).
inline constexpr int kLoaderResizeSide = 224;
inline constexpr double kLoaderPicturePixels = 500.0 * 375.0;
// workload.input_bound: a workload whose data disk had I/O in flight for
// at least this share of its run, while its processes kept fewer than
// kInputBoundCpuShare of the usable cores busy, waited on its input.
inline constexpr double kInputBoundBusyPct = 90;
inline constexpr double kInputBoundCpuShare = 0.5;
// gpu.none: PCI vendor id of NVIDIA and the class prefix of display / 3D
// controllers (an NVSwitch is a bridge, 0x0680, and does not count).
inline constexpr char kNvidiaVendorId[] = "0x10de";
inline constexpr char kDisplayClassPrefix[] = "0x03";

// The node rules' table, in the order they run.
const std::vector<RuleInfo>& NodeRuleTable();

// Every node rule over `evidence`, in display order (SortFindings).
std::vector<v1::Finding> DiagnoseNode(const NodeEvidence& evidence);

}  // namespace fleetbench::diagnosis

#endif  // FLEETBENCH_DIAGNOSIS_NODE_RULES_H_
