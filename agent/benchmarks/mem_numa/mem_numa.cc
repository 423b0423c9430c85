#include "agent/benchmarks/mem_numa/mem_numa.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/benchmarks/mem_numa/numa_memory.h"
#include "agent/benchmarks/mem_numa/numa_topology.h"
#include "agent/benchmarks/param_reader.h"
#include "agent/benchmarks/stream/last_level_cache.h"
#include "agent/benchmarks/stream/stream_math.h"
#include "agent/benchmarks/stream/stream_team.h"
#include "common/stats.h"
#include "common/units.h"

namespace fleetbench::agent {
namespace {

constexpr absl::string_view kAllowedKeys[] = {"array_mib", "repetitions"};
constexpr StreamKernel kKernels[] = {StreamKernel::kCopy, StreamKernel::kTriad};
constexpr char kMethod[] =
    "STREAM copy and triad, one pinned thread per allowed CPU of cpu_node, "
    "arrays MPOL_BIND to memory_node, best of timed repetitions";

std::vector<int> AllowedCpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
  }
  return cpus;
}

struct PlacementResult {
  std::array<double, 2> best_gbps{};    // copy, triad
  std::array<double, 2> median_gbps{};
  double pages_on_node = -1;
};

absl::StatusOr<PlacementResult> MeasurePlacement(const NumaPlacement& placement,
                                                 int64_t n, int reps,
                                                 const RunContext& context) {
  std::unique_ptr<NodeBoundArray> arrays[3];
  for (auto& array : arrays) {
    absl::StatusOr<std::unique_ptr<NodeBoundArray>> mapped =
        NodeBoundArray::Map(n, placement.memory_node);
    if (!mapped.ok()) return mapped.status();
    array = *std::move(mapped);
  }
  const int threads = static_cast<int>(placement.cpus.size());
  std::array<std::vector<double>, 2> gbps;
  ErrorSums errors;
  {
    StreamTeam team(threads, placement.cpus, arrays[0]->data(), arrays[1]->data(),
                    arrays[2]->data(), n, ExpectedStreamValues(reps));
    if (!team.complete()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("mem_numa: cannot start ", threads, " threads"));
    }
    team.Run(Op::kInit);
    for (int rep = 0; rep < reps; ++rep) {
      if (context.cancelled()) return absl::CancelledError("mem_numa: cancelled");
      // All four kernels, so the arrays hold STREAM's values for the check;
      // copy and triad are the ones reported.
      for (StreamKernel kernel : kStreamKernels) {
        const double seconds = team.Run(OpOf(kernel));
        for (size_t i = 0; i < 2; ++i) {
          if (rep > 0 && kernel == kKernels[i]) {
            gbps[i].push_back(GigabytesPerSecond(StreamBytes(kernel, n), seconds));
          }
        }
      }
    }
    team.Run(Op::kCheck);
    errors = team.TotalErrors();
  }
  const StreamValues expected = ExpectedStreamValues(reps);
  for (const auto& [name, sum, want] :
       {std::tuple{"a", errors.a, expected.a}, std::tuple{"b", errors.b, expected.b},
        std::tuple{"c", errors.c, expected.c}}) {
    if (!(StreamAverageRelativeError(sum, n, want) <= kStreamEpsilon)) {
      return absl::InternalError(absl::StrFormat(
          "mem_numa: validation failed on node %d memory: array %s holds wrong values",
          placement.memory_node, name));
    }
  }
  PlacementResult result;
  for (size_t i = 0; i < 2; ++i) {
    const Summary s = Summarize(gbps[i]);
    result.best_gbps[i] = s.max;
    result.median_gbps[i] = s.median;
  }
  result.pages_on_node = ShareOfPagesOnNode(arrays[0]->data(), arrays[0]->bytes(),
                                            placement.memory_node);
  return result;
}

}  // namespace

absl::StatusOr<MemNumaConfig> ParseMemNumaParams(const Params& params) {
  ParamReader reader("mem_numa", params);
  if (absl::Status s = reader.CheckKeys(kAllowedKeys); !s.ok()) return s;
  MemNumaConfig config;
  if (reader.Has("array_mib")) {
    absl::StatusOr<int64_t> mib = reader.Int("array_mib", 0, 1, int64_t{1} << 20);
    if (!mib.ok()) return mib.status();
    config.array_mib = *mib;
  }
  absl::StatusOr<int64_t> reps = reader.Int("repetitions", 10, 2, 200);
  if (!reps.ok()) return reps.status();
  config.repetitions = static_cast<int>(*reps);
  return config;
}

