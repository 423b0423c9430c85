// kernels/collective_nccl_group.cc — NCCL across nodes: one rank of a
// communicator whose other ranks are other processes (other agents), made
// from rank 0's unique id (collective_nccl.h, gpu_module_api.h).
//
// Why non-blocking everywhere: a member that never comes, a peer that dies
// or a controller that cancels must end this call, and a blocking NCCL
// communicator would sit in ncclCommInitRank or in a kernel waiting for a
// peer forever. So the communicator is made with blocking=0, every NCCL
// call that answers ncclInProgress is followed by polling
// ncclCommGetAsyncError, and the GPU's progress is watched with
// cudaEventQuery; between polls cancelled() is asked, and a cancel or an
// error aborts the communicator (ncclCommAbort), which also frees the
// GPU's kernels still waiting on a peer.
#include "kernels/collective_nccl.h"

#include "absl/strings/str_cat.h"

#ifndef FLEETBENCH_WITH_NCCL

namespace fleetbench::kernels {
namespace {

absl::Status NoNccl() {
  return absl::FailedPreconditionError(
      "this GPU module was built without NCCL (FLEETBENCH_WITH_NCCL=OFF or "
      "nccl.h not found)");
}

}  // namespace

absl::Status NcclUniqueId(FleetbenchGpuNcclId*, int*) { return NoNccl(); }

absl::Status RunGroupCollective(const FleetbenchGpuGroupCollectiveArgs&,
                                FleetbenchGpuCollectivePoint*,
                                FleetbenchGpuCollectiveResult*) {
  return NoNccl();
}

}  // namespace fleetbench::kernels

#else  // FLEETBENCH_WITH_NCCL

#include <dlfcn.h>
#include <nccl.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "kernels/collective_pattern.h"
#include "kernels/cuda_handles.h"
#include "kernels/cuda_status.h"
#include "kernels/device_patterns.h"
#include "kernels/gpu_status.h"
#include "kernels/nccl_status.h"

namespace fleetbench::kernels {
namespace {

static_assert(sizeof(ncclUniqueId) == FLEETBENCH_GPU_NCCL_ID_BYTES,
              "the ABI's id must hold an ncclUniqueId");

// How often a wait looks at NCCL's state, the GPU and cancelled().
constexpr std::chrono::milliseconds kPoll(2);
// Receive elements compared per size (evenly spaced), as the single-node
// path does.
constexpr size_t kCheckedPerSize = 1024;

bool Cancelled(const FleetbenchGpuGroupCollectiveArgs& args) {
  return args.cancelled != nullptr &&
         args.cancelled(args.cancelled_context) != 0;
}

absl::Status CancelledStatus(const char* where) {
  return absl::CancelledError(
      absl::StrCat("nccl group: cancelled ", where,
                   "; the communicator was aborted"));
}

// NCCL reads NCCL_DEBUG* once per process; for one call this points them
// at the caller's file and makes NCCL read them again, then puts back what
// was there (and makes NCCL read that), closing the file.
class NcclDebugCapture {
 public:
  explicit NcclDebugCapture(const char* path) {
    if (path == nullptr || *path == '\0') return;
    active_ = true;
    for (Saved& v : saved_) {
      const char* old = getenv(v.name);
      if (old != nullptr) v.value = old;
    }
    setenv("NCCL_DEBUG", "INFO", 1);
    setenv("NCCL_DEBUG_SUBSYS", "INIT,NET", 1);
    setenv("NCCL_DEBUG_FILE", path, 1);
    Reset();
  }
  ~NcclDebugCapture() {
    if (!active_) return;
    for (const Saved& v : saved_) {
      if (v.value.has_value()) {
        setenv(v.name, v.value->c_str(), 1);
      } else {
        unsetenv(v.name);
      }
    }
    Reset();
  }
  NcclDebugCapture(const NcclDebugCapture&) = delete;
  NcclDebugCapture& operator=(const NcclDebugCapture&) = delete;

