// kernels/fill.h — fills device buffers with pseudo-random values on the
// device, so GEMM operands are not zeros (tensor cores draw less power, and
// so clock higher, on zero operands) without a host-side fill of gigabytes
// or a dependency on cuRAND.
//
// Values are uniform in [-1, 1) from splitmix64 of (seed, index):
// deterministic for a seed, independent of the launch shape. Asynchronous on
// `stream`; returns the launch error (cudaGetLastError).
#ifndef FLEETBENCH_KERNELS_FILL_H_
#define FLEETBENCH_KERNELS_FILL_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace fleetbench::kernels {

enum class FillType { kFp64, kFp32, kFp16, kBf16, kFp8E4M3 };

size_t FillTypeBytes(FillType type);

cudaError_t FillUniform(void* data, size_t count, FillType type, uint64_t seed,
                        cudaStream_t stream);

}  // namespace fleetbench::kernels

#endif  // FLEETBENCH_KERNELS_FILL_H_
