#include "kernels/gemm_cublaslt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kernels/cuda_handles.h"
#include "kernels/cuda_status.h"
#include "kernels/device_patterns.h"
#include "kernels/fill.h"

namespace fleetbench::kernels {
namespace {

// How one dtype maps onto cuBLASLt.
struct GemmSetup {
  const char* name;
  cudaDataType_t ab_type;
  cudaDataType_t cd_type;
  FillType fill;
  cublasComputeType_t compute;
  cudaDataType_t scale_type;
  bool transpose_a;  // TN instead of NN
  int min_compute_capability;  // major*10 + minor
};

absl::StatusOr<GemmSetup> SetupFor(int dtype) {
  switch (dtype) {
    case FLEETBENCH_GPU_FP64:
      return GemmSetup{"fp64", CUDA_R_64F, CUDA_R_64F, FillType::kFp64,
                       CUBLAS_COMPUTE_64F, CUDA_R_64F, false, 0};
    case FLEETBENCH_GPU_TF32:
      return GemmSetup{"tf32", CUDA_R_32F, CUDA_R_32F, FillType::kFp32,
                       CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, false, 80};
    case FLEETBENCH_GPU_FP16:
      return GemmSetup{"fp16", CUDA_R_16F, CUDA_R_16F, FillType::kFp16,
                       CUBLAS_COMPUTE_32F, CUDA_R_32F, false, 0};
    case FLEETBENCH_GPU_BF16:
      return GemmSetup{"bf16", CUDA_R_16BF, CUDA_R_16BF, FillType::kBf16,
                       CUBLAS_COMPUTE_32F, CUDA_R_32F, false, 80};
    case FLEETBENCH_GPU_FP8:
      return GemmSetup{"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, FillType::kFp8E4M3,
                       CUBLAS_COMPUTE_32F, CUDA_R_32F, true, 89};
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("gemm: unknown dtype number ", dtype));
  }
}

size_t BytesOf(cudaDataType_t type) {
  switch (type) {
    case CUDA_R_64F: return 8;
    case CUDA_R_32F: return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF: return 2;
    default: return 1;  // CUDA_R_8F_E4M3
  }
}

absl::Status CheckArgs(const FleetbenchGpuGemmArgs& args) {
  if (args.m <= 0 || args.n <= 0 || args.k <= 0 || args.trials <= 0 ||
      args.warmup_products < 0 || args.products_per_trial < 0 ||
      (args.products_per_trial == 0 && !(args.target_trial_seconds > 0))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "gemm: bad arguments m=%d n=%d k=%d trials=%d warmup=%d "
        "products_per_trial=%d target_trial_seconds=%g",
        args.m, args.n, args.k, args.trials, args.warmup_products,
        args.products_per_trial, args.target_trial_seconds));
  }
  return absl::OkStatus();
}

bool Cancelled(const FleetbenchGpuGemmArgs& args) {
  return args.cancelled != nullptr &&
         args.cancelled(args.cancelled_context) != 0;
}

std::string DescribeAlgorithm(const cublasLtMatmulHeuristicResult_t& pick) {
  auto attribute = [&pick](cublasLtMatmulAlgoConfigAttributes_t which) {
    int value = -1;
    size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&pick.algo, which, &value,
                                             sizeof(value), &written) !=
        CUBLAS_STATUS_SUCCESS) {
      return -1;
    }
    return value;
  };
  return absl::StrFormat(
      "cublasLt algo %d tile %d splitk %d stages %d, waves %.2f, workspace %d B",
      attribute(CUBLASLT_ALGO_CONFIG_ID), attribute(CUBLASLT_ALGO_CONFIG_TILE_ID),
      attribute(CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
      attribute(CUBLASLT_ALGO_CONFIG_STAGES_ID), pick.wavesCount,
      static_cast<int64_t>(pick.workspaceSize));
}

// Everything one repeated product needs, owned together (PrepareGemm).
struct GemmShape {
  int device;
  int dtype;
  int64_t m, n, k;
  uint64_t workspace_bytes;
};

struct GemmPlan {
  GemmSetup setup{};
  cudaDeviceProp props{};
  DeviceBuffer a, b, d, workspace;
  Stream stream;
  LtHandle handle;
  LtMatmulDesc desc;
  LtLayout layout_a, layout_b, layout_d;
  LtPreference preference;
  cublasLtMatmulHeuristicResult_t pick{};
  uint64_t workspace_bytes = 0;
  size_t d_bytes = 0;
  double alpha64 = 1.0, beta64 = 0.0;
  float alpha32 = 1.0f, beta32 = 0.0f;