 private:
  struct Saved {
    const char* name;
    std::optional<std::string> value;
  };
  // ncclResetDebugInit is exported but deprecated (and may go): looked up
  // at run time, so a libnccl without it still loads; then the log goes
  // where the process's first NCCL call sent it.
  static void Reset() {
    using ResetFn = void (*)();
    void* nccl = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
    if (nccl == nullptr) return;
    auto reset =
        reinterpret_cast<ResetFn>(dlsym(nccl, "ncclResetDebugInitInternal"));
    if (reset == nullptr) {
      reset = reinterpret_cast<ResetFn>(dlsym(nccl, "ncclResetDebugInit"));
    }
    if (reset != nullptr) reset();
    dlclose(nccl);
  }

  bool active_ = false;
  Saved saved_[3] = {{"NCCL_DEBUG", {}},
                     {"NCCL_DEBUG_SUBSYS", {}},
                     {"NCCL_DEBUG_FILE", {}}};
};

// This rank's communicator. Aborted when destroyed unless Finish() ended
// it cleanly: every early return aborts, which is what frees a GPU whose
// kernels wait on a peer that is gone.
class GroupComm {
 public:
  GroupComm() = default;
  ~GroupComm() {
    if (comm_ != nullptr) ncclCommAbort(comm_);
  }
  GroupComm(const GroupComm&) = delete;
  GroupComm& operator=(const GroupComm&) = delete;

  absl::Status Init(const FleetbenchGpuGroupCollectiveArgs& args) {
    ncclUniqueId id;
    std::memcpy(&id, args.id.bytes, sizeof(id));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const ncclResult_t result =
        ncclCommInitRankConfig(&comm_, args.nranks, id, args.rank, &config);
    if (result != ncclSuccess && result != ncclInProgress) {
      return GpuResultStatus(result, "ncclCommInitRankConfig", __FILE__,
                             __LINE__);
    }
    return Settle(args, "waiting for the group's members");
  }

  // After a call that may have answered ncclInProgress: waits until the
  // communicator is idle again, failed, or cancelled().
  absl::Status Settle(const FleetbenchGpuGroupCollectiveArgs& args,
                      const char* where) {
    while (true) {
      ncclResult_t state = ncclSuccess;
      FLEETBENCH_GPU_RETURN_IF_ERROR(ncclCommGetAsyncError(comm_, &state));
      if (state == ncclSuccess) return absl::OkStatus();
      if (state != ncclInProgress) return AsyncError(state, where);
      if (Cancelled(args)) return CancelledStatus(where);
      std::this_thread::sleep_for(kPoll);
    }
  }

  // Waits for `event` without blocking on the GPU: a peer that died leaves
  // the kernels waiting, and only an abort ends them.
  absl::Status WaitFor(const FleetbenchGpuGroupCollectiveArgs& args,
                       const Event& event, const char* where) {
    while (true) {
      const cudaError_t done = cudaEventQuery(event.get());
      if (done == cudaSuccess) return absl::OkStatus();
      if (done != cudaErrorNotReady) {
        return GpuResultStatus(done, "cudaEventQuery", __FILE__, __LINE__);
      }
      ncclResult_t state = ncclSuccess;
      FLEETBENCH_GPU_RETURN_IF_ERROR(ncclCommGetAsyncError(comm_, &state));
      if (state != ncclSuccess && state != ncclInProgress) {
        return AsyncError(state, where);
      }
      if (Cancelled(args)) return CancelledStatus(where);
      std::this_thread::sleep_for(kPoll);
    }
  }

  // A clean end: finalize (which flushes), wait, destroy.
  absl::Status Finish(const FleetbenchGpuGroupCollectiveArgs& args) {
    const ncclResult_t result = ncclCommFinalize(comm_);
    if (result != ncclSuccess && result != ncclInProgress) {
      return GpuResultStatus(result, "ncclCommFinalize", __FILE__, __LINE__);
    }
    if (absl::Status s = Settle(args, "finishing"); !s.ok()) return s;
    ncclComm_t comm = comm_;
    comm_ = nullptr;
    FLEETBENCH_GPU_RETURN_IF_ERROR(ncclCommDestroy(comm));
    return absl::OkStatus();
  }

