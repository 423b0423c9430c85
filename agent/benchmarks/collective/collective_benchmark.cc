#include "agent/benchmarks/collective/collective_benchmark.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "agent/benchmarks/collective/local_rendezvous.h"
#include "agent/benchmarks/collective_sweep.h"
#include "agent/benchmarks/group_key.h"
#include "agent/benchmarks/param_reader.h"
#include "common/bus_bandwidth.h"
#include "common/units.h"

namespace fleetbench::collective {
namespace {

constexpr char kPlugin[] = "allreduce";
constexpr absl::string_view kBackendParam = "backend";
constexpr char kMethod[] =
    "gloo over TCP (one rank per node, full mesh), float sum, gloo's ring "
    "allreduce and allgather, a ring reduce-scatter over gloo's transport; "
    "steady clock around iters operations after warm-up, slowest rank; "
    "busbw factors as nccl-tests";

std::string BackendParam(const agent::Params& params) {
  auto it = params.find(std::string(kBackendParam));
  return it == params.end() ? "auto" : it->second;
}

}  // namespace

std::string HostOfAddress(const std::string& given) {
  // gRPC's peer form, should one come through: "ipv4:10.0.0.7:51234".
  std::string address = given;
  for (absl::string_view scheme : {"ipv4:", "ipv6:"}) {
    if (absl::StartsWith(address, scheme))
      address = address.substr(scheme.size());
  }
  if (!address.empty() && address.front() == '[') {
    const size_t close = address.find(']');
    return close == std::string::npos ? address : address.substr(1, close - 1);
  }
  // One colon: host:port. More: a bare IPv6 address.
  const size_t colon = address.find(':');
  if (colon != std::string::npos &&
      address.find(':', colon + 1) == std::string::npos) {
    return address.substr(0, colon);
  }
  return address;
}

absl::StatusOr<std::string> ResolveBackend(const std::string& requested,
                                           const absl::Status& nccl_probe) {
  if (requested == "gloo") return std::string("gloo");
  if (requested == "nccl") {
    if (!nccl_probe.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat(kPlugin, ": backend=nccl: ", nccl_probe.message()));
    }
    return std::string("nccl");
  }
  // auto: NCCL wherever it probes OK, alone or (rank 0's probe) in a group.
  if (nccl_probe.ok()) return std::string("nccl");
  return std::string("gloo");
}

