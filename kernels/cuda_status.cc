#include "kernels/cuda_status.h"

#include "absl/strings/str_cat.h"
#include "kernels/gpu_status.h"

namespace fleetbench::kernels {
namespace {

absl::StatusCode CodeOfCudaError(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return absl::StatusCode::kOk;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorInitializationError:
    case cudaErrorInvalidDevice:
      return absl::StatusCode::kFailedPrecondition;
    case cudaErrorMemoryAllocation:
      return absl::StatusCode::kResourceExhausted;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::StatusCode CodeOfCublasStatus(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return absl::StatusCode::kOk;
    case CUBLAS_STATUS_NOT_INITIALIZED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return absl::StatusCode::kFailedPrecondition;
    case CUBLAS_STATUS_ALLOC_FAILED:
      return absl::StatusCode::kResourceExhausted;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::Status GpuResultStatus(cudaError_t error, const char* expression,
                             const char* file, int line) {
  if (error == cudaSuccess) return absl::OkStatus();
  return GpuCallStatus(
      CodeOfCudaError(error), "cuda", static_cast<int>(error),
      absl::StrCat(cudaGetErrorString(error), " (", cudaGetErrorName(error),
                   ")"),
      expression, file, line);
}

absl::Status GpuResultStatus(cublasStatus_t status, const char* expression,
                             const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return GpuCallStatus(
      CodeOfCublasStatus(status), "cublas", static_cast<int>(status),
      absl::StrCat(cublasLtGetStatusString(status), " (",
                   cublasLtGetStatusName(status), ")"),
      expression, file, line);
}

}  // namespace fleetbench::kernels
