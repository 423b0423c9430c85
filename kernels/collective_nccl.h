// kernels/collective_nccl.h — NCCL collectives across every visible GPU of
// the node, the measuring half of the "allreduce" plugin
// (agent/benchmarks/gpu/gpu_allreduce.h does sizes, bandwidths and samples).
//
// One process drives all GPUs: ncclCommInitAll over devices 0..n-1, one
// non-blocking stream per GPU, float elements, sum. Per size: every rank's
// send buffer gets the known pattern (collective_pattern.h), warm-up
// operations run, then `iters` operations between a CUDA event pair on each
// stream; the time per operation is the slowest rank's elapsed / iters.
// Operations are out of place, so repeating them leaves the receive buffers
// at the expected values, which are then checked on ~1024 evenly spaced
// elements per rank.
//
// Built with FLEETBENCH_WITH_NCCL (links libnccl.so.2); without it every
// call answers FAILED_PRECONDITION. Thread safety: changes the calling thread's
// current device.
#ifndef FLEETBENCH_KERNELS_COLLECTIVE_NCCL_H_
#define FLEETBENCH_KERNELS_COLLECTIVE_NCCL_H_

#include "absl/status/status.h"
#include "kernels/gpu_module_api.h"

namespace fleetbench::kernels {

absl::Status RunCollective(const FleetbenchGpuCollectiveArgs& args,
                           FleetbenchGpuCollectivePoint* points,
                           FleetbenchGpuCollectiveResult* result);

// Across nodes (collective_nccl_group.cc; the contract is the ABI's
// nccl_unique_id and group_collective in gpu_module_api.h). One rank per
// process on args.device; the communicator is non-blocking and aborted on
// cancel or error, and the GPU is never waited on with a blocking call
// while a peer could still fail (events are queried), so every return
// comes within a few ms of cancelled() turning true.
absl::Status NcclUniqueId(FleetbenchGpuNcclId* id, int* nccl_version);
absl::Status RunGroupCollective(const FleetbenchGpuGroupCollectiveArgs& args,
                                FleetbenchGpuCollectivePoint* points,
                                FleetbenchGpuCollectiveResult* result);

}  // namespace fleetbench::kernels

#endif  // FLEETBENCH_KERNELS_COLLECTIVE_NCCL_H_