std::vector<MetricInfo> MemNumaBenchmark::metrics() const {
  return {
      {"mem_numa.local.copy.GBps", "GBps", kHigherIsBetter,
       "STREAM copy, threads and memory on the same NUMA node"},
      {"mem_numa.local.triad.GBps", "GBps", kHigherIsBetter,
       "STREAM triad, threads and memory on the same NUMA node"},
      {"mem_numa.remote.copy.GBps", "GBps", kHigherIsBetter,
       "STREAM copy, threads on one NUMA node, memory on another"},
      {"mem_numa.remote.triad.GBps", "GBps", kHigherIsBetter,
       "STREAM triad, threads on one NUMA node, memory on another"},
      {"mem_numa.remote_to_local.ratio", "ratio", kHigherIsBetter,
       "slowest remote triad over the median local triad"},
  };
}

absl::Status MemNumaBenchmark::Probe() const {
  return PlanNumaPlacements(ReadNumaTopology(node_root_), AllowedCpus()).status();
}

absl::Status MemNumaBenchmark::ValidateParams(const Params& params) const {
  return ParseMemNumaParams(params).status();
}

absl::StatusOr<std::vector<v1::Sample>> MemNumaBenchmark::Run(
    const Params& params, const RunContext& context) {
  absl::StatusOr<MemNumaConfig> config = ParseMemNumaParams(params);
  if (!config.ok()) return config.status();
  const std::vector<NumaNode> nodes = ReadNumaTopology(node_root_);
  absl::StatusOr<std::vector<NumaPlacement>> plan =
      PlanNumaPlacements(nodes, AllowedCpus());
  if (!plan.ok()) return plan.status();

  const LastLevelCache llc = ReadLastLevelCache("/sys/devices/system/cpu");
  const int64_t array_bytes = config->array_mib > 0
                                  ? config->array_mib * kMiB
                                  : DefaultStreamArrayBytes(llc.total_bytes);
  const int64_t n = array_bytes / static_cast<int64_t>(sizeof(double));
  for (const NumaNode& node : nodes) {
    if (node.memory_bytes > 0 && 3.0 * array_bytes > 0.5 * node.memory_bytes) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "mem_numa: three arrays of %d MiB do not fit in half of node %d's "
          "%.1f GiB; lower array_mib",
          array_bytes / kMiB, node.id, static_cast<double>(node.memory_bytes) / kGiB));
    }
  }

  std::vector<v1::Sample> samples;
  std::vector<double> local_triad;
  double slowest_remote_triad = -1;
  for (size_t i = 0; i < plan->size(); ++i) {
    const NumaPlacement& placement = (*plan)[i];
    context.ReportProgress(static_cast<double>(i) / plan->size(),
                           absl::StrCat("mem_numa: CPUs of node ", placement.cpu_node,
                                        ", memory of node ", placement.memory_node));
    absl::StatusOr<PlacementResult> result =
        MeasurePlacement(placement, n, config->repetitions, context);
    if (!result.ok()) return result.status();
    for (size_t k = 0; k < 2; ++k) {
      v1::Sample& sample = samples.emplace_back();
      sample.set_metric(absl::StrCat("mem_numa.", placement.local() ? "local" : "remote",
                                     ".", StreamKernelName(kKernels[k]), ".GBps"));
      sample.set_unit("GBps");
      sample.set_value(result->best_gbps[k]);
      auto& p = *sample.mutable_params();
      p["kernel"] = StreamKernelName(kKernels[k]);
      p["cpu_node"] = absl::StrCat(placement.cpu_node);
      p["memory_node"] = absl::StrCat(placement.memory_node);
      p["threads"] = absl::StrCat(placement.cpus.size());
      p["array_mib"] = FormatNumber(static_cast<double>(array_bytes) / kMiB);
      p["repetitions"] = absl::StrCat(config->repetitions);
      p["median_GBps"] = FormatNumber(result->median_gbps[k]);
      p["pages_on_node"] = FormatNumber(result->pages_on_node);
      p["method"] = kMethod;
    }
    const double triad = result->best_gbps[1];
    if (placement.local()) {
      local_triad.push_back(triad);
    } else if (slowest_remote_triad < 0 || triad < slowest_remote_triad) {
      slowest_remote_triad = triad;
    }
  }
  if (!local_triad.empty() && slowest_remote_triad >= 0) {
    const double local = Summarize(local_triad).median;
    v1::Sample& sample = samples.emplace_back();
    sample.set_metric("mem_numa.remote_to_local.ratio");
    sample.set_unit("ratio");
    sample.set_value(local > 0 ? slowest_remote_triad / local : 0);
    auto& p = *sample.mutable_params();
    p["kernel"] = "triad";
    p["nodes"] = absl::StrCat(nodes.size());
    p["local_triad_GBps"] = FormatNumber(local);
    p["slowest_remote_triad_GBps"] = FormatNumber(slowest_remote_triad);
    p["method"] = kMethod;
  }
  return samples;
}

}  // namespace fleetbench::agent
