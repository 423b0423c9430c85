#include "agent/benchmarks/collective_sweep.h"

#include <cmath>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/benchmarks/param_reader.h"
#include "kernels/gpu_module_api.h"

namespace fleetbench::agent {
namespace {

constexpr const char* kOps[] = {"allreduce", "allgather", "reducescatter"};
constexpr int64_t kMaxBytes = int64_t{16} << 30;

}  // namespace

int CollectiveOpNumber(const std::string& op) {
  if (op == "allreduce") return FLEETBENCH_GPU_ALLREDUCE;
  if (op == "allgather") return FLEETBENCH_GPU_ALLGATHER;
  if (op == "reducescatter") return FLEETBENCH_GPU_REDUCESCATTER;
  return -1;
}

Collective CollectiveOf(const std::string& op) {
  if (op == "allgather") return Collective::kAllGather;
  if (op == "reducescatter") return Collective::kReduceScatter;
  return Collective::kAllReduce;
}

std::vector<uint64_t> DoublingSweep(uint64_t min_bytes, uint64_t max_bytes) {
  std::vector<uint64_t> sizes;
  if (min_bytes == 0 || min_bytes > max_bytes) return sizes;
  for (uint64_t b = min_bytes; b <= max_bytes; b *= 2) {
    sizes.push_back(b);
    if (b > max_bytes / 2) break;
  }
  if (sizes.back() != max_bytes) sizes.push_back(max_bytes);
  return sizes;
}

absl::StatusOr<CollectiveSweepConfig> ParseCollectiveSweep(
    absl::string_view plugin, const Params& params,
    absl::Span<const absl::string_view> extra_keys) {
  ParamReader r(plugin, params);
  std::vector<absl::string_view> keys = {"ops", "min_bytes", "max_bytes",
                                         "iters", "warmup"};
  keys.insert(keys.end(), extra_keys.begin(), extra_keys.end());
  if (absl::Status s = r.CheckKeys(keys); !s.ok()) return s;
  CollectiveSweepConfig config;
  absl::StatusOr<std::vector<std::string>> ops = r.List("ops", "allreduce");
  if (!ops.ok()) return ops.status();
  for (const std::string& op : *ops) {
    if (CollectiveOpNumber(op) < 0) {
      return r.Error("ops", absl::StrCat("'", op, "' is not one of ",
                                         absl::StrJoin(kOps, ", ")));
    }
  }
  config.ops = *std::move(ops);
  absl::StatusOr<int64_t> min_bytes =
      r.Bytes("min_bytes", int64_t{1} << 20, 4, kMaxBytes);
  if (!min_bytes.ok()) return min_bytes.status();
  absl::StatusOr<int64_t> max_bytes =
      r.Bytes("max_bytes", int64_t{1} << 30, 4, kMaxBytes);
  if (!max_bytes.ok()) return max_bytes.status();
  if (*max_bytes < *min_bytes) {
    return r.Error("max_bytes", absl::StrCat(*max_bytes, " is below min_bytes ",
                                             *min_bytes));
  }
  config.min_bytes = static_cast<uint64_t>(*min_bytes);
  config.max_bytes = static_cast<uint64_t>(*max_bytes);
  absl::StatusOr<int64_t> iters = r.Int("iters", 20, 1, 10000);
  if (!iters.ok()) return iters.status();
  config.iters = static_cast<int>(*iters);
  absl::StatusOr<int64_t> warmup = r.Int("warmup", 5, 0, 1000);
  if (!warmup.ok()) return warmup.status();
  config.warmup = static_cast<int>(*warmup);
  return config;
}

absl::Duration CollectiveSweepTimeout(const CollectiveSweepConfig& config) {
  double sizes = 0;
  for (uint64_t bytes : DoublingSweep(config.min_bytes, config.max_bytes)) {
    sizes += static_cast<double>(bytes);
  }
  double per_size_bytes = 0;  // bytes a rank sends per byte of size, all ops
  for (const std::string& op : config.ops) {
    per_size_bytes += op == "allreduce" ? 2.0 : 1.0;
  }
  const double operations = static_cast<double>(config.warmup) +
                            static_cast<double>(config.iters) + 1.0;
  const double seconds =
      sizes * per_size_bytes * operations / kSweepSlowestRate;
  return kSweepStartAllowance + absl::Seconds(std::ceil(seconds));
}

}  // namespace fleetbench::agent
