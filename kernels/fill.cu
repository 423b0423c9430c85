#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/fill.h"

namespace fleetbench::kernels {
namespace {

__device__ double UniformMinusOneToOne(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return 2.0 * (static_cast<double>(z >> 11) * 0x1.0p-53) - 1.0;
}

template <typename T>
__device__ T Convert(double value) {
  return static_cast<T>(value);
}
template <>
__device__ __half Convert<__half>(double value) {
  return __double2half(value);
}
template <>
__device__ __nv_bfloat16 Convert<__nv_bfloat16>(double value) {
  return __double2bfloat16(value);
}
template <>
__device__ __nv_fp8_e4m3 Convert<__nv_fp8_e4m3>(double value) {
  return __nv_fp8_e4m3(static_cast<float>(value));
}

template <typename T>
__global__ void FillKernel(T* data, size_t count, uint64_t seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    data[i] = Convert<T>(UniformMinusOneToOne(seed, i));
  }
}

template <typename T>
cudaError_t Launch(void* data, size_t count, uint64_t seed,
                   cudaStream_t stream) {
  constexpr int kThreads = 256;
  // A grid-stride loop: enough blocks to fill the GPU, not one per element.
  const size_t wanted = (count + kThreads - 1) / kThreads;
  const unsigned blocks =
      static_cast<unsigned>(wanted < 65535 ? (wanted > 0 ? wanted : 1) : 65535);
  FillKernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<T*>(data), count,
                                                 seed);
  return cudaGetLastError();
}

}  // namespace

size_t FillTypeBytes(FillType type) {
  switch (type) {
    case FillType::kFp64: return 8;
    case FillType::kFp32: return 4;
    case FillType::kFp16: return 2;
    case FillType::kBf16: return 2;
    case FillType::kFp8E4M3: return 1;
  }
  return 0;
}

cudaError_t FillUniform(void* data, size_t count, FillType type, uint64_t seed,
                        cudaStream_t stream) {
  switch (type) {
    case FillType::kFp64: return Launch<double>(data, count, seed, stream);
    case FillType::kFp32: return Launch<float>(data, count, seed, stream);
    case FillType::kFp16: return Launch<__half>(data, count, seed, stream);
    case FillType::kBf16:
      return Launch<__nv_bfloat16>(data, count, seed, stream);
    case FillType::kFp8E4M3:
      return Launch<__nv_fp8_e4m3>(data, count, seed, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace fleetbench::kernels
