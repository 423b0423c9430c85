// kernels/cuda_status.h — CUDA runtime and cuBLASLt results as absl::Status.
//
// The adapters pick the status code and the library's text; the formatting
// is gpu_status.h's GpuCallStatus, shared with NCCL and NVML.
// The macros only return: FLEETBENCH_CUDA_RETURN_IF_ERROR(cudaMalloc(...)).
// Codes: no driver, no device, no kernel image for this GPU, "not supported"
// -> FAILED_PRECONDITION (a skip, with the reason); out of memory ->
// RESOURCE_EXHAUSTED; anything else -> INTERNAL.
#ifndef FLEETBENCH_KERNELS_CUDA_STATUS_H_
#define FLEETBENCH_KERNELS_CUDA_STATUS_H_

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "absl/status/status.h"

namespace fleetbench::kernels {

absl::Status CudaStatus(cudaError_t error, const char* expression,
                        const char* file, int line);
absl::Status CublasStatus(cublasStatus_t status, const char* expression,
                          const char* file, int line);

}  // namespace fleetbench::kernels

#define FLEETBENCH_CUDA_RETURN_IF_ERROR(expr)                               \
  do {                                                                      \
    if (absl::Status _cuda_status = ::fleetbench::kernels::CudaStatus(      \
            (expr), #expr, __FILE__, __LINE__);                             \
        !_cuda_status.ok()) {                                               \
      return _cuda_status;                                                  \
    }                                                                       \
  } while (0)

#define FLEETBENCH_CUBLAS_RETURN_IF_ERROR(expr)                             \
  do {                                                                      \
    if (absl::Status _cublas_status = ::fleetbench::kernels::CublasStatus(  \
            (expr), #expr, __FILE__, __LINE__);                             \
        !_cublas_status.ok()) {                                             \
      return _cublas_status;                                                \
    }                                                                       \
  } while (0)

#endif  // FLEETBENCH_KERNELS_CUDA_STATUS_H_