  // Enqueues D = A·B on the stream.
  cublasStatus_t Product();
};

// Checks the device can do the dtype, that everything fits, allocates and
// fills A and B, and picks cuBLASLt's algorithm.
absl::Status PrepareGemm(const GemmShape& args, GemmPlan* plan) {
  absl::StatusOr<GemmSetup> setup_or = SetupFor(args.dtype);
  if (!setup_or.ok()) return setup_or.status();
  plan->setup = *setup_or;
  const GemmSetup& setup = plan->setup;
  cudaDeviceProp& props = plan->props;

  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaSetDevice(args.device));
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaGetDeviceProperties(&props, args.device));
  const int capability = props.major * 10 + props.minor;
  if (capability < setup.min_compute_capability) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "gemm: %s needs compute capability %d.%d or later; device %d (%s) is "
        "%d.%d",
        setup.name, setup.min_compute_capability / 10,
        setup.min_compute_capability % 10, args.device, props.name,
        props.major, props.minor));
  }

  const size_t m = static_cast<size_t>(args.m);
  const size_t n = static_cast<size_t>(args.n);
  const size_t k = static_cast<size_t>(args.k);
  const size_t a_bytes = m * k * BytesOf(setup.ab_type);
  const size_t b_bytes = k * n * BytesOf(setup.ab_type);
  const size_t d_bytes = m * n * BytesOf(setup.cd_type);
  const size_t needed = a_bytes + b_bytes + d_bytes + args.workspace_bytes;
  size_t free_bytes = 0, total_bytes = 0;
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (needed > free_bytes) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "gemm: %s %dx%dx%d needs %.2f GiB of device memory; device %d has "
        "%.2f GiB free of %.2f GiB; choose a smaller size",
        setup.name, args.m, args.n, args.k, needed / 1073741824.0, args.device,
        free_bytes / 1073741824.0, total_bytes / 1073741824.0));
  }

  DeviceBuffer& a = plan->a;
  DeviceBuffer& b = plan->b;
  DeviceBuffer& d = plan->d;
  DeviceBuffer& workspace = plan->workspace;
  if (absl::Status s = a.Allocate(a_bytes); !s.ok()) return s;
  if (absl::Status s = b.Allocate(b_bytes); !s.ok()) return s;
  if (absl::Status s = d.Allocate(d_bytes); !s.ok()) return s;
  if (args.workspace_bytes > 0) {
    if (absl::Status s = workspace.Allocate(args.workspace_bytes); !s.ok()) {
      return s;
    }
  }
  Stream& stream = plan->stream;
  if (absl::Status s = stream.Create(); !s.ok()) return s;
  FLEETBENCH_GPU_RETURN_IF_ERROR(
      FillUniform(a.get(), m * k, setup.fill, 1, stream.get()));
  FLEETBENCH_GPU_RETURN_IF_ERROR(
      FillUniform(b.get(), k * n, setup.fill, 2, stream.get()));
  FLEETBENCH_GPU_RETURN_IF_ERROR(
      cudaMemsetAsync(d.get(), 0, d_bytes, stream.get()));

  LtHandle& handle = plan->handle;
  FLEETBENCH_GPU_RETURN_IF_ERROR(cublasLtCreate(handle.out()));
  LtMatmulDesc& desc = plan->desc;
  FLEETBENCH_GPU_RETURN_IF_ERROR(
      cublasLtMatmulDescCreate(desc.out(), setup.compute, setup.scale_type));
  const cublasOperation_t op_a = setup.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = CUBLAS_OP_N;
  FLEETBENCH_GPU_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(
      desc.get(), CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
  FLEETBENCH_GPU_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(
      desc.get(), CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
  if (setup.ab_type == CUDA_R_8F_E4M3) {
    // By default cuBLASLt periodically promotes FP8 partial sums to higher
    // precision, which costs throughput; fast accumulation skips that. It is
    // the mode FP8 forward passes commonly use and the one closer to the
    // datasheet peak. The sample says so (param fast_accumulate).
    const int8_t fast_accumulate = 1;
    FLEETBENCH_GPU_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(
        desc.get(), CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accumulate,
        sizeof(fast_accumulate)));
  }

  // Column-major. NN: A is m×k (ld m). TN: A is stored k×m (ld k) and used
  // transposed. B is k×n (ld k), C and D m×n (ld m).
  LtLayout& layout_a = plan->layout_a;
  LtLayout& layout_b = plan->layout_b;
  LtLayout& layout_d = plan->layout_d;
  FLEETBENCH_GPU_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(
      layout_a.out(), setup.ab_type, setup.transpose_a ? k : m,
      setup.transpose_a ? m : k, setup.transpose_a ? k : m));
  FLEETBENCH_GPU_RETURN_IF_ERROR(
      cublasLtMatrixLayoutCreate(layout_b.out(), setup.ab_type, k, n, k));
  FLEETBENCH_GPU_RETURN_IF_ERROR(
      cublasLtMatrixLayoutCreate(layout_d.out(), setup.cd_type, m, n, m));

  LtPreference& preference = plan->preference;
  FLEETBENCH_GPU_RETURN_IF_ERROR(
      cublasLtMatmulPreferenceCreate(preference.out()));
  const uint64_t workspace_bytes = args.workspace_bytes;
  FLEETBENCH_GPU_RETURN_IF_ERROR(cublasLtMatmulPreferenceSetAttribute(
      preference.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
      &workspace_bytes, sizeof(workspace_bytes)));
  cublasLtMatmulHeuristicResult_t& pick = plan->pick;
  int found = 0;
  FLEETBENCH_GPU_RETURN_IF_ERROR(cublasLtMatmulAlgoGetHeuristic(
      handle.get(), desc.get(), layout_a.get(), layout_b.get(), layout_d.get(),
      layout_d.get(), preference.get(), 1, &pick, &found));
  if (found == 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "gemm: cuBLASLt has no algorithm for %s %dx%dx%d on %s", setup.name,
        args.m, args.n, args.k, props.name));
  }

  plan->workspace_bytes = args.workspace_bytes;
  plan->d_bytes = d_bytes;
  return absl::OkStatus();
}

