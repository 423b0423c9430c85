#include "controller/ranking/rank_profiles.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fleetbench::controller {

const std::vector<RankProfile>& RankProfiles() {
  // The weights say what a step of the workload waits on most; they are a
  // starting point to argue with, documented in docs/ranking.md.
  static const auto* const kProfiles = new std::vector<RankProfile>{
      {"cpu",
       "CPU-only work: dense math, memory streaming, reading its data",
       {{"gemm.cpu.fp32.tflops", 0.5}, {"mem.triad.GBps", 0.3}, {"disk.seq_read.MBps", 0.2}}},
      {"io",
       "data-heavy work on local disk: streaming reads, small random reads and their tail",
       {{"disk.seq_read.MBps", 0.5},
        {"disk.rand_read_4k.iops", 0.3},
        {"disk.rand_read_4k.p99_us", 0.2}}},
      {"training",
       "data-parallel GPU training: bf16 GEMM, HBM, host-device copies, data reads, all-reduce",
       {{"gemm.gpu.bf16.tflops", 0.4},
        {"gpu.mem.GBps", 0.2},
        {"pcie.h2d.GBps", 0.1},
        {"disk.seq_read.MBps", 0.1},
        {"allreduce.nccl.busbw_GBps", 0.2}}},
  };
  return *kProfiles;
}

absl::StatusOr<const RankProfile*> FindRankProfile(absl::string_view name) {
  std::vector<std::string> names;
  for (const RankProfile& p : RankProfiles()) {
    if (p.name == name) return &p;
    names.push_back(p.name);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown profile '", name.substr(0, 64),
                                                 "'; known: ", absl::StrJoin(names, ", ")));
}

}  // namespace fleetbench::controller