  ncclComm_t get() const { return comm_; }

 private:
  absl::Status AsyncError(ncclResult_t state, const char* where) const {
    const char* last = ncclGetLastError(comm_);
    absl::Status status =
        GpuResultStatus(state, "ncclCommGetAsyncError", __FILE__, __LINE__);
    // Across nodes a system error is almost always the peer's socket.
    const absl::StatusCode code = state == ncclSystemError
                                      ? absl::StatusCode::kUnavailable
                                      : status.code();
    return absl::Status(
        code, absl::StrCat("nccl group: ", where, ": ", status.message(),
                           last != nullptr && *last != '\0'
                               ? absl::StrCat(" (", last, ")")
                               : std::string()));
  }

  ncclComm_t comm_ = nullptr;
};

// Every buffer the GPU works on. It outlives the communicator (declared
// before it): after a cancel the kernels on the stream still use them until
// the abort ends them, and freeing them first would block in cudaFree on
// those kernels.
struct Workspace {
  DeviceBuffer send, recv, times;
  PinnedBuffer host_times;
};

absl::Status Enqueue(GroupComm& comm,
                     const FleetbenchGpuGroupCollectiveArgs& args, int op,
                     const DeviceBuffer& send, const DeviceBuffer& recv,
                     size_t send_count, size_t recv_count,
                     cudaStream_t stream) {
  ncclResult_t result = ncclSuccess;
  switch (op) {
    case FLEETBENCH_GPU_ALLGATHER:
      result = ncclAllGather(send.get(), recv.get(), send_count, ncclFloat,
                             comm.get(), stream);
      break;
    case FLEETBENCH_GPU_REDUCESCATTER:
      result = ncclReduceScatter(send.get(), recv.get(), recv_count, ncclFloat,
                                 ncclSum, comm.get(), stream);
      break;
    default:
      result = ncclAllReduce(send.get(), recv.get(), send_count, ncclFloat,
                             ncclSum, comm.get(), stream);
      break;
  }
  if (result != ncclSuccess && result != ncclInProgress) {
    return GpuResultStatus(result, "nccl collective", __FILE__, __LINE__);
  }
  if (result == ncclInProgress) return comm.Settle(args, "enqueueing");
  return absl::OkStatus();
}

// This rank's receive buffer against the expected values (~1024 evenly
// spaced elements); the stream's work is known to be done.
absl::Status Verify(const FleetbenchGpuGroupCollectiveArgs& args, int op,
                    const DeviceBuffer& recv, size_t send_count,
                    size_t recv_count, FleetbenchGpuCollectivePoint* point) {
  const size_t stride = std::max<size_t>(1, recv_count / kCheckedPerSize);
  const size_t rows = (recv_count + stride - 1) / stride;
  std::vector<float> sample(rows);
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaMemcpy2D(
      sample.data(), sizeof(float), recv.get(), stride * sizeof(float),
      sizeof(float), rows, cudaMemcpyDeviceToHost));
  for (size_t row = 0; row < rows; ++row) {
    const double expected =
        ExpectedAfter(op, args.nranks, args.rank, send_count, row * stride);
    ++point->checked;
    if (static_cast<double>(sample[row]) != expected) {
      if (point->mismatches == 0) {
        point->first_expected = expected;
        point->first_actual = sample[row];
      }
      ++point->mismatches;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckArgs(const FleetbenchGpuGroupCollectiveArgs& args) {
  bool ops_ok = args.ops != nullptr && args.op_count > 0;
  for (int i = 0; ops_ok && i < args.op_count; ++i) {
    ops_ok = args.ops[i] >= FLEETBENCH_GPU_ALLREDUCE &&
             args.ops[i] <= FLEETBENCH_GPU_REDUCESCATTER;
  }
  if (!ops_ok || args.sizes == nullptr || args.size_count <= 0 ||
      args.iters <= 0 || args.warmup_iters < 0 || args.nranks < 1 ||
      args.rank < 0 || args.rank >= args.nranks || args.device < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "nccl group: bad arguments ops=%d sizes=%d iters=%d warmup=%d "
        "rank=%d nranks=%d device=%d",
        args.op_count, args.size_count, args.iters, args.warmup_iters,
        args.rank, args.nranks, args.device));
  }
  return absl::OkStatus();
}

// One size of one op: fills, warms up, times `iters` operations between
// two events, checks. point->seconds is this rank's time per operation.
absl::Status RunSize(GroupComm& comm,
                     const FleetbenchGpuGroupCollectiveArgs& args, int op,
                     uint64_t size, const Stream& stream, const Event& start,
                     const Event& stop, Workspace& work,
                     FleetbenchGpuCollectivePoint* point) {
  *point = FleetbenchGpuCollectivePoint{};
  const size_t n = static_cast<size_t>(args.nranks);
  const size_t total = static_cast<size_t>(size) / sizeof(float) / n * n;
  if (total == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "nccl group: size ", size, " B is below one float per rank"));
  }
  point->bytes = total * sizeof(float);
  size_t send_count = total, recv_count = total;
  if (op == FLEETBENCH_GPU_ALLGATHER) send_count = total / n;
  if (op == FLEETBENCH_GPU_REDUCESCATTER) recv_count = total / n;
  DeviceBuffer& send = work.send;
  DeviceBuffer& recv = work.recv;
  // The previous size's buffers are idle here (its stop event completed).
  send.Free();
  recv.Free();
  if (absl::Status s = send.Allocate(send_count * sizeof(float)); !s.ok()) {
    return s;
  }
  if (absl::Status s = recv.Allocate(recv_count * sizeof(float)); !s.ok()) {
    return s;
  }
  FLEETBENCH_GPU_RETURN_IF_ERROR(FillCollectivePattern(
      static_cast<float*>(send.get()), send_count, args.rank, stream.get()));
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaMemsetAsync(
      recv.get(), 0, recv_count * sizeof(float), stream.get()));
  for (int w = 0; w < args.warmup_iters; ++w) {
    if (Cancelled(args)) return CancelledStatus("warming up");
    if (absl::Status s = Enqueue(comm, args, op, send, recv, send_count,
                                 recv_count, stream.get());
        !s.ok()) {
      return s;
    }
  }
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventRecord(start.get(), stream.get()));
  // The warm-up must be over before the timed part starts on every rank:
  // waiting here (without blocking) keeps a slow peer's warm-up out of this
  // rank's time.
  if (absl::Status s = comm.WaitFor(args, start, "warming up"); !s.ok()) {
    return s;
  }
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventRecord(start.get(), stream.get()));
  for (int it = 0; it < args.iters; ++it) {
    if (Cancelled(args)) return CancelledStatus("timing");
    if (absl::Status s = Enqueue(comm, args, op, send, recv, send_count,
                                 recv_count, stream.get());
        !s.ok()) {
      return s;
    }
  }
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventRecord(stop.get(), stream.get()));
  if (absl::Status s = comm.WaitFor(args, stop, "timing"); !s.ok()) return s;
  float ms = 0;
  FLEETBENCH_GPU_RETURN_IF_ERROR(
      cudaEventElapsedTime(&ms, start.get(), stop.get()));
  point->seconds = static_cast<double>(ms) / 1e3 / args.iters;
  return Verify(args, op, recv, send_count, recv_count, point);
}