cublasStatus_t GemmPlan::Product() {
  const bool scale64 = setup.scale_type == CUDA_R_64F;
  const void* alpha = scale64 ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = scale64 ? static_cast<const void*>(&beta64) : &beta32;
  return cublasLtMatmul(handle.get(), desc.get(), alpha, a.get(),
                        layout_a.get(), b.get(), layout_b.get(), beta, d.get(),
                        layout_d.get(), d.get(), layout_d.get(), &pick.algo,
                        workspace.get(), workspace_bytes, stream.get());
}

}  // namespace

absl::Status TimeGemm(const FleetbenchGpuGemmArgs& args,
                      double* seconds_per_trial,
                      FleetbenchGpuGemmResult* result) {
  if (absl::Status s = CheckArgs(args); !s.ok()) return s;
  GemmPlan plan;
  if (absl::Status s = PrepareGemm(GemmShape{args.device, args.dtype, args.m,
                                             args.n, args.k,
                                             args.workspace_bytes},
                                   &plan);
      !s.ok()) {
    return s;
  }
  const GemmSetup& setup = plan.setup;
  const cublasLtMatmulHeuristicResult_t& pick = plan.pick;
  Stream& stream = plan.stream;
  auto product = [&plan]() { return plan.Product(); };

  for (int i = 0; i < args.warmup_products; ++i) {
    FLEETBENCH_GPU_RETURN_IF_ERROR(product());
  }
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaStreamSynchronize(stream.get()));

  Event start, stop;
  if (absl::Status s = start.Create(); !s.ok()) return s;
  if (absl::Status s = stop.Create(); !s.ok()) return s;

  int products_per_trial = args.products_per_trial;
  if (products_per_trial == 0) {
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventRecord(start.get(), stream.get()));
    FLEETBENCH_GPU_RETURN_IF_ERROR(product());
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventRecord(stop.get(), stream.get()));
    double one = 0;
    if (absl::Status s = ElapsedSeconds(start, stop, &one); !s.ok()) return s;
    const double wanted = one > 0 ? args.target_trial_seconds / one : 10000;
    products_per_trial =
        static_cast<int>(std::clamp(std::ceil(wanted), 1.0, 10000.0));
  }

  for (int trial = 0; trial < args.trials; ++trial) {
    if (Cancelled(args)) return absl::CancelledError("gemm: cancelled");
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventRecord(start.get(), stream.get()));
    for (int i = 0; i < products_per_trial; ++i) {
      FLEETBENCH_GPU_RETURN_IF_ERROR(product());
    }
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventRecord(stop.get(), stream.get()));
    if (absl::Status s = ElapsedSeconds(start, stop, &seconds_per_trial[trial]);
        !s.ok()) {
      return s;
    }
  }

  result->products_per_trial = products_per_trial;
  std::snprintf(result->layout, sizeof(result->layout), "%s",
                setup.transpose_a ? "TN" : "NN");
  std::snprintf(result->algorithm, sizeof(result->algorithm), "%s",
                DescribeAlgorithm(pick).c_str());
  return absl::OkStatus();
}

