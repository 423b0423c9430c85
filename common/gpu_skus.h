// common/gpu_skus.h — known GPU boards and their datasheet
// peaks, so a measured number can be read as "% of what NVIDIA promises".
//
// Peaks are DENSE tensor-core rates (datasheets print the 2:4-sparsity
// figure first; we halve it), in TFLOP/s with fp32 accumulation where a
// board distinguishes. Sources per row are in docs/gpu.md. A zero means the
// datasheet gives no number for that type (no FP8 before Ada/Hopper, no
// published FP64 on Ada boards); callers then report no percentage.
//
// Matching is by substring of the NVML / CUDA device name that ends at a word
// end ("NVIDIA A10" does not match "NVIDIA A100"); the first row wins, so
// "H200 NVL" is listed before "H200".
// Pure data and lookups; thread-safe.
#ifndef FLEETBENCH_COMMON_GPU_SKUS_H_
#define FLEETBENCH_COMMON_GPU_SKUS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fleetbench::gpu {

struct GpuSku {
  const char* label;          // our name: "H100 SXM"
  // Substrings of the device name that identify the board (any of them).
  std::vector<const char*> name_matches;
  double fp64_tflops;         // FP64 on CUDA cores
  double fp64_tensor_tflops;  // FP64 on tensor cores (A100, H100, H200)
  double tf32_tflops;
  double fp16_tflops;
  double bf16_tflops;
  double fp8_tflops;
  double memory_GBps;
  double board_power_w;       // max TDP / TGP
  const char* source;         // short source id, expanded in docs/gpu.md
};

// The whole table, in match order.
const std::vector<GpuSku>& KnownGpuSkus();

// The first row one of whose name_matches occurs in `device_name` not
// followed by a letter or digit (case-sensitive, as NVML prints names);
// nullptr when none does.
const GpuSku* FindGpuSku(absl::string_view device_name);

// Peak dense TFLOP/s for a GEMM dtype as the GPU plugins name them: "fp64"
// (tensor-core FP64 where the board has it, else CUDA-core FP64), "tf32",
// "fp16", "bf16", "fp8". 0 for an unknown dtype or an unpublished peak.
double PeakTflops(const GpuSku& sku, absl::string_view dtype);

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_COMMON_GPU_SKUS_H_
