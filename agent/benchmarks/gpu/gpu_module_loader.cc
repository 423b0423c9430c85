#include "agent/benchmarks/gpu/gpu_module_loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/gpu_status.h"

namespace fleetbench::gpu {
namespace {

std::string ExecutableFolder() {
  char buffer[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0) return "";
  const std::string path(buffer, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

int CallCancelled(void* context) {
  const CancelledFn* cancelled = static_cast<const CancelledFn*>(context);
  return (*cancelled && (*cancelled)()) ? 1 : 0;
}

}  // namespace

absl::Status CheckApiTable(const FleetbenchGpuApi& api) {
  if (api.struct_size < FLEETBENCH_GPU_API_MIN_SIZE) {
    return absl::FailedPreconditionError(absl::StrCat(
        "GPU module too old: its function table is ", api.struct_size,
        " bytes, this fleetbench needs at least ", FLEETBENCH_GPU_API_MIN_SIZE,
        " (a module from before NCCL across nodes); install "
        "the ", kGpuModuleFileName, " built with this fleetbench"));
  }
  if (api.device_count == nullptr || api.device_info == nullptr ||
      api.gemm == nullptr || api.copy == nullptr || api.collective == nullptr ||
      api.stress_gemm == nullptr || api.nccl_unique_id == nullptr ||
      api.group_collective == nullptr) {
    return absl::FailedPreconditionError(
        "GPU module's function table has a null entry");
  }
  return absl::OkStatus();
}

absl::Status ModuleStatus(int code, const char* message) {
  if (code == 0) return absl::OkStatus();
  absl::StatusCode status_code = static_cast<absl::StatusCode>(code);
  if (code < 0 || code > static_cast<int>(absl::StatusCode::kUnauthenticated)) {
    status_code = absl::StatusCode::kInternal;
  }
  return absl::Status(status_code,
                      message != nullptr && *message != '\0'
                          ? message
                          : absl::StrCat("GPU module call failed with code ",
                                         code));
}

GpuModuleOptions DefaultGpuModuleOptions() {
  GpuModuleOptions options;
  if (const char* path = std::getenv("FLEETBENCH_GPU_MODULE");
      path != nullptr && *path != '\0') {
    options.candidates.push_back(path);
  }
  if (const std::string folder = ExecutableFolder(); !folder.empty()) {
    options.candidates.push_back(absl::StrCat(folder, "/", kGpuModuleFileName));
  }
  return options;
}

absl::StatusOr<std::unique_ptr<GpuModule>> GpuModule::Load(
    const GpuModuleOptions& options) {
  std::vector<std::string> failures;
  for (const std::string& candidate : options.candidates) {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      failures.push_back(why != nullptr ? why : candidate + ": dlopen failed");
      continue;
    }
    auto entry = reinterpret_cast<FleetbenchGpuApiV1Fn>(
        dlsym(handle, FLEETBENCH_GPU_API_SYMBOL));
    const FleetbenchGpuApi* api = entry != nullptr ? entry() : nullptr;
    if (api == nullptr) {
      failures.push_back(absl::StrCat(candidate,
                                      ": not a fleetbench GPU module of this version (",
                                      FLEETBENCH_GPU_API_SYMBOL, " missing)"));
      continue;  // left loaded: see "Lifetime" in the header
    }
    if (absl::Status s = CheckApiTable(*api); !s.ok()) {
      failures.push_back(absl::StrCat(candidate, ": ", s.message()));
      continue;
    }
    return std::unique_ptr<GpuModule>(new GpuModule(candidate, api));
  }
  if (options.candidates.empty()) {
    failures.push_back("no place to look for it");
  }
  return kernels::GpuCallStatus(
      absl::StatusCode::kFailedPrecondition, "dlopen", 0,
      absl::StrJoin(failures, "; "),
      absl::StrCat("loading the GPU module ", kGpuModuleFileName), "", 0);
}

GpuModule::GpuModule(std::string path, const FleetbenchGpuApi* api)
    : path_(std::move(path)),
      build_info_(api->build_info != nullptr ? api->build_info : ""),
      api_(api) {}

absl::StatusOr<int> GpuModule::DeviceCount() const {
  int count = 0;
  FleetbenchGpuError error{};
  if (absl::Status s =
          ModuleStatus(api_->device_count(&count, &error), error.message);
      !s.ok()) {
    return s;
  }
  if (count <= 0) {
    return absl::FailedPreconditionError("no CUDA device visible");
  }
  return count;
}

absl::StatusOr<GpuDeviceInfo> GpuModule::DeviceInfo(int device) const {
  FleetbenchGpuDeviceInfo raw{};
  FleetbenchGpuError error{};
  if (absl::Status s =
          ModuleStatus(api_->device_info(device, &raw, &error), error.message);
      !s.ok()) {
    return s;
  }
  raw.name[sizeof(raw.name) - 1] = '\0';
  raw.pci_bus_id[sizeof(raw.pci_bus_id) - 1] = '\0';
  GpuDeviceInfo info;
  info.index = device;
  info.name = raw.name;
  info.pci_bus_id = raw.pci_bus_id;
  info.compute_major = raw.compute_major;
  info.compute_minor = raw.compute_minor;
  info.multiprocessors = raw.multiprocessors;
  info.memory_bytes = raw.memory_bytes;
  info.runtime_version = raw.runtime_version;
  info.driver_version = raw.driver_version;
  return info;
}

absl::StatusOr<GemmTiming> GpuModule::Gemm(FleetbenchGpuGemmArgs args,
                                           const CancelledFn& cancelled) const {
  if (args.trials <= 0) {
    return absl::InvalidArgumentError("gpu gemm: trials must be positive");
  }
  args.cancelled = &CallCancelled;
  args.cancelled_context = const_cast<CancelledFn*>(&cancelled);
  GemmTiming timing;
  timing.seconds_per_trial.assign(static_cast<size_t>(args.trials), 0.0);
  FleetbenchGpuGemmResult result{};
  FleetbenchGpuError error{};
  if (absl::Status s = ModuleStatus(
          api_->gemm(&args, timing.seconds_per_trial.data(), &result, &error),
          error.message);
      !s.ok()) {
    return s;
  }
  result.layout[sizeof(result.layout) - 1] = '\0';
  result.algorithm[sizeof(result.algorithm) - 1] = '\0';
  timing.products_per_trial = result.products_per_trial;
  timing.layout = result.layout;
  timing.algorithm = result.algorithm;
  return timing;
}

absl::StatusOr<std::vector<double>> GpuModule::Copy(
    FleetbenchGpuCopyArgs args, const CancelledFn& cancelled) const {
  if (args.trials <= 0) {
    return absl::InvalidArgumentError("gpu copy: trials must be positive");
  }
  args.cancelled = &CallCancelled;
  args.cancelled_context = const_cast<CancelledFn*>(&cancelled);
  std::vector<double> seconds(static_cast<size_t>(args.trials), 0.0);
  FleetbenchGpuError error{};
  if (absl::Status s = ModuleStatus(
          api_->copy(&args, seconds.data(), &error), error.message);
      !s.ok()) {
    return s;
  }
  return seconds;
}

}  // namespace fleetbench::gpu

namespace fleetbench::gpu {

absl::StatusOr<CollectiveSweep> GpuModule::Collective(
    int op, const std::vector<uint64_t>& sizes, int warmup_iters, int iters,
    const CancelledFn& cancelled) const {
  FleetbenchGpuCollectiveArgs args{};
  args.op = op;
  args.sizes = sizes.empty() ? nullptr : sizes.data();
  args.size_count = static_cast<int>(sizes.size());
  args.warmup_iters = warmup_iters;
  args.iters = iters;
  args.cancelled = &CallCancelled;
  args.cancelled_context = const_cast<CancelledFn*>(&cancelled);
  CollectiveSweep sweep;
  sweep.points.assign(sizes.size(), FleetbenchGpuCollectivePoint{});
  FleetbenchGpuCollectiveResult result{};
  FleetbenchGpuError error{};
  if (absl::Status s = ModuleStatus(
          api_->collective(&args, sweep.points.data(), &result, &error),
          error.message);
      !s.ok()) {
    return s;
  }
  sweep.ranks = result.ranks;
  sweep.nccl_version = result.nccl_version;
  return sweep;
}

absl::StatusOr<NcclId> GpuModule::NcclUniqueId() const {
  NcclId id;
  FleetbenchGpuError error{};
  if (absl::Status s = ModuleStatus(
          api_->nccl_unique_id(&id.id, &id.nccl_version, &error),
          error.message);
      !s.ok()) {
    return s;
  }
  return id;
}

absl::StatusOr<CollectiveSweep> GpuModule::GroupCollective(
    const GroupCollectiveRequest& request,
    const CancelledFn& cancelled) const {
  if (request.ops.empty() || request.sizes.empty()) {
    return absl::InvalidArgumentError(
        "nccl group: at least one op and one size");
  }
  FleetbenchGpuGroupCollectiveArgs args{};
  args.ops = request.ops.data();
  args.op_count = static_cast<int>(request.ops.size());
  args.sizes = request.sizes.data();
  args.size_count = static_cast<int>(request.sizes.size());
  args.warmup_iters = request.warmup_iters;
  args.iters = request.iters;
  args.device = request.device;
  args.rank = request.rank;
  args.nranks = request.nranks;
  args.id = request.id;
  args.nccl_debug_file = request.nccl_debug_file.empty()
                             ? nullptr
                             : request.nccl_debug_file.c_str();
  args.cancelled = &CallCancelled;
  args.cancelled_context = const_cast<CancelledFn*>(&cancelled);
  CollectiveSweep sweep;
  sweep.points.assign(request.ops.size() * request.sizes.size(),
                      FleetbenchGpuCollectivePoint{});
  FleetbenchGpuCollectiveResult result{};
  FleetbenchGpuError error{};
  if (absl::Status s = ModuleStatus(
          api_->group_collective(&args, sweep.points.data(), &result, &error),
          error.message);
      !s.ok()) {
    return s;
  }
  sweep.ranks = result.ranks;
  sweep.nccl_version = result.nccl_version;
  return sweep;
}

absl::StatusOr<StressTiming> GpuModule::StressGemm(
    FleetbenchGpuStressArgs args, const CancelledFn& cancelled) const {
  if (args.max_batches <= 0) {
    return absl::InvalidArgumentError("gpu stress: max_batches must be positive");
  }
  args.cancelled = &CallCancelled;
  args.cancelled_context = const_cast<CancelledFn*>(&cancelled);
  std::vector<FleetbenchGpuStressBatch> batches(
      static_cast<size_t>(args.max_batches), FleetbenchGpuStressBatch{});
  FleetbenchGpuStressResult result{};
  FleetbenchGpuError error{};
  if (absl::Status s = ModuleStatus(
          api_->stress_gemm(&args, batches.data(), &result, &error),
          error.message);
      !s.ok()) {
    return s;
  }
  result.algorithm[sizeof(result.algorithm) - 1] = '\0';
  StressTiming timing;
  const int used = std::clamp(result.batches, 0, args.max_batches);
  timing.batches.assign(batches.begin(), batches.begin() + used);
  timing.reference_checksum = result.reference_checksum;
  timing.algorithm = result.algorithm;
  return timing;
}

}  // namespace fleetbench::gpu
