// kernels/cuda_status.h — CUDA runtime and cuBLASLt results as absl::Status,
// and kernels' one early-return macro.
//
// The adapters pick the status code and the library's text; the formatting
// is gpu_status.h's GpuCallStatus, shared with NCCL and NVML. GpuResultStatus
// is overloaded per library result type (cudaError_t and cublasStatus_t here;
// ncclResult_t in collective_nccl.cc, the one file that includes nccl.h), so
// one macro serves them all and only returns:
//   FLEETBENCH_GPU_RETURN_IF_ERROR(cudaMalloc(&data, bytes));
// kernels/ has its own macro rather than common/status_macros.h's because it
// is the lowest layer: it includes only itself, CUDA, NCCL, cuBLAS and Abseil
// (tools/check_layers.py), and its macro also captures the call's text, file
// and line for the message.
// Codes: no driver, no device, no kernel image for this GPU, "not supported"
// -> FAILED_PRECONDITION (a skip, with the reason); out of memory ->
// RESOURCE_EXHAUSTED; anything else -> INTERNAL.
#ifndef FLEETBENCH_KERNELS_CUDA_STATUS_H_
#define FLEETBENCH_KERNELS_CUDA_STATUS_H_

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "absl/status/status.h"

namespace fleetbench::kernels {

// OK for success; else the failed call `expression` at file:line.
absl::Status GpuResultStatus(cudaError_t error, const char* expression,
                             const char* file, int line);
absl::Status GpuResultStatus(cublasStatus_t status, const char* expression,
                             const char* file, int line);

}  // namespace fleetbench::kernels

// Returns the Status of a CUDA, cuBLASLt or NCCL call when it failed. The
// GpuResultStatus overload for the call's result type must be declared.
#define FLEETBENCH_GPU_RETURN_IF_ERROR(expr)                                \
  do {                                                                      \
    if (absl::Status fleetbench_gpu_status_ =                               \
            ::fleetbench::kernels::GpuResultStatus((expr), #expr, __FILE__, \
                                                   __LINE__);               \
        !fleetbench_gpu_status_.ok()) {                                     \
      return fleetbench_gpu_status_;                                        \
    }                                                                       \
  } while (0)

#endif  // FLEETBENCH_KERNELS_CUDA_STATUS_H_
