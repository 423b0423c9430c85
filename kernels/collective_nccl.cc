#include "kernels/collective_nccl.h"

#include "absl/strings/str_cat.h"

#ifndef FLEETBENCH_WITH_NCCL

namespace fleetbench::kernels {

absl::Status RunCollective(const FleetbenchGpuCollectiveArgs&,
                           FleetbenchGpuCollectivePoint*,
                           FleetbenchGpuCollectiveResult*) {
  return absl::FailedPreconditionError(
      "this GPU module was built without NCCL (FLEETBENCH_WITH_NCCL=OFF or "
      "nccl.h not found)");
}

}  // namespace fleetbench::kernels

#else  // FLEETBENCH_WITH_NCCL

#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "kernels/collective_pattern.h"
#include "kernels/cuda_handles.h"
#include "kernels/cuda_status.h"
#include "kernels/device_patterns.h"
#include "kernels/gpu_status.h"
#include "kernels/nccl_status.h"

namespace fleetbench::kernels {

absl::Status GpuResultStatus(ncclResult_t result, const char* expression,
                             const char* file, int line) {
  if (result == ncclSuccess) return absl::OkStatus();
  absl::StatusCode code = absl::StatusCode::kInternal;
  switch (result) {
    case ncclInvalidArgument:
    case ncclInvalidUsage:
      code = absl::StatusCode::kInvalidArgument;
      break;
    case ncclSystemError:
    case ncclUnhandledCudaError:
      // No usable GPU/driver path, or a CUDA error inside NCCL.
      code = absl::StatusCode::kFailedPrecondition;
      break;
    case ncclRemoteError:
      // A peer went away or failed (across nodes).
      code = absl::StatusCode::kUnavailable;
      break;
    default:
      break;
  }
  return GpuCallStatus(code, "nccl", static_cast<int>(result),
                       ncclGetErrorString(result), expression, file, line);
}

namespace {

// Every rank's communicator, destroyed together.
class Communicators {
 public:
  ~Communicators() {
    for (ncclComm_t c : comms_) {
      if (c != nullptr) ncclCommDestroy(c);
    }
  }
  absl::Status Init(int ranks) {
    comms_.assign(static_cast<size_t>(ranks), nullptr);
    std::vector<int> devices(static_cast<size_t>(ranks));
    for (int i = 0; i < ranks; ++i) devices[static_cast<size_t>(i)] = i;
    FLEETBENCH_GPU_RETURN_IF_ERROR(
        ncclCommInitAll(comms_.data(), ranks, devices.data()));
    return absl::OkStatus();
  }
  ncclComm_t operator[](int rank) const {
    return comms_[static_cast<size_t>(rank)];
  }

 private:
  std::vector<ncclComm_t> comms_;
};

struct Rank {
  DeviceBuffer send, recv;
  Stream stream;
  Event start, stop;
};

bool Cancelled(const FleetbenchGpuCollectiveArgs& args) {
  return args.cancelled != nullptr &&
         args.cancelled(args.cancelled_context) != 0;
}

const char* OpName(int op) {
  switch (op) {
    case FLEETBENCH_GPU_ALLGATHER: return "allgather";
    case FLEETBENCH_GPU_REDUCESCATTER: return "reducescatter";
    default: return "allreduce";
  }
}

// Enqueues one operation on every rank, as one NCCL group.
absl::Status Launch(int op, const Communicators& comms,
                    std::vector<std::unique_ptr<Rank>>& ranks,
                    size_t send_count, size_t recv_count) {
  FLEETBENCH_GPU_RETURN_IF_ERROR(ncclGroupStart());
  for (size_t r = 0; r < ranks.size(); ++r) {
    Rank& rank = *ranks[r];
    const int i = static_cast<int>(r);
    ncclResult_t result = ncclSuccess;
    switch (op) {
      case FLEETBENCH_GPU_ALLGATHER:
        result = ncclAllGather(rank.send.get(), rank.recv.get(), send_count,
                               ncclFloat, comms[i], rank.stream.get());
        break;
      case FLEETBENCH_GPU_REDUCESCATTER:
        result = ncclReduceScatter(rank.send.get(), rank.recv.get(),
                                   recv_count, ncclFloat, ncclSum, comms[i],
                                   rank.stream.get());
        break;
      default:
        result = ncclAllReduce(rank.send.get(), rank.recv.get(), send_count,
                               ncclFloat, ncclSum, comms[i], rank.stream.get());
        break;
    }
    if (result != ncclSuccess) {
      ncclGroupEnd();
      return GpuResultStatus(result, OpName(op), __FILE__, __LINE__);
    }
  }
  FLEETBENCH_GPU_RETURN_IF_ERROR(ncclGroupEnd());
  return absl::OkStatus();
}

// Compares ~1024 evenly spaced receive elements of every rank with the
// expected values; counts into `point`.
absl::Status Verify(int op, std::vector<std::unique_ptr<Rank>>& ranks,
                    size_t send_count, size_t recv_count,
                    FleetbenchGpuCollectivePoint* point) {
  const int n = static_cast<int>(ranks.size());
  const size_t stride = std::max<size_t>(1, recv_count / 1024);
  const size_t rows = (recv_count + stride - 1) / stride;
  std::vector<float> sample(rows);
  for (int r = 0; r < n; ++r) {
    Rank& rank = *ranks[static_cast<size_t>(r)];
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaSetDevice(r));
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaStreamSynchronize(rank.stream.get()));
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaMemcpy2D(
        sample.data(), sizeof(float), rank.recv.get(), stride * sizeof(float),
        sizeof(float), rows, cudaMemcpyDeviceToHost));
    for (size_t row = 0; row < rows; ++row) {
      const uint64_t index = row * stride;
      const double expected = ExpectedAfter(op, n, r, send_count, index);
      ++point->checked;
      if (static_cast<double>(sample[row]) != expected) {
        if (point->mismatches == 0) {
          point->first_expected = expected;
          point->first_actual = sample[row];
        }
        ++point->mismatches;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunCollective(const FleetbenchGpuCollectiveArgs& args,
                           FleetbenchGpuCollectivePoint* points,
                           FleetbenchGpuCollectiveResult* result) {
  if (args.op < FLEETBENCH_GPU_ALLREDUCE ||
      args.op > FLEETBENCH_GPU_REDUCESCATTER || args.size_count < 0 ||
      (args.size_count > 0 && (args.sizes == nullptr || args.iters <= 0 ||
                               args.warmup_iters < 0))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "collective: bad arguments op=%d sizes=%d iters=%d warmup=%d", args.op,
        args.size_count, args.iters, args.warmup_iters));
  }
  int version = 0;
  FLEETBENCH_GPU_RETURN_IF_ERROR(ncclGetVersion(&version));
  result->nccl_version = version;
  int devices = 0;
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaGetDeviceCount(&devices));
  if (devices < 1) {
    return absl::FailedPreconditionError("collective: no CUDA device");
  }
  result->ranks = devices;
  Communicators comms;
  if (absl::Status s = comms.Init(devices); !s.ok()) return s;
  if (args.size_count == 0) return absl::OkStatus();

