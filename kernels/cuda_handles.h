// kernels/cuda_handles.h — owners for CUDA and cuBLASLt objects, so every
// early `return status` in the measuring code frees what it made.
// Destructors ignore errors: by then the status that matters is the one
// being returned. Not copyable; movable where useful.
#ifndef FLEETBENCH_KERNELS_CUDA_HANDLES_H_
#define FLEETBENCH_KERNELS_CUDA_HANDLES_H_

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "absl/status/status.h"
#include "kernels/cuda_status.h"

namespace fleetbench::kernels {

// Device memory from cudaMalloc.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  absl::Status Allocate(size_t bytes) {
    Free();
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaMalloc(&data_, bytes));
    bytes_ = bytes;
    return absl::OkStatus();
  }
  void Free() {
    if (data_ != nullptr) cudaFree(data_);
    data_ = nullptr;
    bytes_ = 0;
  }
  void* get() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Page-locked host memory from cudaMallocHost: what PCIe copies need to run
// at link speed (pageable memory goes through a staging buffer).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  absl::Status Allocate(size_t bytes) {
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaMallocHost(&data_, bytes));
    return absl::OkStatus();
  }
  void* get() const { return data_; }

 private:
  void* data_ = nullptr;
};

class Stream {
 public:
  Stream() = default;
  ~Stream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  absl::Status Create() {
    FLEETBENCH_GPU_RETURN_IF_ERROR(
        cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    return absl::OkStatus();
  }
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event() = default;
  ~Event() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  absl::Status Create() {
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventCreate(&event_));
    return absl::OkStatus();
  }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Seconds between two recorded events, after waiting for the second.
inline absl::Status ElapsedSeconds(const Event& start, const Event& stop,
                                   double* seconds) {
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventSynchronize(stop.get()));
  float ms = 0;
  FLEETBENCH_GPU_RETURN_IF_ERROR(
      cudaEventElapsedTime(&ms, start.get(), stop.get()));
  *seconds = static_cast<double>(ms) / 1e3;
  return absl::OkStatus();
}

// A cuBLASLt object with its destroy function: LtObject<cublasLtHandle_t,
// cublasLtDestroy>, and so on for descriptors, layouts and preferences.
template <typename T, cublasStatus_t (*Destroy)(T)>
class LtObject {
 public:
  LtObject() = default;
  ~LtObject() {
    if (object_ != nullptr) Destroy(object_);
  }
  LtObject(const LtObject&) = delete;
  LtObject& operator=(const LtObject&) = delete;
  T* out() { return &object_; }
  T get() const { return object_; }

 private:
  T object_ = nullptr;
};

using LtHandle = LtObject<cublasLtHandle_t, cublasLtDestroy>;
using LtMatmulDesc = LtObject<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using LtLayout = LtObject<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using LtPreference =
    LtObject<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

}  // namespace fleetbench::kernels

#endif  // FLEETBENCH_KERNELS_CUDA_HANDLES_H_
