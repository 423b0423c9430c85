#include "common/gpu_skus.h"

#include "absl/strings/ascii.h"

namespace fleetbench::gpu {

const std::vector<GpuSku>& KnownGpuSkus() {
  // label, matches, fp64, fp64 tensor, tf32, fp16, bf16, fp8, GB/s, W, source
  static const std::vector<GpuSku> kSkus = {
      {"H200 NVL", {"H200 NVL"}, 30, 60, 417.5, 835.5, 835.5, 1670.5, 4800, 600,
       "h200-datasheet"},
      {"H200 SXM", {"H200"}, 34, 67, 494.5, 989.5, 989.5, 1979, 4800, 700,
       "h200-datasheet"},
      {"H100 NVL", {"H100 NVL"}, 30, 60, 417.5, 835.5, 835.5, 1670.5, 3900, 400,
       "h100-datasheet"},
      {"H100 PCIe", {"H100 PCIe"}, 26, 51, 378, 756.5, 756.5, 1513, 2000, 350,
       "h100-datasheet"},
      {"H100 SXM", {"H100 80GB HBM3", "H100 SXM"}, 34, 67, 494.5, 989.5, 989.5,
       1979, 3350, 700, "h100-datasheet"},
      {"A100 SXM 80GB", {"A100-SXM4-80GB", "A100 SXM4 80GB"}, 9.7, 19.5, 156,
       312, 312, 0, 2039, 400, "a100-datasheet"},
      {"A100 SXM 40GB", {"A100-SXM4-40GB", "A100 SXM4 40GB"}, 9.7, 19.5, 156,
       312, 312, 0, 1555, 400, "a100-datasheet"},
      {"A100 PCIe 80GB", {"A100 80GB PCIe", "A100-PCIE-80GB"}, 9.7, 19.5, 156,
       312, 312, 0, 1935, 300, "a100-datasheet"},
      {"A100 PCIe 40GB", {"A100-PCIE-40GB", "A100 40GB PCIe"}, 9.7, 19.5, 156,
       312, 312, 0, 1555, 250, "a100-datasheet"},
      {"L40S", {"L40S"}, 0, 0, 183, 362.05, 362.05, 733, 864, 350,
       "l40s-datasheet"},
      {"L40", {"L40"}, 0, 0, 90.5, 181.05, 181.05, 362, 864, 300,
       "l40-datasheet"},
      {"L4", {"NVIDIA L4"}, 0, 0, 60, 121, 121, 242.5, 300, 72,
       "l4-datasheet"},
      {"RTX 4090", {"RTX 4090"}, 1.29, 0, 82.6, 165.2, 165.2, 330.3, 1008, 450,
       "ada-whitepaper"},
      {"A10G", {"A10G"}, 0, 0, 35, 70, 70, 0, 600, 300, "a10g-third-party"},
      {"A10", {"NVIDIA A10"}, 0, 0, 62.5, 125, 125, 0, 600, 150,
       "a10-datasheet"},
      {"T4", {"Tesla T4", "NVIDIA T4"}, 0, 0, 0, 65, 0, 0, 320, 70, "t4-datasheet"},
      {"V100 SXM2", {"V100-SXM2", "V100 SXM2"}, 7.8, 0, 0, 125, 0, 0, 900, 300,
       "v100-datasheet"},
      {"V100S PCIe", {"V100S"}, 8.2, 0, 0, 130, 0, 0, 1134, 250,
       "v100-datasheet"},
      {"V100 PCIe", {"V100-PCIE", "V100 PCIe"}, 7, 0, 0, 112, 0, 0, 900, 250,
       "v100-datasheet"},
  };
  return kSkus;
}

namespace {

// `match` occurs in `name` and is not followed by a letter or digit, so that
// "NVIDIA A10" does not match "NVIDIA A100" nor "NVIDIA L4" "NVIDIA L40S".
bool MatchesAtWordEnd(absl::string_view name, absl::string_view match) {
  for (size_t at = name.find(match); at != absl::string_view::npos;
       at = name.find(match, at + 1)) {
    const size_t end = at + match.size();
    if (end == name.size() || !absl::ascii_isalnum(name[end])) return true;
  }
  return false;
}

}  // namespace

const GpuSku* FindGpuSku(absl::string_view device_name) {
  for (const GpuSku& sku : KnownGpuSkus()) {
    for (const char* match : sku.name_matches) {
      if (MatchesAtWordEnd(device_name, match)) return &sku;
    }
  }
  return nullptr;
}

double PeakTflops(const GpuSku& sku, absl::string_view dtype) {
  if (dtype == "fp64") {
    return sku.fp64_tensor_tflops > 0 ? sku.fp64_tensor_tflops
                                      : sku.fp64_tflops;
  }
  if (dtype == "tf32") return sku.tf32_tflops;
  if (dtype == "fp16") return sku.fp16_tflops;
  if (dtype == "bf16") return sku.bf16_tflops;
  if (dtype == "fp8") return sku.fp8_tflops;
  return 0;
}

}  // namespace fleetbench::gpu
