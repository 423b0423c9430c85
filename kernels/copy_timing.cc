#include "kernels/copy_timing.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "kernels/cuda_handles.h"
#include "kernels/cuda_status.h"

namespace fleetbench::kernels {

absl::Status TimeCopy(const FleetbenchGpuCopyArgs& args,
                      double* seconds_per_trial) {
  if (args.bytes == 0 || args.trials <= 0 || args.warmup_copies < 0 ||
      args.copies_per_trial <= 0 || args.kind < FLEETBENCH_GPU_COPY_H2D ||
      args.kind > FLEETBENCH_GPU_COPY_D2D) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "copy: bad arguments kind=%d bytes=%d trials=%d warmup=%d "
        "copies_per_trial=%d",
        args.kind, args.bytes, args.trials, args.warmup_copies,
        args.copies_per_trial));
  }
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaSetDevice(args.device));
  const size_t bytes = static_cast<size_t>(args.bytes);

  PinnedBuffer host;
  DeviceBuffer device_a, device_b;
  if (args.kind == FLEETBENCH_GPU_COPY_D2D) {
    if (absl::Status s = device_a.Allocate(bytes); !s.ok()) return s;
    if (absl::Status s = device_b.Allocate(bytes); !s.ok()) return s;
  } else {
    if (absl::Status s = host.Allocate(bytes); !s.ok()) return s;
    if (absl::Status s = device_a.Allocate(bytes); !s.ok()) return s;
    // Touch every host page before timing so first-use faults stay out.
    std::memset(host.get(), 0x5a, bytes);
  }
  Stream stream;
  if (absl::Status s = stream.Create(); !s.ok()) return s;
  FLEETBENCH_GPU_RETURN_IF_ERROR(
      cudaMemsetAsync(device_a.get(), 0x3c, bytes, stream.get()));

  void* destination = nullptr;
  const void* source = nullptr;
  cudaMemcpyKind kind = cudaMemcpyDefault;
  switch (args.kind) {
    case FLEETBENCH_GPU_COPY_H2D:
      destination = device_a.get();
      source = host.get();
      kind = cudaMemcpyHostToDevice;
      break;
    case FLEETBENCH_GPU_COPY_D2H:
      destination = host.get();
      source = device_a.get();
      kind = cudaMemcpyDeviceToHost;
      break;
    default:
      destination = device_b.get();
      source = device_a.get();
      kind = cudaMemcpyDeviceToDevice;
      break;
  }

  for (int i = 0; i < args.warmup_copies; ++i) {
    FLEETBENCH_GPU_RETURN_IF_ERROR(
        cudaMemcpyAsync(destination, source, bytes, kind, stream.get()));
  }
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaStreamSynchronize(stream.get()));

  Event start, stop;
  if (absl::Status s = start.Create(); !s.ok()) return s;
  if (absl::Status s = stop.Create(); !s.ok()) return s;
  for (int trial = 0; trial < args.trials; ++trial) {
    if (args.cancelled != nullptr &&
        args.cancelled(args.cancelled_context) != 0) {
      return absl::CancelledError("copy: cancelled");
    }
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventRecord(start.get(), stream.get()));
    for (int i = 0; i < args.copies_per_trial; ++i) {
      FLEETBENCH_GPU_RETURN_IF_ERROR(
          cudaMemcpyAsync(destination, source, bytes, kind, stream.get()));
    }
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventRecord(stop.get(), stream.get()));
    if (absl::Status s = ElapsedSeconds(start, stop, &seconds_per_trial[trial]);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace fleetbench::kernels
