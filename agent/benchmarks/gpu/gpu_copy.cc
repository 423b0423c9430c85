#include "agent/benchmarks/gpu/gpu_copy.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/benchmarks/gpu/gpu_math.h"
#include "agent/benchmarks/gpu/gpu_params.h"
#include "agent/benchmarks/sample_summary.h"
#include "common/gpu_values.h"
#include "common/stats.h"
#include "common/units.h"

namespace fleetbench::gpu {
namespace {

using agent::kHigherIsBetter;

constexpr GpuCopyDirection kPcieDirections[] = {
    {FLEETBENCH_GPU_COPY_H2D,
     {"pcie.h2d.GBps", "GBps", kHigherIsBetter,
      "host to device copy from pinned memory"},
     "h2d", 1.0},
    {FLEETBENCH_GPU_COPY_D2H,
     {"pcie.d2h.GBps", "GBps", kHigherIsBetter,
      "device to host copy into pinned memory"},
     "d2h", 1.0},
};
constexpr GpuCopyDirection kHbmDirections[] = {
    {FLEETBENCH_GPU_COPY_D2D,
     {"gpu.mem.GBps", "GBps", kHigherIsBetter,
      "device memory bandwidth (device-to-device copy)"},
     "d2d", 2.0},
};

}  // namespace

const GpuCopyPlugin kPcieCopyPlugin = {
    "pcie",
    "cudaMemcpyAsync from/to pinned host memory, CUDA-event timed trials "
    "after warm-up, median of trials",
    /*default_size_mib=*/256,
    /*default_copies_per_trial=*/1,
    kPcieDirections,
    GpuCopyReference::kPcieLink,
};
const GpuCopyPlugin kHbmCopyPlugin = {
    "hbm",
    "cudaMemcpyAsync device to same device, 2 bytes moved (read + write) per "
    "byte copied, CUDA-event timed trials after warm-up, median of trials",
    /*default_size_mib=*/1024,
    /*default_copies_per_trial=*/5,
    kHbmDirections,
    GpuCopyReference::kSkuMemoryBandwidth,
};

namespace {

absl::StatusOr<std::vector<double>> MeasureCopies(
    const GpuRun& run, const GpuTarget& target, const GpuCopyConfig& config,
    const GpuCopyDirection& copy, const agent::RunContext& context,
    const std::string& plugin) {
  FleetbenchGpuCopyArgs args{};
  args.device = target.info.index;
  args.kind = copy.kind;
  args.bytes = static_cast<uint64_t>(config.size_mib) << 20;
  args.warmup_copies = config.warmup_copies;
  args.copies_per_trial = config.copies_per_trial;
  args.trials = config.trials;
  const agent::RunContext* ctx = &context;
  absl::StatusOr<std::vector<double>> seconds =
      run.module->Copy(args, [ctx] { return ctx->cancelled(); });
  if (!seconds.ok()) {
    return absl::Status(
        seconds.status().code(),
        absl::StrCat(plugin, ": gpu ", target.info.index, " ", copy.label, ": ",
                     seconds.status().message()));
  }
  const double bytes = static_cast<double>(args.bytes) *
                       config.copies_per_trial * copy.bytes_moved_per_byte;
  std::vector<double> gbps;
  for (double s : *seconds) gbps.push_back(GigabytesPerSecond(bytes, s));
  return gbps;
}

v1::Sample MakeSample(const GpuRun& run, const GpuTarget& target,
                      const GpuCopyConfig& config, const GpuCopyDirection& copy,
                      const std::vector<double>& gbps, const char* method) {
  v1::Sample sample;
  sample.set_metric(copy.metric.name);
  sample.set_unit("GBps");
  sample.set_value(Median(gbps));
  AddGpuParams(run, target, &sample);
  agent::AddSummaryParams(Summarize(gbps), "GBps", sample.mutable_params());
  auto& p = *sample.mutable_params();
  p["direction"] = copy.label;
  p["size_mib"] = absl::StrCat(config.size_mib);
  p["copies_per_trial"] = absl::StrCat(config.copies_per_trial);
  p["warmup_copies"] = absl::StrCat(config.warmup_copies);
  p["method"] = method;
  return sample;
}

// The params that compare `sample` with `reference`; none when the
// reference is unknown for this GPU (no NVML, no SKU).
void AddReferenceParams(GpuCopyReference reference, const GpuRun& run,
                        const GpuTarget& target, v1::Sample* sample) {
  auto& p = *sample->mutable_params();
  switch (reference) {
    case GpuCopyReference::kPcieLink: {
      if (run.nvml == nullptr || !target.nvml_index.has_value()) return;
      // Read right after the copies: an idle GPU trains its link down.
      absl::StatusOr<PcieLinkState> link =
          run.nvml->ReadPcieLink(*target.nvml_index);
      if (!link.ok()) {
        p["pcie_link"] = absl::StrCat("unknown: ", link.status().message());
        return;
      }
      const double link_gbps =
          PcieTheoreticalGBps(link->gen_current, link->width_current);
      p["pcie_link"] = FormatPcieLink(link->gen_current, link->width_current);
      p["pcie_link_max"] = FormatPcieLink(link->gen_max, link->width_max);
      p["link_GBps"] = FormatNumber(link_gbps);
      p["pct_of_link"] =
          FormatNumber(PercentOfPeak(sample->value(), link_gbps));
      return;
    }
    case GpuCopyReference::kSkuMemoryBandwidth:
      if (target.sku == nullptr) return;
      p["peak_GBps"] = FormatNumber(target.sku->memory_GBps);
      p["pct_of_peak"] =
          FormatNumber(PercentOfPeak(sample->value(), target.sku->memory_GBps));
      return;
  }
}

}  // namespace

absl::StatusOr<GpuCopyConfig> ParseGpuCopyParams(const GpuCopyPlugin& plugin,
                                                 const agent::Params& params) {
  ParamReader r(
      plugin.name, params,
      {"size_mib", "devices", "trials", "warmup_copies", "copies_per_trial"});
  if (absl::Status s = r.CheckKeys(); !s.ok()) return s;
  GpuCopyConfig config;
  absl::StatusOr<int64_t> size =
      r.Int("size_mib", plugin.default_size_mib, 1, 16384);
  if (!size.ok()) return size.status();
  config.size_mib = static_cast<int>(*size);
  absl::StatusOr<std::vector<int>> devices = r.Devices("devices");
  if (!devices.ok()) return devices.status();
  config.devices = *std::move(devices);
  absl::StatusOr<int64_t> trials = r.Int("trials", 20, 3, 1000);
  if (!trials.ok()) return trials.status();
  config.trials = static_cast<int>(*trials);
  absl::StatusOr<int64_t> warmup = r.Int("warmup_copies", 2, 0, 100);
  if (!warmup.ok()) return warmup.status();
  config.warmup_copies = static_cast<int>(*warmup);
  absl::StatusOr<int64_t> per_trial =
      r.Int("copies_per_trial", plugin.default_copies_per_trial, 1, 100);
  if (!per_trial.ok()) return per_trial.status();
  config.copies_per_trial = static_cast<int>(*per_trial);
  return config;
}

absl::StatusOr<std::vector<v1::Sample>> GpuCopyBenchmark::Run(
    const agent::Params& params, const agent::RunContext& context) {
  const std::string plugin = plugin_->name;
  absl::StatusOr<GpuCopyConfig> config = ParseGpuCopyParams(*plugin_, params);
  if (!config.ok()) return config.status();
  absl::StatusOr<GpuRun> run = SetUpGpuRun(options_, config->devices);
  if (!run.ok()) return run.status();

  std::vector<v1::Sample> samples;
  const double total =
      static_cast<double>(run->targets.size() * plugin_->directions.size());
  int done = 0;
  for (const GpuTarget& target : run->targets) {
    for (const GpuCopyDirection& copy : plugin_->directions) {
      if (context.cancelled()) {
        return absl::CancelledError(absl::StrCat(plugin, ": cancelled"));
      }
      context.ReportProgress(
          done / total,
          absl::StrCat("gpu ", target.info.index, " ", copy.label));
      absl::StatusOr<std::vector<double>> gbps =
          MeasureCopies(*run, target, *config, copy, context, plugin);
      if (!gbps.ok()) return gbps.status();
      v1::Sample sample =
          MakeSample(*run, target, *config, copy, *gbps, plugin_->method);
      AddReferenceParams(plugin_->reference, *run, target, &sample);
      samples.push_back(std::move(sample));
      ++done;
    }
  }
  return samples;
}

std::vector<agent::MetricInfo> GpuCopyBenchmark::metrics() const {
  std::vector<agent::MetricInfo> out;
  for (const GpuCopyDirection& copy : plugin_->directions) out.push_back(copy.metric);
  return out;
}

}  // namespace fleetbench::gpu