// Every point's seconds become the slowest rank's: one max all-reduce of
// the times over the same communicator.
absl::Status SlowestRank(GroupComm& comm,
                         const FleetbenchGpuGroupCollectiveArgs& args,
                         const Stream& stream, const Event& done,
                         Workspace& work, FleetbenchGpuCollectivePoint* points,
                         size_t count) {
  // Pinned host memory: a copy from pageable memory would block this thread
  // until the stream reached it, i.e. on a peer.
  PinnedBuffer& host = work.host_times;
  if (absl::Status s = host.Allocate(count * sizeof(double)); !s.ok()) {
    return s;
  }
  double* seconds = static_cast<double*>(host.get());
  for (size_t i = 0; i < count; ++i) seconds[i] = points[i].seconds;
  DeviceBuffer& times = work.times;
  if (absl::Status s = times.Allocate(count * sizeof(double)); !s.ok()) {
    return s;
  }
  FLEETBENCH_GPU_RETURN_IF_ERROR(
      cudaMemcpyAsync(times.get(), seconds, count * sizeof(double),
                      cudaMemcpyHostToDevice, stream.get()));
  const ncclResult_t result =
      ncclAllReduce(times.get(), times.get(), count, ncclDouble, ncclMax,
                    comm.get(), stream.get());
  if (result != ncclSuccess && result != ncclInProgress) {
    return GpuResultStatus(result, "ncclAllReduce(max of times)", __FILE__,
                           __LINE__);
  }
  if (result == ncclInProgress) {
    if (absl::Status s = comm.Settle(args, "gathering times"); !s.ok()) {
      return s;
    }
  }
  FLEETBENCH_GPU_RETURN_IF_ERROR(
      cudaMemcpyAsync(seconds, times.get(), count * sizeof(double),
                      cudaMemcpyDeviceToHost, stream.get()));
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventRecord(done.get(), stream.get()));
  if (absl::Status s = comm.WaitFor(args, done, "gathering times"); !s.ok()) {
    return s;
  }
  for (size_t i = 0; i < count; ++i) points[i].seconds = seconds[i];
  return absl::OkStatus();
}

}  // namespace

