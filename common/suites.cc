#include "common/suites.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fleetbench {
namespace {

v1::BenchmarkSpec Spec(const std::string& name,
                       std::initializer_list<std::pair<const char*, const char*>> params) {
  v1::BenchmarkSpec spec;
  spec.set_name(name);
  for (const auto& [k, v] : params) (*spec.mutable_params())[k] = v;
  return spec;
}

}  // namespace

const std::vector<SuiteInfo>& AllSuites() {
  // quick: at most about five minutes per node. Node facts come with every
  // hello; net pairs each node with the first one (skipped with one node).
  // The GPU entries are skipped, with the reason, on a node without a GPU;
  // on a GPU node stress runs 60 s of sustained GEMM so that throttling that
  // shows only after a minute of load reaches the findings
  // (gpu.thermal_throttle, gpu.sustained_drop; docs/findings.md).
  static const std::vector<SuiteInfo> kSuites = {
      {"quick",
       "minutes per node: CPU GEMM, memory, JPEG decode, short disk, small files, network against one peer; on GPU "
       "nodes GPU GEMM, PCIe, HBM and 60 s of sustained stress",
       {Spec("gemm", {{"sizes", "2048"}, {"min_seconds", "1"}}),
        Spec("mem", {}),
        // About 5 s: 2 sizes × 2 modes × (0.2 s warm-up + 3 × 0.3 s).
        Spec("decode", {{"repetitions", "3"}, {"seconds", "0.3"}}),
        Spec("disk", {{"file_mib", "256"}, {"ramp_seconds", "1"}, {"runtime_seconds", "5"}}),
        // 2,000 × 128 KiB (250 MiB): seconds on a local disk, and where a
        // network mount or an HDD shows.
        Spec("smallfiles", {{"files", "2000"}, {"runtime_seconds", "30"}}),
        Spec("net", {{"pairing", "star"}, {"duration_s", "5"}, {"warmup_s", "1"}}),
        Spec("gpu_gemm", {}), Spec("pcie", {}), Spec("hbm", {}),
        Spec("stress", {{"profile", "quick"}})}},
      {"full", "the long version: larger GEMMs, non-square and transposed ones, memory by NUMA placement, more decode sizes, larger disk files, 20,000 small files, every network pair",
       // The squares 4096 and 8192 (the same cases, and params, as
       // sizes=4096,8192), then one MLP layer's three products at 2048
       // tokens, hidden 2048, FFN 8192 (forward NN, weight gradient TN, input
       // gradient NT) and a batch-64 inference GEMM.
       {Spec("gemm", {{"shapes", "4096x4096x4096,8192x8192x8192,2048x8192x2048,"
                                 "2048x8192x2048:TN,2048x2048x8192:NT,64x4096x4096"},
                      {"min_seconds", "5"}}),
        Spec("mem", {{"repetitions", "20"}}),
        // Skipped, with the reason, on a one-node machine.
        Spec("mem_numa", {}),
        Spec("decode", {{"sizes", "256x256,512x512,1920x1080,3840x2160"},
                        {"repetitions", "10"}, {"seconds", "1"}}),
        Spec("disk", {{"file_mib", "4096"}, {"ramp_seconds", "5"}, {"runtime_seconds", "30"}}),
        // The data loader's epoch: 20,000 × 128 KiB (2.5 GiB), 8 threads.
        Spec("smallfiles", {}),
        Spec("net", {{"pairing", "all"}, {"duration_s", "20"}, {"warmup_s", "2"}}),
        Spec("gpu_gemm", {}), Spec("pcie", {}), Spec("hbm", {}),
        Spec("stress", {{"profile", "full"}})}},
  };
  return kSuites;
}

absl::StatusOr<SuiteInfo> FindSuite(const std::string& name) {
  std::vector<std::string> names;
  for (const SuiteInfo& s : AllSuites()) {
    if (s.name == name) return s;
    names.push_back(s.name);
  }
  return absl::NotFoundError(
      absl::StrCat("unknown suite '", name, "'; known: ", absl::StrJoin(names, ", ")));
}

}  // namespace fleetbench
