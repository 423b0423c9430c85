#include "kernels/device_patterns.h"

namespace fleetbench::kernels {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kMaxBlocks = 4096;

__device__ unsigned long long Mix(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__global__ void PatternKernel(float* data, size_t count, int rank) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    data[i] = static_cast<float>(rank + 1) * static_cast<float>(i % 13 + 1);
  }
}

__global__ void HashKernel(const unsigned char* data, size_t bytes,
                           unsigned long long* hash) {
  const size_t words = (bytes + 7) / 8;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  unsigned long long sum = 0;
  for (size_t w = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       w < words; w += stride) {
    unsigned long long word = 0;
    const size_t begin = w * 8;
    if (begin + 8 <= bytes) {
      // cudaMalloc'd buffers are 256-byte aligned.
      word = reinterpret_cast<const unsigned long long*>(data)[w];
    } else {
      for (size_t b = 0; begin + b < bytes; ++b) {
        word |= static_cast<unsigned long long>(data[begin + b]) << (8 * b);
      }
    }
    sum += Mix(word ^ Mix(w));
  }
  atomicAdd(hash, sum);
}

unsigned BlocksFor(size_t items) {
  const size_t blocks = (items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? (blocks > 0 ? blocks : 1)
                                                   : kMaxBlocks);
}

}  // namespace

cudaError_t FillCollectivePattern(float* data, size_t count, int rank,
                                  cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  PatternKernel<<<BlocksFor(count), kThreads, 0, stream>>>(data, count, rank);
  return cudaGetLastError();
}

cudaError_t HashDeviceBuffer(const void* data, size_t bytes,
                             unsigned long long* device_hash,
                             cudaStream_t stream) {
  if (cudaError_t e = cudaMemsetAsync(device_hash, 0, sizeof(*device_hash),
                                      stream);
      e != cudaSuccess) {
    return e;
  }
  if (bytes == 0) return cudaSuccess;
  HashKernel<<<BlocksFor((bytes + 7) / 8), kThreads, 0, stream>>>(
      static_cast<const unsigned char*>(data), bytes, device_hash);
  return cudaGetLastError();
}

}  // namespace fleetbench::kernels