absl::Status StressGemm(const FleetbenchGpuStressArgs& args,
                        FleetbenchGpuStressBatch* batches,
                        FleetbenchGpuStressResult* result) {
  if (args.n <= 0 || !(args.seconds > 0) || !(args.batch_seconds > 0) ||
      args.check_every < 1 || args.max_batches < 1 ||
      args.dtype == FLEETBENCH_GPU_FP8) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "stress: bad arguments dtype=%d n=%d seconds=%g batch_seconds=%g "
        "check_every=%d max_batches=%d",
        args.dtype, args.n, args.seconds, args.batch_seconds, args.check_every,
        args.max_batches));
  }
  auto cancelled = [&args] {
    return args.cancelled != nullptr &&
           args.cancelled(args.cancelled_context) != 0;
  };
  GemmPlan plan;
  if (absl::Status s = PrepareGemm(GemmShape{args.device, args.dtype, args.n,
                                             args.n, args.n,
                                             args.workspace_bytes},
                                   &plan);
      !s.ok()) {
    return s;
  }
  cudaStream_t stream = plan.stream.get();
  DeviceBuffer hash;
  if (absl::Status s = hash.Allocate(sizeof(unsigned long long)); !s.ok()) {
    return s;
  }
  auto checksum = [&](uint64_t* out) -> absl::Status {
    unsigned long long value = 0;
    FLEETBENCH_GPU_RETURN_IF_ERROR(
        HashDeviceBuffer(plan.d.get(), plan.d_bytes,
                         static_cast<unsigned long long*>(hash.get()), stream));
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaMemcpyAsync(
        &value, hash.get(), sizeof(value), cudaMemcpyDeviceToHost, stream));
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    *out = value;
    return absl::OkStatus();
  };

  // The reference: D after the first product.
  FLEETBENCH_GPU_RETURN_IF_ERROR(plan.Product());
  if (absl::Status s = checksum(&result->reference_checksum); !s.ok()) return s;

  Event start, one_start, mark;
  if (absl::Status s = start.Create(); !s.ok()) return s;
  if (absl::Status s = one_start.Create(); !s.ok()) return s;
  if (absl::Status s = mark.Create(); !s.ok()) return s;
  // Products per batch from the time of one product.
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventRecord(one_start.get(), stream));
  FLEETBENCH_GPU_RETURN_IF_ERROR(plan.Product());
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventRecord(mark.get(), stream));
  double one = 0;
  if (absl::Status s = ElapsedSeconds(one_start, mark, &one); !s.ok()) return s;
  const int per_batch = static_cast<int>(std::clamp(
      std::ceil(one > 0 ? args.batch_seconds / one : 10000.0), 1.0, 10000.0));

  const auto wall_start = std::chrono::steady_clock::now();
  const auto wall_end =
      wall_start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(args.seconds));
  FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventRecord(start.get(), stream));
  int64_t since_check = 0;
  int written = 0;
  while (written < args.max_batches &&
         std::chrono::steady_clock::now() < wall_end) {
    if (cancelled()) return absl::CancelledError("stress: cancelled");
    for (int i = 0; i < per_batch; ++i) {
      FLEETBENCH_GPU_RETURN_IF_ERROR(plan.Product());
    }
    FLEETBENCH_GPU_RETURN_IF_ERROR(cudaEventRecord(mark.get(), stream));
    FleetbenchGpuStressBatch& batch = batches[written];
    batch = FleetbenchGpuStressBatch{};
    if (absl::Status s = ElapsedSeconds(start, mark, &batch.end_seconds);
        !s.ok()) {
      return s;
    }
    batch.products = per_batch;
    since_check += per_batch;
    if (since_check >= args.check_every) {
      since_check = 0;
      batch.checked = 1;
      if (absl::Status s = checksum(&batch.checksum); !s.ok()) return s;
    }
    result->batches = ++written;
  }
  std::snprintf(result->algorithm, sizeof(result->algorithm), "%s",
                DescribeAlgorithm(plan.pick).c_str());
  return absl::OkStatus();
}

}  // namespace fleetbench::kernels
