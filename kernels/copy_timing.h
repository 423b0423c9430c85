// kernels/copy_timing.h — timed cudaMemcpyAsync, the measuring half of the
// "pcie" (host<->device over pinned memory) and "hbm" (device->same device)
// plugins (agent/benchmarks/gpu/gpu_copy.h does the rest).
//
// Host buffers are page-locked (cudaMallocHost): pageable memory would be
// staged through a driver buffer and measure the host's memcpy as well.
// Each trial is copies_per_trial back-to-back copies on one non-blocking
// stream between two CUDA events.
//
// Thread safety: uses and changes the calling thread's current device.
#ifndef FLEETBENCH_KERNELS_COPY_TIMING_H_
#define FLEETBENCH_KERNELS_COPY_TIMING_H_

#include "absl/status/status.h"
#include "kernels/gpu_module_api.h"

namespace fleetbench::kernels {

// seconds_per_trial has args.trials entries. INVALID_ARGUMENT for bad args,
// RESOURCE_EXHAUSTED when the buffers cannot be allocated, CANCELLED when
// args.cancelled said so between trials.
absl::Status TimeCopy(const FleetbenchGpuCopyArgs& args,
                      double* seconds_per_trial);

}  // namespace fleetbench::kernels

#endif  // FLEETBENCH_KERNELS_COPY_TIMING_H_
