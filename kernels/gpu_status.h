// kernels/gpu_status.h — the one place a failed call into a GPU library
// (CUDA runtime, cuBLASLt, NCCL, NVML) or dlopen becomes an absl::Status.
//
// Each library has a thin adapter that picks the status code and the error
// text (cuda_status.h for CUDA and cuBLASLt, collective_nccl.cc for NCCL,
// agent/facts/gpu_facts.cc for NVML); the formatting is here, so every GPU
// error reads the same way:
//   "cudaMalloc(&a, bytes): out of memory (cuda error 2) [kernels/gemm.cc:88]"
// No CUDA or NVML types appear here: the GPU module and the fleetbench binary
// both link it (fleetbench_gpu_module_abi, built with or without CUDA).
//
// Codes are chosen on purpose (STYLE.md, "Errors"): a missing driver, device
// or library is FAILED_PRECONDITION (reported as skipped, with the reason);
// out of memory is RESOURCE_EXHAUSTED; anything else INTERNAL.
#ifndef FLEETBENCH_KERNELS_GPU_STATUS_H_
#define FLEETBENCH_KERNELS_GPU_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fleetbench::kernels {

// `library` names the error space ("cuda", "cublas", "nvml", "dlopen"),
// `raw_code` is the library's own number (0: none, e.g. dlopen, and then not
// printed), `text` its description, `expression` the call as written (or its
// name). An empty `file` leaves the location out.
absl::Status GpuCallStatus(absl::StatusCode code, absl::string_view library,
                           int raw_code, absl::string_view text,
                           absl::string_view expression, absl::string_view file,
                           int line);

// file:line without the directories above the repository's top folders, so
// messages do not leak the build machine's paths.
absl::string_view ShortSourcePath(absl::string_view file);

}  // namespace fleetbench::kernels

#endif  // FLEETBENCH_KERNELS_GPU_STATUS_H_
