// kernels/gemm_cublaslt.h — timed GEMM through cuBLASLt, the measuring half
// of the "gpu_gemm" plugin (agent/benchmarks/gpu/gpu_gemm.h does parameters,
// statistics and samples).
//
// What is timed: D = A·B (alpha 1, beta 0), column-major, on one device and
// one non-blocking stream; A and B hold uniform random values in [-1, 1)
// filled on the device. dtype -> cuBLASLt setup:
//   fp64: 64F data, CUBLAS_COMPUTE_64F                          layout NN
//   tf32: 32F data, CUBLAS_COMPUTE_32F_FAST_TF32                layout NN
//   fp16: 16F data, CUBLAS_COMPUTE_32F (fp32 accumulate)        layout NN
//   bf16: 16BF data, CUBLAS_COMPUTE_32F                         layout NN
//   fp8:  E4M3 A/B, 16BF C/D, CUBLAS_COMPUTE_32F, needs CC 8.9+ layout TN
// (FP8 GEMM in cuBLASLt requires A transposed and B not: "TN"; it is run
// with CUBLASLT_MATMUL_DESC_FAST_ACCUM on, as FP8 training recipes do.) The algorithm
// is cuBLASLt's first heuristic pick for the given workspace. Each trial is
// products_per_trial back-to-back cublasLtMatmul calls between two CUDA
// events on the same stream, so launch gaps are hidden behind the work.
//
// Thread safety: uses and changes the calling thread's current device.
#ifndef FLEETBENCH_KERNELS_GEMM_CUBLASLT_H_
#define FLEETBENCH_KERNELS_GEMM_CUBLASLT_H_

#include "absl/status/status.h"
#include "kernels/gpu_module_api.h"

namespace fleetbench::kernels {

// seconds_per_trial has args.trials entries. INVALID_ARGUMENT for bad args,
// FAILED_PRECONDITION for a dtype the device cannot do, RESOURCE_EXHAUSTED
// when the matrices and workspace do not fit in free device memory,
// CANCELLED when args.cancelled said so between trials.
absl::Status TimeGemm(const FleetbenchGpuGemmArgs& args,
                      double* seconds_per_trial,
                      FleetbenchGpuGemmResult* result);

// The "stress" plugin's sustained product (see FleetbenchGpuStressArgs):
// batches of back-to-back products until args.seconds of wall time pass,
// an event offset after each batch, and a device-side hash of D every
// args.check_every products (the hash time is inside the next batch's
// offset, a few ms per check). The reference hash is taken after the first
// product. Same errors as TimeGemm; fp8 is INVALID_ARGUMENT.
absl::Status StressGemm(const FleetbenchGpuStressArgs& args,
                        FleetbenchGpuStressBatch* batches,
                        FleetbenchGpuStressResult* result);

}  // namespace fleetbench::kernels

#endif  // FLEETBENCH_KERNELS_GEMM_CUBLASLT_H_
