// kernels/nccl_status.h — GpuResultStatus for NCCL's ncclResult_t (the CUDA
// and cuBLASLt overloads are in cuda_status.h), so the NCCL files use
// FLEETBENCH_GPU_RETURN_IF_ERROR too. Only built with FLEETBENCH_WITH_NCCL.
// Codes: invalid argument/usage -> INVALID_ARGUMENT; a system error or a
// CUDA error inside NCCL -> FAILED_PRECONDITION; a remote error (a peer
// gone) -> UNAVAILABLE; anything else -> INTERNAL.
#ifndef FLEETBENCH_KERNELS_NCCL_STATUS_H_
#define FLEETBENCH_KERNELS_NCCL_STATUS_H_

#include <nccl.h>

#include "absl/status/status.h"
#include "kernels/cuda_status.h"

namespace fleetbench::kernels {

absl::Status GpuResultStatus(ncclResult_t result, const char* expression,
                             const char* file, int line);

}  // namespace fleetbench::kernels

#endif  // FLEETBENCH_KERNELS_NCCL_STATUS_H_
