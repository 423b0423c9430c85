// A stand-in for a libfleetbench_gpu.so built before the table grew
// (collective, stress_gemm): its struct_size covers only the first four
// functions. gpu_loader_test checks that the loader refuses it with a
// reason instead of calling past the end of its table.
#include <cstddef>

#include "kernels/gpu_module_api.h"

namespace {

int NoDevices(int* count, FleetbenchGpuError*) {
  *count = 0;
  return 9;
}

FleetbenchGpuApi MakeOldApi() {
  FleetbenchGpuApi api{};
  api.struct_size = offsetof(FleetbenchGpuApi, collective);
  api.build_info = "old module for tests";
  api.device_count = &NoDevices;
  return api;
}

const FleetbenchGpuApi kOldApi = MakeOldApi();

}  // namespace

extern "C" __attribute__((visibility("default"))) const FleetbenchGpuApi*
fleetbench_gpu_api_v1(void) {
  return &kOldApi;
}
