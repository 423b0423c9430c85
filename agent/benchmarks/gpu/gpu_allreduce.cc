#include "agent/benchmarks/gpu/gpu_allreduce.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/benchmarks/gpu/gpu_math.h"
#include "common/units.h"

namespace fleetbench::gpu {
namespace {

constexpr char kPlugin[] = "allreduce";
constexpr char kMethod[] =
    "NCCL, one process over all local GPUs (ncclCommInitAll), one stream per "
    "GPU, float sum, CUDA events around iters operations after warm-up, "
    "slowest rank; busbw factors as nccl-tests";

}  // namespace

absl::StatusOr<AllreduceConfig> ParseAllreduceParams(
    const agent::Params& params) {
  return agent::ParseCollectiveSweep(kPlugin, params);
}

absl::StatusOr<std::vector<v1::Sample>> CollectiveSamples(
    const std::string& op, int ranks, int nccl_version,
    const std::vector<FleetbenchGpuCollectivePoint>& points) {
  std::vector<v1::Sample> samples;
  if (points.empty()) return samples;
  const Collective collective = agent::CollectiveOf(op);
  for (const FleetbenchGpuCollectivePoint& point : points) {
    if (point.mismatches > 0) {
      return absl::DataLossError(absl::StrFormat(
          "%s: %s over %d GPU(s) at %d B gave wrong data: %d of %d checked "
          "elements differ (first: expected %g, got %g)",
          kPlugin, op, ranks, point.bytes, point.mismatches, point.checked,
          point.first_expected, point.first_actual));
    }
    if (!(point.seconds > 0)) {
      return absl::InternalError(absl::StrCat(kPlugin, ": ", op, " at ",
                                              point.bytes, " B has no time"));
    }
  }
  auto common = [&](v1::Sample* s, const FleetbenchGpuCollectivePoint& point) {
    const double algbw = GigabytesPerSecond(static_cast<double>(point.bytes),
                                            point.seconds);
    s->set_unit("GBps");
    s->set_value(BusBandwidth(collective, ranks, algbw));
    auto& p = *s->mutable_params();
    p["op"] = op;
    p["bytes"] = absl::StrCat(point.bytes);
    p["algbw_GBps"] = FormatNumber(algbw);
    p["busbw_factor"] = FormatNumber(BusBandwidthFactor(collective, ranks));
    p["time_us"] = FormatNumber(point.seconds * 1e6);
    p["ranks"] = absl::StrCat(ranks);
    p["nccl_version"] = absl::StrCat(nccl_version);
    p["dtype"] = "float32";
    p["verified_elements"] = absl::StrCat(point.checked);
    p["method"] = kMethod;
  };
  // The headline: the largest size, which the sweep ends with.
  const FleetbenchGpuCollectivePoint& largest = *std::max_element(
      points.begin(), points.end(),
      [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  v1::Sample& headline = samples.emplace_back();
  headline.set_metric(absl::StrCat(op, ".nccl.busbw_GBps"));
  common(&headline, largest);
  for (const FleetbenchGpuCollectivePoint& point : points) {
    v1::Sample& s = samples.emplace_back();
    s.set_metric("allreduce.nccl.curve_busbw_GBps");
    common(&s, point);
  }
  return samples;
}

std::vector<agent::MetricInfo> AllreduceBenchmark::metrics() const {
  // nccl-tests bus bandwidth.
  using agent::kHigherIsBetter;
  return {
      {"allreduce.nccl.busbw_GBps", "GBps", kHigherIsBetter,
       "NCCL all-reduce bus bandwidth, largest size"},
      {"allgather.nccl.busbw_GBps", "GBps", kHigherIsBetter,
       "NCCL all-gather bus bandwidth, largest size"},
      {"reducescatter.nccl.busbw_GBps", "GBps", kHigherIsBetter,
       "NCCL reduce-scatter bus bandwidth, largest size"},
      {"allreduce.nccl.curve_busbw_GBps", "GBps", kHigherIsBetter,
       "NCCL bus bandwidth per size (params op, bytes)"},
  };
}

absl::Status AllreduceBenchmark::Probe() const {
  if (absl::Status gpu = ProbeGpu(options_.module); !gpu.ok()) return gpu;
  absl::StatusOr<std::unique_ptr<GpuModule>> module =
      GpuModule::Load(options_.module);
  if (!module.ok()) return module.status();
  if (absl::Status s = (*module)->DeviceCount().status(); !s.ok()) return s;
  // sizes empty: the module only initialises NCCL over the GPUs.
  absl::StatusOr<CollectiveSweep> probe = (*module)->Collective(
      FLEETBENCH_GPU_ALLREDUCE, {}, 0, 1, CancelledFn());
  if (!probe.ok()) {
    return absl::Status(
        absl::IsFailedPrecondition(probe.status())
            ? absl::StatusCode::kFailedPrecondition
            : probe.status().code(),
        absl::StrCat(kPlugin, ": NCCL unusable: ", probe.status().message()));
  }
  if (probe->ranks < 1) {
    return absl::FailedPreconditionError(
        absl::StrCat(kPlugin, ": NCCL sees no GPU"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::Sample>> AllreduceBenchmark::Run(
    const agent::Params& params, const agent::RunContext& context) {
  absl::StatusOr<AllreduceConfig> config = ParseAllreduceParams(params);
  if (!config.ok()) return config.status();
  absl::StatusOr<GpuRun> run = SetUpGpuRun(options_, {});
  if (!run.ok()) return run.status();
  const std::vector<uint64_t> sizes =
      DoublingSweep(config->min_bytes, config->max_bytes);
  const agent::RunContext* ctx = &context;
  const CancelledFn cancelled = [ctx] { return ctx->cancelled(); };

  std::vector<v1::Sample> samples;
  for (size_t i = 0; i < config->ops.size(); ++i) {
    const std::string& op = config->ops[i];
    context.ReportProgress(static_cast<double>(i) / config->ops.size(),
                           absl::StrCat(op, " over ", run->targets.size(),
                                        " GPU(s)"));
    absl::StatusOr<CollectiveSweep> sweep =
        run->module->Collective(CollectiveOpNumber(op), sizes, config->warmup,
                                config->iters, cancelled);
    if (!sweep.ok()) {
      return absl::Status(sweep.status().code(),
                          absl::StrCat(kPlugin, ": ", op, ": ",
                                       sweep.status().message()));
    }
    absl::StatusOr<std::vector<v1::Sample>> op_samples =
        CollectiveSamples(op, sweep->ranks, sweep->nccl_version, sweep->points);
    if (!op_samples.ok()) return op_samples.status();
    for (v1::Sample& s : *op_samples) {
      AddGpuParams(*run, run->targets.front(), &s);
      (*s.mutable_params())["iters"] = absl::StrCat(config->iters);
      (*s.mutable_params())["warmup"] = absl::StrCat(config->warmup);
      samples.push_back(std::move(s));
    }
  }
  return samples;
}

}  // namespace fleetbench::gpu
