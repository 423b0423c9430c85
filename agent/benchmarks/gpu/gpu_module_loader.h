// agent/benchmarks/gpu/gpu_module_loader.h — finds and dlopen()s
// libfleetbench_gpu.so (kernels/), and wraps its C ABI
// (kernels/gpu_module_api.h) in absl::Status-returning calls.
//
// Where it looks, in order: $FLEETBENCH_GPU_MODULE when set (a path to the
// file), then libfleetbench_gpu.so in the folder of the running executable
// (/proc/self/exe). The first candidate that loads wins.
//
// Errors: when no candidate loads (file absent, or a library it needs —
// libcublasLt.so.13 — absent) Load() returns FAILED_PRECONDITION listing each
// candidate with its dlerror() text; the GPU plugins return that from
// Probe(), which the runner reports as "skipped" with the reason. Codes from
// the module pass through unchanged (the module chooses them on purpose).
//
// Lifetime: the module is never dlclose()d: the CUDA runtime inside it
// registers exit-time handlers, and unloading it under them would crash at
// exit. dlopen() of an already-loaded path is cheap, so Load() keeps no
// cache.
//
// Thread safety: a GpuModule is immutable; the module's functions are not
// reentrant, and the runner runs one benchmark at a time.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_MODULE_LOADER_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_MODULE_LOADER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/gpu_module_api.h"

namespace fleetbench::gpu {

inline constexpr char kGpuModuleFileName[] = "libfleetbench_gpu.so";

struct GpuModuleOptions {
  // Paths tried in order.
  std::vector<std::string> candidates;
};
// $FLEETBENCH_GPU_MODULE (when set), then <executable's folder>/
// libfleetbench_gpu.so.
GpuModuleOptions DefaultGpuModuleOptions();

struct GpuDeviceInfo {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  uint64_t memory_bytes = 0;
  int runtime_version = 0;
  int driver_version = 0;
};

struct GemmTiming {
  std::vector<double> seconds_per_trial;
  int products_per_trial = 0;
  std::string layout;
  std::string algorithm;
};

// One NCCL sweep: a point per size (gpu_module_api.h).
struct CollectiveSweep {
  int ranks = 0;
  int nccl_version = 0;
  std::vector<FleetbenchGpuCollectivePoint> points;
};

// One rank's part of an NCCL communicator across nodes (gpu_module_api.h,
// group_collective).
struct GroupCollectiveRequest {
  std::vector<int> ops;         // FleetbenchGpuCollectiveOp
  std::vector<uint64_t> sizes;  // bytes
  int warmup_iters = 0;
  int iters = 1;
  int device = 0;
  int rank = 0;
  int nranks = 1;
  FleetbenchGpuNcclId id{};
  std::string nccl_debug_file;  // empty: NCCL's log left alone
};

// rank 0's id and the NCCL version that made it.
struct NcclId {
  FleetbenchGpuNcclId id{};
  int nccl_version = 0;
};

struct StressTiming {
  std::vector<FleetbenchGpuStressBatch> batches;
  uint64_t reference_checksum = 0;
  std::string algorithm;
};

// Polled between trials; true stops the measurement with CANCELLED.
using CancelledFn = std::function<bool()>;

class GpuModule {
 public:
  static absl::StatusOr<std::unique_ptr<GpuModule>> Load(
      const GpuModuleOptions& options);

  const std::string& path() const { return path_; }
  const std::string& build_info() const { return build_info_; }

  // At least one device, else FAILED_PRECONDITION with the CUDA reason.
  absl::StatusOr<int> DeviceCount() const;
  absl::StatusOr<GpuDeviceInfo> DeviceInfo(int device) const;
  // args.cancelled is filled from `cancelled`.
  absl::StatusOr<GemmTiming> Gemm(FleetbenchGpuGemmArgs args,
                                  const CancelledFn& cancelled) const;
  absl::StatusOr<std::vector<double>> Copy(FleetbenchGpuCopyArgs args,
                                           const CancelledFn& cancelled) const;
  // `sizes` empty: probe NCCL only (ranks and version filled).
  absl::StatusOr<CollectiveSweep> Collective(int op,
                                             const std::vector<uint64_t>& sizes,
                                             int warmup_iters, int iters,
                                             const CancelledFn& cancelled) const;
  // ncclGetUniqueId in this process (which must then stay in the
  // collective: NCCL's bootstrap root listens here).
  absl::StatusOr<NcclId> NcclUniqueId() const;
  // This rank's part of the group's communicator; points op-major
  // (ops[0]'s sizes first), seconds the slowest rank's.
  absl::StatusOr<CollectiveSweep> GroupCollective(
      const GroupCollectiveRequest& request,
      const CancelledFn& cancelled) const;
  // May run concurrently for different devices (see gpu_module_api.h).
  absl::StatusOr<StressTiming> StressGemm(FleetbenchGpuStressArgs args,
                                          const CancelledFn& cancelled) const;

 private:
  GpuModule(std::string path, const FleetbenchGpuApi* api);

  std::string path_;
  std::string build_info_;
  const FleetbenchGpuApi* api_;
};

// OK when the module's table has every entry this binary calls; else
// FAILED_PRECONDITION saying the module is too old (struct_size below
// FLEETBENCH_GPU_API_MIN_SIZE) or broken. Exposed for tests.
absl::Status CheckApiTable(const FleetbenchGpuApi& api);

// Turns a module return code and message into a Status (0 is OK; codes
// outside absl's range become INTERNAL). Exposed for tests.
absl::Status ModuleStatus(int code, const char* message);

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_MODULE_LOADER_H_
