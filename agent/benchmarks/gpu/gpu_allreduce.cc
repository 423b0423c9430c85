#include "agent/benchmarks/gpu/gpu_allreduce.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "agent/benchmarks/gpu/gpu_math.h"
#include "agent/benchmarks/gpu/nccl_log.h"
#include "agent/benchmarks/group_key.h"
#include "common/units.h"

namespace fleetbench::gpu {
namespace {

constexpr char kPlugin[] = "allreduce";
constexpr char kMethod[] =
    "NCCL, one process over all local GPUs (ncclCommInitAll), one stream per "
    "GPU, float sum, CUDA events around iters operations after warm-up, "
    "slowest rank; busbw factors as nccl-tests";
constexpr char kGroupMethod[] =
    "NCCL across nodes, one rank per node (GPU 0), non-blocking communicator "
    "from rank 0's unique id through the controller's rendezvous, float sum, "
    "CUDA events around iters operations after warm-up, slowest rank (max "
    "over the ranks); busbw factors as nccl-tests for the group's size";
// The most of an NCCL INFO log read back (a few hundred lines per rank).
constexpr std::streamsize kMaxLogBytes = 4 << 20;

std::string ReadLog(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::string text(static_cast<size_t>(kMaxLogBytes), '\0');
  in.read(text.data(), kMaxLogBytes);
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

}  // namespace

std::string NcclIdText(const FleetbenchGpuNcclId& id) {
  return absl::BytesToHexString(
      absl::string_view(id.bytes, sizeof(id.bytes)));
}

absl::StatusOr<FleetbenchGpuNcclId> ParseNcclIdText(const std::string& text) {
  if (text.size() != 2 * FLEETBENCH_GPU_NCCL_ID_BYTES ||
      !std::all_of(text.begin(), text.end(), absl::ascii_isxdigit)) {
    return absl::InvalidArgumentError(absl::StrCat(
        kPlugin, ": an NCCL id is ", 2 * FLEETBENCH_GPU_NCCL_ID_BYTES,
        " hex digits; got ", text.size(), " characters"));
  }
  const std::string bytes = absl::HexStringToBytes(text);
  FleetbenchGpuNcclId id{};
  std::memcpy(id.bytes, bytes.data(), sizeof(id.bytes));
  return id;
}

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
  if (context.group() != nullptr) {
    return RunGroup(*config, context, *context.group());
  }
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

absl::StatusOr<std::vector<v1::Sample>> AllreduceBenchmark::RunGroup(
    const AllreduceConfig& config, const agent::RunContext& context,
    const agent::GroupContext& group) {
  const std::string where = absl::StrCat(kPlugin, ": nccl rank ", group.rank,
                                         " of ", group.size);
  // Rank 0 refuses for the group when it cannot start; the others fail with
  // their own reason before waiting.
  absl::StatusOr<GpuRun> run = SetUpGpuRun(options_, {0});
  absl::StatusOr<NcclId> id;
  if (run.ok() && group.rank == 0) id = run->module->NcclUniqueId();
  if (!run.ok() || (group.rank == 0 && !id.ok())) {
    const absl::Status why = !run.ok() ? run.status() : id.status();
    const absl::Status failed(why.code(),
                              absl::StrCat(where, ": ", why.message()));
    if (group.rank == 0) {
      (void)agent::PublishGroupRefusal(group, kNcclIdKey, failed);
    }
    return failed;
  }
  FleetbenchGpuNcclId unique{};
  if (group.rank == 0) {
    unique = id->id;
    if (absl::Status s =
            agent::PublishGroupValue(group, kNcclIdKey, NcclIdText(unique));
        !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(where, ": publishing the "
                                                 "NCCL id: ", s.message()));
    }
  } else {
    context.ReportProgress(0, "nccl: waiting for rank 0's id");
    absl::StatusOr<std::string> text =
        agent::AwaitGroupValue(context, group, kPlugin, kNcclIdKey);
    if (!text.ok()) return text.status();
    absl::StatusOr<FleetbenchGpuNcclId> parsed = ParseNcclIdText(*text);
    if (!parsed.ok()) return parsed.status();
    unique = *parsed;
  }

  GroupCollectiveRequest request;
  for (const std::string& op : config.ops) {
    request.ops.push_back(CollectiveOpNumber(op));
  }
  request.sizes = DoublingSweep(config.min_bytes, config.max_bytes);
  request.warmup_iters = config.warmup;
  request.iters = config.iters;
  request.device = 0;
  request.rank = group.rank;
  request.nranks = group.size;
  request.id = unique;
  request.nccl_debug_file =
      absl::StrCat(context.scratch_dir(), "/nccl-rank", group.rank, ".log");
  const absl::Time deadline = group.deadline;
  const agent::RunContext* ctx = &context;
  const CancelledFn cancelled = [ctx, deadline] {
    return ctx->cancelled() || absl::Now() >= deadline;
  };
  context.ReportProgress(
      0, absl::StrCat("nccl: ", absl::StrJoin(config.ops, ","), " over ",
                      group.size, " node(s)"));
  absl::StatusOr<CollectiveSweep> sweep =
      run->module->GroupCollective(request, cancelled);
  if (!sweep.ok()) {
    absl::StatusCode code = sweep.status().code();
    // The abort after the group's deadline, not a user's cancel.
    if (absl::IsCancelled(sweep.status()) && !context.cancelled() &&
        absl::Now() >= deadline) {
      code = absl::StatusCode::kDeadlineExceeded;
    }
    return absl::Status(code,
                        absl::StrCat(where, ": ", sweep.status().message()));
  }
  const std::map<std::string, std::string> facts =
      NcclLogParams(ParseNcclLog(ReadLog(request.nccl_debug_file)));

  std::vector<v1::Sample> samples;
  const size_t per_op = request.sizes.size();
  for (size_t o = 0; o < config.ops.size(); ++o) {
    const std::vector<FleetbenchGpuCollectivePoint> points(
        sweep->points.begin() + static_cast<std::ptrdiff_t>(o * per_op),
        sweep->points.begin() + static_cast<std::ptrdiff_t>((o + 1) * per_op));
    // Every rank checks its own receive buffers.
    absl::StatusOr<std::vector<v1::Sample>> op_samples = CollectiveSamples(
        config.ops[o], sweep->ranks, sweep->nccl_version, points);
    if (!op_samples.ok()) {
      return absl::Status(op_samples.status().code(),
                          absl::StrCat(where, ": ",
                                       op_samples.status().message()));
    }
    if (group.rank != 0) continue;
    for (v1::Sample& s : *op_samples) {
      AddGpuParams(*run, run->targets.front(), &s);
      auto& p = *s.mutable_params();
      p["iters"] = absl::StrCat(config.iters);
      p["warmup"] = absl::StrCat(config.warmup);
      p["method"] = kGroupMethod;
      p["nodes"] = absl::StrJoin(group.member_nodes, ",");
      p["ranks_per_node"] = "1";
      for (const auto& [key, value] : facts) p[key] = value;
      if (facts.empty()) p["nccl_log"] = "no INFO lines read";
      samples.push_back(std::move(s));
    }
  }
  return samples;
}

}  // namespace fleetbench::gpu
