#include "agent/benchmarks/gpu/gpu_stress.h"

#include <algorithm>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/benchmarks/gemm_math.h"
#include "agent/benchmarks/gpu/gpu_math.h"
#include "agent/benchmarks/gpu/gpu_params.h"
#include "agent/benchmarks/gpu/gpu_samplers.h"
#include "common/units.h"

namespace fleetbench::gpu {

absl::Duration StressBenchmark::DefaultTimeout(const agent::Params& params) const {
  absl::StatusOr<StressConfig> config = ParseStressParams(params);
  const absl::Duration base = agent::Benchmark::DefaultTimeout(params);
  if (!config.ok()) return base;
  return std::max(base, absl::Seconds(config->seconds) + absl::Minutes(10));
}
namespace {

constexpr char kPlugin[] = "stress";
constexpr const char* kDtypes[] = {"fp64", "tf32", "fp16", "bf16"};
constexpr double kBatchSeconds = 0.1;
constexpr absl::Duration kTelemetryPeriod = absl::Milliseconds(250);
constexpr char kMethod[] =
    "cublasLtMatmul repeated in ~0.1 s CUDA-event-timed batches on every GPU "
    "at once; 1 s throughput buckets; NVML sampled every 250 ms; device-side "
    "hash of D compared with the first product's";

int DtypeNumber(const std::string& dtype) {
  if (dtype == "fp64") return FLEETBENCH_GPU_FP64;
  if (dtype == "tf32") return FLEETBENCH_GPU_TF32;
  if (dtype == "fp16") return FLEETBENCH_GPU_FP16;
  return FLEETBENCH_GPU_BF16;
}

}  // namespace

absl::StatusOr<StressConfig> ParseStressParams(const agent::Params& params) {
  ParamReader r(kPlugin, params,
                {"profile", "seconds", "dtype", "size", "devices",
                 "check_every", "burst_seconds"});
  if (absl::Status s = r.CheckKeys(); !s.ok()) return s;
  StressConfig config;
  absl::StatusOr<std::vector<std::string>> profile = r.List("profile", "quick");
  if (!profile.ok()) return profile.status();
  if (profile->size() != 1 ||
      ((*profile)[0] != "quick" && (*profile)[0] != "full")) {
    return r.Bad("profile", "must be quick (60 s) or full (300 s)");
  }
  const double profile_seconds = (*profile)[0] == "full" ? 300 : 60;
  absl::StatusOr<double> seconds = r.Double("seconds", profile_seconds, 5, 3600);
  if (!seconds.ok()) return seconds.status();
  config.seconds = *seconds;
  absl::StatusOr<std::vector<std::string>> dtype = r.List("dtype", "bf16");
  if (!dtype.ok()) return dtype.status();
  if (dtype->size() != 1 || std::find(std::begin(kDtypes), std::end(kDtypes),
                                      (*dtype)[0]) == std::end(kDtypes)) {
    return r.Bad("dtype", absl::StrCat("must be one of ",
                                       absl::StrJoin(kDtypes, ", ")));
  }
  config.dtype = (*dtype)[0];
  absl::StatusOr<int64_t> size = r.Int("size", 8192, 256, 32768);
  if (!size.ok()) return size.status();
  if (*size % 16 != 0) {
    return r.Bad("size", absl::StrCat(*size, " is not a multiple of 16"));
  }
  config.size = static_cast<int>(*size);
  absl::StatusOr<std::vector<int>> devices = r.Devices("devices");
  if (!devices.ok()) return devices.status();
  config.devices = *std::move(devices);
  absl::StatusOr<int64_t> check_every = r.Int("check_every", 100, 1, 100000);
  if (!check_every.ok()) return check_every.status();
  config.check_every = static_cast<int>(*check_every);
  absl::StatusOr<double> burst = r.Double("burst_seconds", 5, 1, 60);
  if (!burst.ok()) return burst.status();
  config.burst_seconds = *burst;
  return config;
}

StressSamplesForGpu StressSamples(const StressConfig& config,
                                  const StressOutcome& outcome) {
  StressSamplesForGpu out;
  const std::vector<double> series = ThroughputSeries(
      outcome.batches, outcome.flops_per_product, config.interval_seconds);
  const SeriesStats stats = Stats(series);
  const BurstSustained split = SplitBurstSustained(
      series, config.interval_seconds, config.burst_seconds);
  const ChecksumVerdict verdict =
      CheckChecksums(outcome.reference_checksum, outcome.batches);

  auto add = [&](const std::string& metric, const std::string& unit,
                 double value) -> v1::Sample& {
    v1::Sample& s = out.samples.emplace_back();
    s.set_metric(metric);
    s.set_unit(unit);
    s.set_value(value);
    auto& p = *s.mutable_params();
    p["dtype"] = config.dtype;
    p["size"] = absl::StrCat(config.size);
    p["seconds"] = FormatNumber(config.seconds);
    p["method"] = kMethod;
    return s;
  };

  // Index, not reference: later add()s grow the vector.
  const size_t sustained = out.samples.size();
  add("stress.gpu.sustained.tflops", "tflops", split.sustained);
  {
    auto& p = *out.samples[sustained].mutable_params();
    std::vector<std::string> points;
    for (double v : series) points.push_back(absl::StrFormat("%.4g", v));
    p["series_tflops"] = absl::StrJoin(points, ",");
    p["interval_s"] = FormatNumber(config.interval_seconds);
    p["burst_tflops"] = FormatNumber(split.burst);
    p["sustained_pct_of_burst"] =
        FormatNumber(PercentOfPeak(split.sustained, split.burst));
    p["mean_tflops"] = FormatNumber(stats.mean);
    p["min_tflops"] = FormatNumber(stats.min);
    p["max_tflops"] = FormatNumber(stats.max);
    p["cv"] = FormatNumber(stats.cv);
    p["algorithm"] = outcome.algorithm;
    p["checksum_checks"] = absl::StrCat(verdict.checks);
    p["checksum_mismatches"] = absl::StrCat(verdict.mismatches);
    p["check_every"] = absl::StrCat(config.check_every);
    if (outcome.facts_before.has_value() && outcome.facts_after.has_value()) {
      const EccDelta ecc =
          EccDeltaOf(*outcome.facts_before, *outcome.facts_after);
      if (ecc.corrected) p["ecc_corrected_delta"] = absl::StrCat(*ecc.corrected);
      if (ecc.uncorrected) {
        p["ecc_uncorrected_delta"] = absl::StrCat(*ecc.uncorrected);
      }
    }
    if (outcome.facts_before.has_value()) {
      const v1::GpuFacts& f = *outcome.facts_before;
      if (f.has_power_enforced_limit_w()) {
        p["power_enforced_limit_W"] = FormatNumber(f.power_enforced_limit_w());
      }
      if (f.has_power_default_limit_w()) {
        p["power_default_limit_W"] = FormatNumber(f.power_default_limit_w());
      }
    }
  }
  add("stress.gpu.burst.tflops", "tflops", split.burst);
  add("stress.gpu.faulty.count", "count", verdict.faulty() ? 1 : 0);
  if (verdict.faulty()) {
    out.faulty_reason = absl::StrFormat(
        "%d of %d checksums of the repeated %s %d³ product differ from the "
        "first (first at batch %d: %016x, expected %016x): this GPU computes "
        "wrong results under sustained load",
        verdict.mismatches, verdict.checks, config.dtype, config.size,
        verdict.first_bad_batch, verdict.first_bad_checksum,
        outcome.reference_checksum);
  }

  if (!outcome.has_telemetry) return out;
  const TelemetrySummary t = SummarizeTelemetry(outcome.telemetry);
  if (t.samples_with_reasons > 0) {
    v1::Sample& fraction = add("stress.gpu.throttle_fraction.ratio", "ratio",
                               t.throttle_fraction);
    auto& p = *fraction.mutable_params();
    p["nvml_samples"] = absl::StrCat(t.samples_with_reasons);
    for (const auto& [name, share] : t.reason_fractions) {
      p[absl::StrCat("throttle_", name)] = FormatNumber(share);
    }
    v1::Sample& first = add("stress.gpu.first_throttle.s", "s",
                            t.first_throttle_seconds.value_or(config.seconds));
    (*first.mutable_params())["throttled"] =
        t.first_throttle_seconds.has_value() ? "yes" : "no";
  }
  if (t.mean_power_w.has_value()) {
    auto& p = *out.samples[sustained].mutable_params();
    p["mean_power_W"] = FormatNumber(*t.mean_power_w);
    p["max_power_W"] = FormatNumber(*t.max_power_w);
    if (outcome.facts_before && outcome.facts_before->has_power_enforced_limit_w()) {
      p["power_pct_of_enforced"] = FormatNumber(PercentOfPeak(
          *t.mean_power_w, outcome.facts_before->power_enforced_limit_w()));
    }
  }
  if (t.max_temperature_c.has_value()) {
    v1::Sample& temp =
        add("stress.gpu.max_temp.C", "C", *t.max_temperature_c);
    if (outcome.facts_before &&
        outcome.facts_before->has_temperature_slowdown_c()) {
      const unsigned slowdown = outcome.facts_before->temperature_slowdown_c();
      (*temp.mutable_params())["slowdown_C"] = absl::StrCat(slowdown);
      (*temp.mutable_params())["headroom_C"] =
          absl::StrCat(static_cast<int>(slowdown) -
                       static_cast<int>(*t.max_temperature_c));
    }
  }
  return out;
}

absl::StatusOr<std::vector<v1::Sample>> StressBenchmark::Run(
    const agent::Params& params, const agent::RunContext& context) {
  absl::StatusOr<StressConfig> config = ParseStressParams(params);
  if (!config.ok()) return config.status();
  absl::StatusOr<GpuRun> run = SetUpGpuRun(options_, config->devices);
  if (!run.ok()) return run.status();
  for (const GpuTarget& target : run->targets) {
    if (target.info.compute_major < 8 &&
        (config->dtype == "bf16" || config->dtype == "tf32")) {
      return absl::FailedPreconditionError(absl::StrCat(
          kPlugin, ": ", config->dtype, " needs compute capability 8.0; GPU ",
          target.info.index, " (", target.info.name, ") is ",
          target.info.compute_major, ".", target.info.compute_minor,
          "; use dtype=fp16"));
    }
  }
  const agent::RunContext* ctx = &context;
  const CancelledFn cancelled = [ctx] { return ctx->cancelled(); };
  const size_t count = run->targets.size();
  std::vector<StressOutcome> outcomes(count);
  std::vector<absl::Status> statuses(count);
  std::vector<std::unique_ptr<TelemetrySampler>> samplers(count);

  for (size_t i = 0; i < count; ++i) {
    const GpuTarget& target = run->targets[i];
    StressOutcome& o = outcomes[i];
    o.seconds = config->seconds;
    o.flops_per_product =
        agent::GemmFlops(config->size, config->size, config->size);
    if (run->nvml != nullptr && target.nvml_index.has_value()) {
      if (auto facts = run->nvml->ReadDeviceFacts(*target.nvml_index);
          facts.ok()) {
        o.facts_before = *std::move(facts);
      }
      o.has_telemetry = true;
      samplers[i] = std::make_unique<TelemetrySampler>(
          run->nvml.get(), *target.nvml_index, kTelemetryPeriod);
    }
  }
  context.ReportProgress(0, absl::StrCat("stressing ", count, " GPU(s) for ",
                                         FormatNumber(config->seconds), " s"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < count; ++i) {
    threads.emplace_back([&, i] {
      FleetbenchGpuStressArgs args{};
      args.device = run->targets[i].info.index;
      args.dtype = DtypeNumber(config->dtype);
      args.n = config->size;
      args.seconds = config->seconds;
      args.batch_seconds = kBatchSeconds;
      args.check_every = config->check_every;
      args.workspace_bytes = uint64_t{32} << 20;
      args.max_batches =
          static_cast<int>(config->seconds / kBatchSeconds * 4) + 1000;
      absl::StatusOr<StressTiming> timing =
          run->module->StressGemm(args, cancelled);
      if (!timing.ok()) {
        statuses[i] = timing.status();
        return;
      }
      for (const FleetbenchGpuStressBatch& b : timing->batches) {
        outcomes[i].batches.push_back(
            StressBatch{b.end_seconds, b.products, b.checked != 0, b.checksum});
      }
      outcomes[i].reference_checksum = timing->reference_checksum;
      outcomes[i].algorithm = timing->algorithm;
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < count; ++i) {
    if (samplers[i] != nullptr) outcomes[i].telemetry = samplers[i]->Stop();
    const GpuTarget& target = run->targets[i];
    if (run->nvml != nullptr && target.nvml_index.has_value()) {
      if (auto facts = run->nvml->ReadDeviceFacts(*target.nvml_index);
          facts.ok()) {
        outcomes[i].facts_after = *std::move(facts);
      }
    }
  }
  for (size_t i = 0; i < count; ++i) {
    if (!statuses[i].ok()) {
      return absl::Status(statuses[i].code(),
                          absl::StrCat(kPlugin, ": gpu ",
                                       run->targets[i].info.index, ": ",
                                       statuses[i].message()));
    }
  }

  std::vector<v1::Sample> samples;
  std::vector<std::string> faulty;
  for (size_t i = 0; i < count; ++i) {
    StressSamplesForGpu gpu = StressSamples(*config, outcomes[i]);
    for (v1::Sample& s : gpu.samples) {
      AddGpuParams(*run, run->targets[i], &s);
      samples.push_back(std::move(s));
    }
    if (!gpu.faulty_reason.empty()) {
      faulty.push_back(absl::StrCat("gpu ", run->targets[i].info.index, " (",
                                    run->targets[i].info.pci_bus_id, "): ",
                                    gpu.faulty_reason));
    }
  }
  if (!faulty.empty()) {
    // The series, the throttle fractions and faulty.count = 1 are the
    // evidence: stored with the failed outcome, not lost with it.
    context.KeepSamples(std::move(samples));
    return absl::DataLossError(absl::StrCat(
        kPlugin, ": faulty GPU: ", absl::StrJoin(faulty, "; ")));
  }
  return samples;
}

std::vector<agent::MetricInfo> StressBenchmark::metrics() const {
  // NVML telemetry alongside.
  using agent::kHigherIsBetter;
  using agent::kLowerIsBetter;
  return {
      {"stress.gpu.sustained.tflops", "tflops", kHigherIsBetter,
       "GEMM throughput, mean of the last half of the run"},
      {"stress.gpu.burst.tflops", "tflops", kHigherIsBetter,
       "GEMM throughput, mean of the first 5 s"},
      {"stress.gpu.throttle_fraction.ratio", "ratio", kLowerIsBetter,
       "share of the run with a power or thermal clock reason"},
      {"stress.gpu.first_throttle.s", "s", kHigherIsBetter,
       "seconds to the first power or thermal clock reason"},
      {"stress.gpu.max_temp.C", "C", kLowerIsBetter,
       "hottest GPU temperature during the run"},
      {"stress.gpu.faulty.count", "count", kLowerIsBetter,
       "1 when the repeated product's checksum changed"},
  };
}

}  // namespace fleetbench::gpu
