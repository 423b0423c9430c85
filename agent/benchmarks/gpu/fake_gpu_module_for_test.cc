// A stand-in for libfleetbench_gpu.so on a machine without a GPU, loaded
// through the real dlopen path (gpu_module_loader.h), so nccl_group_test
// can check the agent side of NCCL across nodes: who asks for the unique
// id, who waits for it, that every rank gets the same one, and that a
// cancel or the group's deadline ends the call with an abort. It measures
// nothing: its "collective" is a meeting of the ranks that called it with
// the same id, in this process (the test's members are threads).
//
// One device ("Fake GPU"). group_collective waits, polling cancelled()
// every millisecond, until nranks ranks came with its id; then every point
// gets bytes rounded as the real module does and 1 ns per byte. On cancel
// it counts an abort and returns CANCELLED. It writes a few NCCL INFO lines
// (the shapes of NCCL 2.28) to nccl_debug_file. fake_gpu_module_stats()
// (exported) tells the test what happened.
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "kernels/gpu_module_api.h"

namespace {

struct Stats {
  int unique_id_calls = 0;
  int group_calls = 0;
  int aborts = 0;
  int distinct_ids_seen = 0;
};

std::mutex mu;
std::map<std::string, int> arrived;  // id -> ranks that came
Stats stats;
int next_id = 1;

int Fail(FleetbenchGpuError* error, int code, const char* message) {
  std::snprintf(error->message, sizeof(error->message), "%s", message);
  return code;
}

int DeviceCount(int* count, FleetbenchGpuError*) {
  *count = 1;
  return 0;
}

int DeviceInfo(int device, FleetbenchGpuDeviceInfo* info,
               FleetbenchGpuError* error) {
  if (device != 0) return Fail(error, 3, "fake: one device");
  *info = FleetbenchGpuDeviceInfo{};
  std::snprintf(info->name, sizeof(info->name), "Fake GPU");
  std::snprintf(info->pci_bus_id, sizeof(info->pci_bus_id), "0000:00:00.0");
  info->compute_major = 9;
  info->runtime_version = 13000;
  info->driver_version = 13000;
  return 0;
}

int Unsupported(FleetbenchGpuError* error) {
  return Fail(error, 9, "fake module: not implemented");
}

int Gemm(const FleetbenchGpuGemmArgs*, double*, FleetbenchGpuGemmResult*,
         FleetbenchGpuError* error) {
  return Unsupported(error);
}
int Copy(const FleetbenchGpuCopyArgs*, double*, FleetbenchGpuError* error) {
  return Unsupported(error);
}
int Collective(const FleetbenchGpuCollectiveArgs*,
               FleetbenchGpuCollectivePoint*, FleetbenchGpuCollectiveResult*,
               FleetbenchGpuError* error) {
  return Unsupported(error);
}
int Stress(const FleetbenchGpuStressArgs*, FleetbenchGpuStressBatch*,
           FleetbenchGpuStressResult*, FleetbenchGpuError* error) {
  return Unsupported(error);
}

int UniqueId(FleetbenchGpuNcclId* id, int* version, FleetbenchGpuError*) {
  std::lock_guard<std::mutex> lock(mu);
  ++stats.unique_id_calls;
  *id = FleetbenchGpuNcclId{};
  // Every byte used, as a real id's are, and different per call.
  for (int i = 0; i < FLEETBENCH_GPU_NCCL_ID_BYTES; ++i) {
    id->bytes[i] = static_cast<char>((next_id * 31 + i * 7) & 0xff);
  }
  ++next_id;
  *version = 22809;
  return 0;
}

void WriteLog(const char* path, int rank) {
  if (path == nullptr || *path == '\0') return;
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) return;
  const char* head = "fakehost:100:101 [0] NCCL INFO ";
  std::fprintf(f, "%sNCCL version 2.28.9+cuda13.0\n", head);
  std::fprintf(f, "%sNET/Socket : Using [0]veth0:10.1.0.%d<0>\n", head,
               rank + 1);
  std::fprintf(f, "%sUsing network Socket\n", head);
  std::fprintf(f,
               "%sChannel 00/0 : %d[0] -> %d[0] [send] via NET/Socket/0\n",
               head, rank, rank + 1);
  std::fprintf(f,
               "%sChannel 00/0 : %d[0] -> %d[0] [receive] via NET/Socket/0\n",
               head, rank + 1, rank);
  std::fclose(f);
}

int GroupCollective(const FleetbenchGpuGroupCollectiveArgs* args,
                    FleetbenchGpuCollectivePoint* points,
                    FleetbenchGpuCollectiveResult* result,
                    FleetbenchGpuError* error) {
  const std::string id(args->id.bytes, sizeof(args->id.bytes));
  {
    std::lock_guard<std::mutex> lock(mu);
    ++stats.group_calls;
    if (arrived[id]++ == 0) ++stats.distinct_ids_seen;
  }
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (arrived[id] >= args->nranks) break;
    }
    if (args->cancelled != nullptr &&
        args->cancelled(args->cancelled_context) != 0) {
      std::lock_guard<std::mutex> lock(mu);
      ++stats.aborts;
      return Fail(error, 1, "fake nccl: cancelled; communicator aborted");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  result->ranks = args->nranks;
  result->nccl_version = 22809;
  const uint64_t n = static_cast<uint64_t>(args->nranks);
  for (int o = 0; o < args->op_count; ++o) {
    for (int i = 0; i < args->size_count; ++i) {
      FleetbenchGpuCollectivePoint& p = points[o * args->size_count + i];
      p = FleetbenchGpuCollectivePoint{};
      p.bytes = args->sizes[i] / 4 / n * n * 4;
      p.seconds = static_cast<double>(p.bytes) * 1e-9;
      p.checked = 1;
    }
  }
  WriteLog(args->nccl_debug_file, args->rank);
  return 0;
}

FleetbenchGpuApi MakeApi() {
  FleetbenchGpuApi api{};
  api.struct_size = sizeof(FleetbenchGpuApi);
  api.build_info = "fake module for tests";
  api.device_count = &DeviceCount;
  api.device_info = &DeviceInfo;
  api.gemm = &Gemm;
  api.copy = &Copy;
  api.collective = &Collective;
  api.stress_gemm = &Stress;
  api.nccl_unique_id = &UniqueId;
  api.group_collective = &GroupCollective;
  return api;
}

const FleetbenchGpuApi kApi = MakeApi();

}  // namespace

extern "C" __attribute__((visibility("default"))) const FleetbenchGpuApi*
fleetbench_gpu_api_v1(void) {
  return &kApi;
}

// unique_id calls, group calls, aborts, distinct ids; then resets them.
extern "C" __attribute__((visibility("default"))) void fake_gpu_module_stats(
    int* unique_id_calls, int* group_calls, int* aborts, int* distinct_ids) {
  std::lock_guard<std::mutex> lock(mu);
  *unique_id_calls = stats.unique_id_calls;
  *group_calls = stats.group_calls;
  *aborts = stats.aborts;
  *distinct_ids = stats.distinct_ids_seen;
  stats = Stats{};
  arrived.clear();
}