absl::StatusOr<std::vector<v1::Sample>> GlooSamples(
    const std::string& op, int ranks, const std::vector<std::string>& nodes,
    const std::vector<GlooPoint>& points) {
  std::vector<v1::Sample> samples;
  if (points.empty()) return samples;
  for (const GlooPoint& point : points) {
    if (point.mismatches > 0) {
      return absl::DataLossError(absl::StrFormat(
          "%s: gloo %s over %d rank(s) at %d B gave wrong data: %d of %d "
          "checked elements differ (first: expected %g, got %g)",
          kPlugin, op, ranks, point.bytes, point.mismatches, point.checked,
          point.first_expected, point.first_actual));
    }
    if (!(point.group_seconds > 0)) {
      return absl::InternalError(absl::StrCat(kPlugin, ": gloo ", op, " at ",
                                              point.bytes, " B has no time"));
    }
  }
  const Collective collective = agent::CollectiveOf(op);
  auto common = [&](v1::Sample* s, const GlooPoint& point) {
    const double algbw = GigabytesPerSecond(static_cast<double>(point.bytes),
                                            point.group_seconds);
    s->set_unit("GBps");
    s->set_value(BusBandwidth(collective, ranks, algbw));
    auto& p = *s->mutable_params();
    p["op"] = op;
    p["bytes"] = absl::StrCat(point.bytes);
    p["algbw_GBps"] = FormatNumber(algbw);
    p["busbw_factor"] = FormatNumber(BusBandwidthFactor(collective, ranks));
    p["time_us"] = FormatNumber(point.group_seconds * 1e6);
    p["slowest_rank"] = absl::StrCat(point.slowest_rank);
    p["ranks"] = absl::StrCat(ranks);
    p["backend"] = "gloo";
    if (!nodes.empty()) p["nodes"] = absl::StrJoin(nodes, ",");
    p["dtype"] = "float32";
    p["verified_elements"] = absl::StrCat(point.checked);
    p["method"] = kMethod;
  };
  const GlooPoint& largest = *std::max_element(
      points.begin(), points.end(),
      [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  v1::Sample& headline = samples.emplace_back();
  headline.set_metric(absl::StrCat(op, ".gloo.busbw_GBps"));
  common(&headline, largest);
  for (const GlooPoint& point : points) {
    v1::Sample& s = samples.emplace_back();
    s.set_metric("allreduce.gloo.curve_busbw_GBps");
    common(&s, point);
  }
  return samples;
}

CollectiveBenchmark::CollectiveBenchmark(std::unique_ptr<agent::Benchmark> nccl)
    : nccl_(std::move(nccl)) {}

absl::Status CollectiveBenchmark::ValidateParams(
    const agent::Params& params) const {
  const absl::string_view extra[] = {kBackendParam};
  if (absl::Status s =
          agent::ParseCollectiveSweep(kPlugin, params, extra).status();
      !s.ok()) {
    return s;
  }
  agent::ParamReader r(kPlugin, params);
  const absl::string_view backends[] = {"auto", "gloo", "nccl"};
  absl::StatusOr<std::vector<std::string>> backend =
      r.List(std::string(kBackendParam), "auto", backends);
  if (!backend.ok()) return backend.status();
  if (backend->size() != 1) {
    return r.Error(kBackendParam, "give one of auto, gloo, nccl");
  }
  return absl::OkStatus();
}

absl::Duration CollectiveBenchmark::DefaultTimeout(
    const agent::Params& params) const {
  const absl::string_view extra[] = {kBackendParam};
  absl::StatusOr<agent::CollectiveSweepConfig> config =
      agent::ParseCollectiveSweep(kPlugin, params, extra);
  if (!config.ok()) return agent::Benchmark::DefaultTimeout(params);
  return agent::CollectiveSweepTimeout(*config);
}

std::vector<agent::MetricInfo> CollectiveBenchmark::metrics() const {
  std::vector<agent::MetricInfo> all;
  if (nccl_ != nullptr) all = nccl_->metrics();
  using agent::kHigherIsBetter;
  const agent::MetricInfo gloo[] = {
      {"allreduce.gloo.busbw_GBps", "GBps", kHigherIsBetter,
       "gloo (TCP, CPU) all-reduce bus bandwidth over the group, largest size"},
      {"allgather.gloo.busbw_GBps", "GBps", kHigherIsBetter,
       "gloo (TCP, CPU) all-gather bus bandwidth over the group, largest size"},
      {"reducescatter.gloo.busbw_GBps", "GBps", kHigherIsBetter,
       "gloo (TCP, CPU) reduce-scatter bus bandwidth over the group, largest "
       "size"},
      {"allreduce.gloo.curve_busbw_GBps", "GBps", kHigherIsBetter,
       "gloo bus bandwidth per size (params op, bytes)"},
  };
  all.insert(all.end(), std::begin(gloo), std::end(gloo));
  return all;
}

absl::Status CollectiveBenchmark::NcclProbe() const {
  if (nccl_ == nullptr) {
    return absl::FailedPreconditionError("this build has no NCCL backend");
  }
  return nccl_->Probe();
}

absl::StatusOr<std::string> CollectiveBenchmark::AgreeOnBackend(
    const std::string& requested, const agent::RunContext& context) {
  const agent::GroupContext* group = context.group();
  if (group == nullptr) return ResolveBackend(requested, NcclProbe());
  if (group->rendezvous == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(kPlugin, ": the group gives no rendezvous"));
  }
  if (group->rank == 0) {
    // Only rank 0 probes NCCL: it decides for the group (a member without a
    // GPU then fails with its own reason).
    const absl::Status probe =
        requested == "gloo" ? absl::OkStatus() : NcclProbe();
    absl::StatusOr<std::string> choice = ResolveBackend(requested, probe);
    const absl::Status published =
        choice.ok() ? agent::PublishGroupValue(*group, kBackendKey, *choice)
                    : agent::PublishGroupRefusal(*group, kBackendKey,
                                                 choice.status());
    if (!published.ok()) {
      return absl::Status(published.code(),
                          absl::StrCat(kPlugin, ": publishing the backend: ",
                                       published.message()));
    }
    return choice;
  }
  absl::StatusOr<std::string> published =
      agent::AwaitGroupValue(context, *group, kPlugin, kBackendKey);
  if (!published.ok()) return published.status();
  if (requested != "auto" && requested != *published) {
    return absl::FailedPreconditionError(
        absl::StrCat(kPlugin, ": rank 0 chose backend ", *published,
                     ", this member was asked for ", requested));
  }
  return *published;
}

absl::StatusOr<std::vector<v1::Sample>> CollectiveBenchmark::Run(
    const agent::Params& params, const agent::RunContext& context) {
  if (absl::Status s = ValidateParams(params); !s.ok()) return s;
  absl::StatusOr<std::string> backend =
      AgreeOnBackend(BackendParam(params), context);
  if (!backend.ok()) return backend.status();
  if (*backend == "nccl") return RunNccl(params, context);
  return RunGloo(params, context);
}

absl::StatusOr<std::vector<v1::Sample>> CollectiveBenchmark::RunNccl(
    const agent::Params& params, const agent::RunContext& context) {
  agent::Params rest = params;
  rest.erase(std::string(kBackendParam));
  absl::StatusOr<std::vector<v1::Sample>> samples = nccl_->Run(rest, context);
  if (!samples.ok()) return samples.status();
  for (v1::Sample& s : *samples) (*s.mutable_params())["backend"] = "nccl";
  return samples;
}

absl::StatusOr<std::vector<v1::Sample>> CollectiveBenchmark::RunGloo(
    const agent::Params& params, const agent::RunContext& context) {
  const absl::string_view extra[] = {kBackendParam};
  absl::StatusOr<agent::CollectiveSweepConfig> config =
      agent::ParseCollectiveSweep(kPlugin, params, extra);
  if (!config.ok()) return config.status();

  const agent::GroupContext* group = context.group();
  LocalRendezvous alone;
  GlooMember member;
  member.cancelled = [&context] { return context.cancelled(); };
  member.deadline = context.deadline();
  std::vector<std::string> nodes;
  if (group != nullptr) {
    member.rank = group->rank;
    member.size = group->size;
    member.rendezvous = group->rendezvous;
    member.deadline = std::min(group->deadline, context.deadline());
    nodes = group->member_nodes;
    if (group->rank < 0 ||
        static_cast<size_t>(group->rank) >= group->member_addresses.size() ||
        group->member_addresses[static_cast<size_t>(group->rank)].empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          kPlugin, ": the group gives no address for rank ", group->rank));
    }
    member.address = HostOfAddress(
        group->member_addresses[static_cast<size_t>(group->rank)]);
  } else {
    member.rendezvous = &alone;
  }
  context.ReportProgress(
      0, absl::StrCat("gloo: meeting ", member.size, " rank(s)"));
  absl::StatusOr<std::unique_ptr<GlooEngine>> engine =
      GlooEngine::Connect(member);
  if (!engine.ok()) {
    return absl::Status(engine.status().code(),
                        absl::StrCat(kPlugin, ": ", engine.status().message()));
  }
  const std::vector<uint64_t> sizes =
      agent::DoublingSweep(config->min_bytes, config->max_bytes);
  std::vector<v1::Sample> samples;
  for (size_t i = 0; i < config->ops.size(); ++i) {
    const std::string& op = config->ops[i];
    context.ReportProgress(
        static_cast<double>(i) / config->ops.size(),
        absl::StrCat("gloo ", op, " over ", member.size, " rank(s)"));
    absl::StatusOr<std::vector<GlooPoint>> points =
        (*engine)->Sweep(op, sizes, config->warmup, config->iters);
    if (!points.ok()) {
      return absl::Status(
          points.status().code(),
          absl::StrCat(kPlugin, ": ", points.status().message()));
    }
    // Every rank checks its own result: a wrong one fails that member.
    absl::StatusOr<std::vector<v1::Sample>> op_samples =
        GlooSamples(op, member.size, nodes, *points);
    if (!op_samples.ok()) return op_samples.status();
    if (member.rank != 0) continue;
    for (v1::Sample& s : *op_samples) {
      (*s.mutable_params())["iters"] = absl::StrCat(config->iters);
      (*s.mutable_params())["warmup"] = absl::StrCat(config->warmup);
      samples.push_back(std::move(s));
    }
  }
  return samples;
}

}  // namespace fleetbench::collective