  const size_t n = static_cast<size_t>(devices);
  std::vector<std::unique_ptr<Rank>> ranks;
  for (int r = 0; r < devices; ++r) {
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaSetDevice(r));
    auto rank = std::make_unique<Rank>();
    if (absl::Status s = rank->stream.Create(); !s.ok()) return s;
    if (absl::Status s = rank->start.Create(); !s.ok()) return s;
    if (absl::Status s = rank->stop.Create(); !s.ok()) return s;
    ranks.push_back(std::move(rank));
  }

  for (int i = 0; i < args.size_count; ++i) {
    if (Cancelled(args)) return absl::CancelledError("collective: cancelled");
    FleetbenchGpuCollectivePoint& point = points[i];
    point = FleetbenchGpuCollectivePoint{};
    // Whole elements, divisible by the rank count (nccl-tests rounds the
    // same way).
    const size_t total = static_cast<size_t>(args.sizes[i]) / sizeof(float) /
                         n * n;
    if (total == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "collective: size ", args.sizes[i], " B is below one float per rank"));
    }
    point.bytes = total * sizeof(float);
    size_t send_count = total, recv_count = total;
    if (args.op == FLEETBENCH_GPU_ALLGATHER) send_count = total / n;
    if (args.op == FLEETBENCH_GPU_REDUCESCATTER) recv_count = total / n;

    for (int r = 0; r < devices; ++r) {
      Rank& rank = *ranks[static_cast<size_t>(r)];
      FLEETBENCH_GPU_RETURN_IF_ERROR(cudaSetDevice(r));
      // Buffers of the previous size are freed before the larger ones.
      rank.send.Free();
      rank.recv.Free();
      if (absl::Status s = rank.send.Allocate(send_count * sizeof(float));
          !s.ok()) {
        return s;
      }
      if (absl::Status s = rank.recv.Allocate(recv_count * sizeof(float));
          !s.ok()) {
        return s;
      }
      FLEETBENCH_GPU_RETURN_IF_ERROR(
          FillCollectivePattern(static_cast<float*>(rank.send.get()),
                                send_count, r, rank.stream.get()));
      FLEETBENCH_GPU_RETURN_IF_ERROR(cudaMemsetAsync(
          rank.recv.get(), 0, recv_count * sizeof(float), rank.stream.get()));
    }
    for (int w = 0; w < args.warmup_iters; ++w) {
      if (absl::Status s = Launch(args.op, comms, ranks, send_count, recv_count);
          !s.ok()) {
        return s;
      }
    }
    for (int r = 0; r < devices; ++r) {
      Rank& rank = *ranks[static_cast<size_t>(r)];
      FLEETBENCH_GPU_RETURN_IF_ERROR(cudaSetDevice(r));
      FLEETBENCH_GPU_RETURN_IF_ERROR(cudaStreamSynchronize(rank.stream.get()));
      FLEETBENCH_GPU_RETURN_IF_ERROR(
          cudaEventRecord(rank.start.get(), rank.stream.get()));
    }
    for (int it = 0; it < args.iters; ++it) {
      if (absl::Status s = Launch(args.op, comms, ranks, send_count, recv_count);
          !s.ok()) {
        return s;
      }
    }
    double slowest = 0;
    for (int r = 0; r < devices; ++r) {
      Rank& rank = *ranks[static_cast<size_t>(r)];
      FLEETBENCH_GPU_RETURN_IF_ERROR(cudaSetDevice(r));
      FLEETBENCH_GPU_RETURN_IF_ERROR(
          cudaEventRecord(rank.stop.get(), rank.stream.get()));
    }
    for (int r = 0; r < devices; ++r) {
      Rank& rank = *ranks[static_cast<size_t>(r)];
      FLEETBENCH_GPU_RETURN_IF_ERROR(cudaSetDevice(r));
      double seconds = 0;
      if (absl::Status s = ElapsedSeconds(rank.start, rank.stop, &seconds);
          !s.ok()) {
        return s;
      }
      slowest = std::max(slowest, seconds);
    }
    point.seconds = slowest / args.iters;
    if (absl::Status s =
            Verify(args.op, ranks, send_count, recv_count, &point);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace fleetbench::kernels

#endif  // FLEETBENCH_WITH_NCCL