absl::Status NcclUniqueId(FleetbenchGpuNcclId* id, int* nccl_version) {
  *id = FleetbenchGpuNcclId{};
  FLEETBENCH_GPU_RETURN_IF_ERROR(ncclGetVersion(nccl_version));
  ncclUniqueId unique;
  FLEETBENCH_GPU_RETURN_IF_ERROR(ncclGetUniqueId(&unique));
  std::memcpy(id->bytes, &unique, sizeof(unique));
  return absl::OkStatus();
}

absl::Status RunGroupCollective(const FleetbenchGpuGroupCollectiveArgs& args,
                                FleetbenchGpuCollectivePoint* points,
                                FleetbenchGpuCollectiveResult* result) {
  if (absl::Status s = CheckArgs(args); !s.ok()) return s;
  int version = 0;
  FLEETBENCH_GPU_RETURN_IF_ERROR(ncclGetVersion(&version));
  result->nccl_version = version;
  result->ranks = args.nranks;
  int devices = 0;
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaGetDeviceCount(&devices));
  if (args.device >= devices) {
    return absl::FailedPreconditionError(absl::StrCat(
        "nccl group: no CUDA device ", args.device, " (", devices, " visible)"));
  }
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaSetDevice(args.device));
  // Declared first so that it is restored last, after the abort or destroy
  // has logged.
  NcclDebugCapture capture(args.nccl_debug_file);
  // The stream, events and buffers outlive the communicator's abort
  // (declared before it): an abort ends kernels still queued on the stream.
  Workspace work;
  Stream stream;
  Event start, stop;
  if (absl::Status s = stream.Create(); !s.ok()) return s;
  if (absl::Status s = start.Create(); !s.ok()) return s;
  if (absl::Status s = stop.Create(); !s.ok()) return s;
  GroupComm comm;
  if (absl::Status s = comm.Init(args); !s.ok()) return s;

  const size_t count =
      static_cast<size_t>(args.op_count) * static_cast<size_t>(args.size_count);
  for (int o = 0; o < args.op_count; ++o) {
    for (int i = 0; i < args.size_count; ++i) {
      FleetbenchGpuCollectivePoint* point =
          &points[static_cast<size_t>(o) * args.size_count + i];
      if (absl::Status s = RunSize(comm, args, args.ops[o], args.sizes[i],
                                   stream, start, stop, work, point);
          !s.ok()) {
        return s;
      }
    }
  }
  if (absl::Status s =
          SlowestRank(comm, args, stream, stop, work, points, count);
      !s.ok()) {
    return s;
  }
  return comm.Finish(args);
}

}  // namespace fleetbench::kernels

#endif  // FLEETBENCH_WITH_NCCL
