// kernels/device_patterns.h — two small device kernels the allreduce and
// stress measurements need: the known collective send pattern
// (collective_pattern.h) and an order-independent 64-bit hash of a buffer
// (to see whether a GEMM result changed).
// Asynchronous on `stream`; return the launch error.
#ifndef FLEETBENCH_KERNELS_DEVICE_PATTERNS_H_
#define FLEETBENCH_KERNELS_DEVICE_PATTERNS_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace fleetbench::kernels {

// data[i] = (rank+1)·((i mod 13)+1) as float.
cudaError_t FillCollectivePattern(float* data, size_t count, int rank,
                                  cudaStream_t stream);

// *device_hash = Σ_i mix(i, word_i) mod 2^64 over the buffer's 8-byte words
// (a short tail is zero-padded). Integer sums commute, so the result does
// not depend on the launch shape or on scheduling. device_hash must point
// to device memory; it is zeroed first.
cudaError_t HashDeviceBuffer(const void* data, size_t bytes,
                             unsigned long long* device_hash,
                             cudaStream_t stream);

}  // namespace fleetbench::kernels

#endif  // FLEETBENCH_KERNELS_DEVICE_PATTERNS_H_
