// agent/benchmarks/gpu/gpu_allreduce.h — "allreduce": NCCL collectives
// across every GPU of one node, or across the nodes of a group run (one
// rank per node, on its GPU 0).
//
// What it measures: for each op (allreduce, allgather, reducescatter) and
// each size of a ×2 sweep from min_bytes to max_bytes, the time of one
// operation over all local GPUs (one process, ncclCommInitAll, one stream
// per GPU, CUDA events; kernels/collective_nccl.h), float sum. algbw =
// bytes / seconds (GB = 10^9 B); busbw = algbw · nccl-tests' factor
// (allreduce 2(n-1)/n, allgather and reducescatter (n-1)/n; 0 on one GPU,
// where nothing crosses a link). After each size the receive buffers are
// checked against known values; a mismatch fails the run (DATA_LOSS) with
// the first wrong element.
//
// Samples: `<op>.nccl.busbw_GBps` at the LARGEST size only (never an
// average over sizes), and one `allreduce.nccl.curve_busbw_GBps` per (op,
// size) with params op, bytes, algbw_GBps, time_us. Every sample carries
// ranks, nccl_version and the GPU params of device 0 (gpu_plugin.h).
//
// Parameters:
//   ops        comma list of allreduce,allgather,reducescatter; default
//              allreduce
//   min_bytes  first size, 4..16G, suffixes K/M/G         default 1M
//   max_bytes  last size (>= min_bytes)                    default 1G
//   iters      timed operations per size, 1..10000         default 20
//   warmup     untimed operations per size, 0..1000        default 5
//
// Across nodes (context.group() set, the plugin run as a group task):
// one rank per member agent on its CUDA device 0 (CUDA_VISIBLE_DEVICES
// picks which), rank = the member's group rank. Rank 0 makes the
// ncclUniqueId in this agent process, which stays in the collective (NCCL's
// bootstrap root listens in it), and publishes it, hex, under
// "allreduce/nccl_id" in the group's rendezvous (agent/benchmarks/
// group_key.h); the others wait for it until the group's deadline. A rank
// 0 that cannot start (no driver, no GPU, no NCCL) publishes its reason
// instead, so every member fails at once with it. Every rank then makes the
// communicator non-blocking and runs every op of the sweep on it
// (kernels/collective_nccl_group.cc); a cancel or the group's deadline
// aborts it (ncclCommAbort), so no member hangs. busbw uses nccl-tests'
// factors for N = the group's size; a point's time is the slowest rank's.
// Rank 0 reports the samples, with ranks, nodes (rank order) and the NCCL
// facts of its own INFO log (nccl_log.h: nccl_net, nccl_rdma, nccl_gdrdma,
// nccl_net_devices, ...), NCCL_DEBUG=INFO captured to
// <scratch>/nccl-rank<r>.log; every rank checks its own result (DATA_LOSS).
//
// Probe: FAILED_PRECONDITION with the reason when the module, the driver,
// a GPU or NCCL is missing (the module built without NCCL says so).
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_ALLREDUCE_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_ALLREDUCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/collective_sweep.h"
#include "agent/benchmarks/gpu/gpu_plugin.h"
#include "kernels/gpu_module_api.h"

namespace fleetbench::gpu {

// The parameters and sweep are shared with the gloo backend
// (agent/benchmarks/collective_sweep.h).
using AllreduceConfig = agent::CollectiveSweepConfig;
using agent::CollectiveOpNumber;
using agent::DoublingSweep;

absl::StatusOr<AllreduceConfig> ParseAllreduceParams(
    const agent::Params& params);

// The op's samples from a finished sweep: the headline at the largest size
// and a curve point per size (no GPU params; the plugin adds those).
// DATA_LOSS when any point has mismatches, naming the first; INTERNAL when
// a point has no time.
absl::StatusOr<std::vector<v1::Sample>> CollectiveSamples(
    const std::string& op, int ranks, int nccl_version,
    const std::vector<FleetbenchGpuCollectivePoint>& points);

// The rendezvous key of rank 0's NCCL unique id.
inline constexpr char kNcclIdKey[] = "allreduce/nccl_id";
// The id as published (hex, 256 characters) and back; INVALID_ARGUMENT
// for anything else.
std::string NcclIdText(const FleetbenchGpuNcclId& id);
absl::StatusOr<FleetbenchGpuNcclId> ParseNcclIdText(const std::string& text);

class AllreduceBenchmark final : public agent::Benchmark {
 public:
  explicit AllreduceBenchmark(
      GpuPluginOptions options = DefaultGpuPluginOptions())
      : options_(std::move(options)) {}
  std::string name() const override { return "allreduce"; }
  absl::Status Probe() const override;
  std::vector<agent::MetricInfo> metrics() const override;
  absl::Status ValidateParams(const agent::Params& params) const override {
    return ParseAllreduceParams(params).status();
  }
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const agent::Params& params, const agent::RunContext& context) override;

 private:
  absl::StatusOr<std::vector<v1::Sample>> RunGroup(
      const AllreduceConfig& config, const agent::RunContext& context,
      const agent::GroupContext& group);

  GpuPluginOptions options_;
};

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_ALLREDUCE_H_
