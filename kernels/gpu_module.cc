// kernels/gpu_module.cc — libfleetbench_gpu.so's C entry point: the
// FleetbenchGpuApi table (gpu_module_api.h). Every function turns its
// absl::Status into the ABI's code + message here, and nowhere else.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/collective_nccl.h"
#include "kernels/copy_timing.h"
#include "kernels/cuda_status.h"
#include "kernels/gemm_cublaslt.h"
#include "kernels/gpu_module_api.h"

namespace fleetbench::kernels {
namespace {

int Report(const absl::Status& status, FleetbenchGpuError* error) {
  if (status.ok()) return 0;
  if (error != nullptr) {
    std::snprintf(error->message, sizeof(error->message), "%s",
                  std::string(status.message()).c_str());
  }
  return static_cast<int>(status.code());
}

// cudaGetDeviceCount's answer when there is no driver at all
// ("insufficient driver") misleads; say which library is missing.
absl::Status ExplainNoDriver(absl::Status status) {
  void* libcuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (libcuda != nullptr) {
    dlclose(libcuda);
    return status;
  }
  const char* why = dlerror();
  return absl::Status(
      status.code(),
      absl::StrCat(status.message(), "; no NVIDIA driver: ",
                   why != nullptr ? why : "libcuda.so.1 cannot be loaded"));
}

absl::Status CountDevices(int* count) {
  *count = 0;
  const cudaError_t error = cudaGetDeviceCount(count);
  if (error != cudaSuccess) {
    *count = 0;
    return ExplainNoDriver(
        GpuResultStatus(error, "cudaGetDeviceCount", __FILE__, __LINE__));
  }
  if (*count == 0) {
    return absl::FailedPreconditionError("cudaGetDeviceCount: no CUDA device");
  }
  return absl::OkStatus();
}

int DeviceCount(int* count, FleetbenchGpuError* error) {
  return Report(CountDevices(count), error);
}

absl::Status ReadDeviceInfo(int device, FleetbenchGpuDeviceInfo* info) {
  *info = FleetbenchGpuDeviceInfo{};
  cudaDeviceProp props{};
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaGetDeviceProperties(&props, device));
  std::snprintf(info->name, sizeof(info->name), "%s", props.name);
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaDeviceGetPCIBusId(
      info->pci_bus_id, static_cast<int>(sizeof(info->pci_bus_id)), device));
  info->compute_major = props.major;
  info->compute_minor = props.minor;
  info->multiprocessors = props.multiProcessorCount;
  info->memory_bytes = props.totalGlobalMem;
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaRuntimeGetVersion(&info->runtime_version));
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaDriverGetVersion(&info->driver_version));
  return absl::OkStatus();
}

int DeviceInfo(int device, FleetbenchGpuDeviceInfo* info,
               FleetbenchGpuError* error) {
  return Report(ReadDeviceInfo(device, info), error);
}

int Gemm(const FleetbenchGpuGemmArgs* args, double* seconds_per_trial,
         FleetbenchGpuGemmResult* result, FleetbenchGpuError* error) {
  *result = FleetbenchGpuGemmResult{};
  return Report(TimeGemm(*args, seconds_per_trial, result), error);
}

int Copy(const FleetbenchGpuCopyArgs* args, double* seconds_per_trial,
         FleetbenchGpuError* error) {
  return Report(TimeCopy(*args, seconds_per_trial), error);
}

int Collective(const FleetbenchGpuCollectiveArgs* args,
               FleetbenchGpuCollectivePoint* points,
               FleetbenchGpuCollectiveResult* result,
               FleetbenchGpuError* error) {
  *result = FleetbenchGpuCollectiveResult{};
  return Report(RunCollective(*args, points, result), error);
}

int UniqueId(FleetbenchGpuNcclId* id, int* nccl_version,
             FleetbenchGpuError* error) {
  *nccl_version = 0;
  return Report(NcclUniqueId(id, nccl_version), error);
}

int GroupCollective(const FleetbenchGpuGroupCollectiveArgs* args,
                    FleetbenchGpuCollectivePoint* points,
                    FleetbenchGpuCollectiveResult* result,
                    FleetbenchGpuError* error) {
  *result = FleetbenchGpuCollectiveResult{};
  return Report(RunGroupCollective(*args, points, result), error);
}

int Stress(const FleetbenchGpuStressArgs* args,
           FleetbenchGpuStressBatch* batches,
           FleetbenchGpuStressResult* result, FleetbenchGpuError* error) {
  *result = FleetbenchGpuStressResult{};
  return Report(StressGemm(*args, batches, result), error);
}

#define FLEETBENCH_STRINGIFY_(x) #x
#define FLEETBENCH_STRINGIFY(x) FLEETBENCH_STRINGIFY_(x)

constexpr char kBuildInfo[] =
    "cuda runtime " FLEETBENCH_STRINGIFY(CUDART_VERSION) " (static), cublasLt "
    FLEETBENCH_STRINGIFY(CUBLAS_VER_MAJOR) "." FLEETBENCH_STRINGIFY(
        CUBLAS_VER_MINOR) "." FLEETBENCH_STRINGIFY(CUBLAS_VER_PATCH);

constexpr FleetbenchGpuApi kApi = {
    sizeof(FleetbenchGpuApi), kBuildInfo, &DeviceCount, &DeviceInfo, &Gemm,
    &Copy, &Collective, &Stress, &UniqueId, &GroupCollective,
};

}  // namespace
}  // namespace fleetbench::kernels

extern "C" __attribute__((visibility("default"))) const FleetbenchGpuApi*
fleetbench_gpu_api_v1(void) {
  return &fleetbench::kernels::kApi;
}
