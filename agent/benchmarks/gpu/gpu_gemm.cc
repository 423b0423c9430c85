#include "agent/benchmarks/gpu/gpu_gemm.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "agent/benchmarks/gemm_math.h"
#include "agent/benchmarks/gpu/gpu_math.h"
#include "agent/benchmarks/gpu/gpu_params.h"
#include "agent/benchmarks/gpu/gpu_samplers.h"
#include "agent/benchmarks/sample_summary.h"
#include "common/gpu_values.h"
#include "common/stats.h"
#include "common/units.h"

namespace fleetbench::gpu {
namespace {

constexpr char kPlugin[] = "gpu_gemm";
constexpr const char* kAllDtypes[] = {"fp64", "tf32", "fp16", "bf16", "fp8"};
constexpr char kMethod[] =
    "cublasLtMatmul, CUDA-event timed trials of back-to-back products after "
    "warm-up, median of trials";
constexpr absl::Duration kSamplePeriod = absl::Milliseconds(100);

int DtypeNumber(const std::string& dtype) {
  if (dtype == "fp64") return FLEETBENCH_GPU_FP64;
  if (dtype == "tf32") return FLEETBENCH_GPU_TF32;
  if (dtype == "fp16") return FLEETBENCH_GPU_FP16;
  if (dtype == "bf16") return FLEETBENCH_GPU_BF16;
  return FLEETBENCH_GPU_FP8;
}

}  // namespace

std::vector<std::string> SupportedGemmDtypes(int major, int minor) {
  const int capability = major * 10 + minor;
  std::vector<std::string> dtypes = {"fp64"};
  if (capability >= 80) dtypes.push_back("tf32");
  dtypes.push_back("fp16");
  if (capability >= 80) dtypes.push_back("bf16");
  if (capability >= 89) dtypes.push_back("fp8");
  return dtypes;
}

absl::StatusOr<GpuGemmConfig> ParseGpuGemmParams(const agent::Params& params) {
  ParamReader r(kPlugin, params,
                {"dtypes", "sizes", "devices", "trials", "warmup_products",
                 "products_per_trial", "trial_seconds", "workspace_mib"});
  if (absl::Status s = r.CheckKeys(); !s.ok()) return s;
  GpuGemmConfig config;
  if (r.Has("dtypes")) {
    absl::StatusOr<std::vector<std::string>> dtypes = r.List("dtypes", "");
    if (!dtypes.ok()) return dtypes.status();
    for (const std::string& dtype : *dtypes) {
      if (std::find(std::begin(kAllDtypes), std::end(kAllDtypes), dtype) ==
          std::end(kAllDtypes)) {
        return r.Bad("dtypes", absl::StrCat("'", dtype, "' is not one of ",
                                            absl::StrJoin(kAllDtypes, ", ")));
      }
    }
    config.dtypes = *std::move(dtypes);
  }
  absl::StatusOr<std::vector<std::string>> sizes = r.List("sizes", "8192");
  if (!sizes.ok()) return sizes.status();
  for (const std::string& text : *sizes) {
    agent::Params one = {{"sizes", text}};
    absl::StatusOr<int64_t> n =
        ParamReader(kPlugin, one, {"sizes"}).Int("sizes", 0, 256, 32768);
    if (!n.ok()) return n.status();
    if (*n % 16 != 0) {
      // cuBLASLt's fast kernels (and FP8 at all) need 16-element alignment.
      return r.Bad("sizes", absl::StrCat(*n, " is not a multiple of 16"));
    }
    config.sizes.push_back(static_cast<int>(*n));
  }
  absl::StatusOr<std::vector<int>> devices = r.Devices("devices");
  if (!devices.ok()) return devices.status();
  config.devices = *std::move(devices);

  absl::StatusOr<int64_t> trials = r.Int("trials", 10, 3, 1000);
  if (!trials.ok()) return trials.status();
  config.trials = static_cast<int>(*trials);
  absl::StatusOr<int64_t> warmup = r.Int("warmup_products", 3, 0, 1000);
  if (!warmup.ok()) return warmup.status();
  config.warmup_products = static_cast<int>(*warmup);
  absl::StatusOr<int64_t> per_trial = r.Int("products_per_trial", 0, 0, 10000);
  if (!per_trial.ok()) return per_trial.status();
  config.products_per_trial = static_cast<int>(*per_trial);
  absl::StatusOr<double> trial_seconds =
      r.Double("trial_seconds", 0.25, 0.01, 60);
  if (!trial_seconds.ok()) return trial_seconds.status();
  config.trial_seconds = *trial_seconds;
  absl::StatusOr<int64_t> workspace = r.Int("workspace_mib", 32, 0, 1024);
  if (!workspace.ok()) return workspace.status();
  config.workspace_mib = static_cast<int>(*workspace);
  return config;
}

absl::StatusOr<std::vector<v1::Sample>> GpuGemmBenchmark::Run(
    const agent::Params& params, const agent::RunContext& context) {
  absl::StatusOr<GpuGemmConfig> config = ParseGpuGemmParams(params);
  if (!config.ok()) return config.status();
  absl::StatusOr<GpuRun> run = SetUpGpuRun(options_, config->devices);
  if (!run.ok()) return run.status();

  // Every (device, dtype) must be possible before anything is measured.
  std::vector<std::vector<std::string>> dtypes_per_target;
  for (const GpuTarget& target : run->targets) {
    const std::vector<std::string> supported = SupportedGemmDtypes(
        target.info.compute_major, target.info.compute_minor);
    if (config->dtypes.empty()) {
      dtypes_per_target.push_back(supported);
      continue;
    }
    for (const std::string& dtype : config->dtypes) {
      if (std::find(supported.begin(), supported.end(), dtype) ==
          supported.end()) {
        return absl::FailedPreconditionError(absl::StrCat(
            kPlugin, ": ", dtype, " is not supported on GPU ",
            target.info.index, " (", target.info.name, ", compute capability ",
            target.info.compute_major, ".", target.info.compute_minor,
            "); it supports ", absl::StrJoin(supported, ", ")));
      }
    }
    dtypes_per_target.push_back(config->dtypes);
  }
  int cases = 0;
  for (const auto& dtypes : dtypes_per_target) {
    cases += static_cast<int>(dtypes.size() * config->sizes.size());
  }

  const agent::RunContext* ctx = &context;
  const CancelledFn cancelled = [ctx] { return ctx->cancelled(); };
  std::vector<v1::Sample> samples;
  int done = 0;
  for (size_t t = 0; t < run->targets.size(); ++t) {
    const GpuTarget& target = run->targets[t];
    for (const std::string& dtype : dtypes_per_target[t]) {
      for (int n : config->sizes) {
        if (context.cancelled()) {
          return absl::CancelledError(absl::StrCat(kPlugin, ": cancelled"));
        }
        const std::string label =
            absl::StrCat("gpu ", target.info.index, " ", dtype, " n=", n);
        context.ReportProgress(static_cast<double>(done) / cases, label);

        FleetbenchGpuGemmArgs args{};
        args.device = target.info.index;
        args.dtype = DtypeNumber(dtype);
        args.m = args.n = args.k = n;
        args.warmup_products = config->warmup_products;
        args.products_per_trial = config->products_per_trial;
        args.target_trial_seconds = config->trial_seconds;
        args.trials = config->trials;
        args.workspace_bytes = static_cast<uint64_t>(config->workspace_mib)
                               << 20;

        std::unique_ptr<ClockEventSampler> sampler;
        if (run->nvml != nullptr && target.nvml_index.has_value()) {
          sampler = std::make_unique<ClockEventSampler>(
              run->nvml.get(), *target.nvml_index, kSamplePeriod);
        }
        absl::StatusOr<GemmTiming> timing = run->module->Gemm(args, cancelled);
        const std::vector<uint64_t> reasons =
            sampler != nullptr ? sampler->Stop() : std::vector<uint64_t>{};
        if (!timing.ok()) {
          return absl::Status(timing.status().code(),
                              absl::StrCat(kPlugin, ": ", label, ": ",
                                           timing.status().message()));
        }

        const double flops =
            agent::GemmFlops(n, n, n) * timing->products_per_trial;
        std::vector<double> tflops;
        for (double seconds : timing->seconds_per_trial) {
          tflops.push_back(agent::TflopsFromSeconds(flops, seconds));
        }
        const double median = Median(tflops);

        v1::Sample& sample = samples.emplace_back();
        sample.set_metric(absl::StrCat("gemm.gpu.", dtype, ".tflops"));
        sample.set_unit("tflops");
        sample.set_value(median);
        AddGpuParams(*run, target, &sample);
        agent::AddSummaryParams(Summarize(tflops), "tflops",
                                sample.mutable_params());
        auto& p = *sample.mutable_params();
        p["dtype"] = dtype;
        p["size"] = absl::StrCat(n);
        p["layout"] = timing->layout;
        if (dtype == "fp8") p["fast_accumulate"] = "1";
        p["products_per_trial"] = absl::StrCat(timing->products_per_trial);
        p["warmup_products"] = absl::StrCat(config->warmup_products);
        p["workspace_mib"] = absl::StrCat(config->workspace_mib);
        p["algorithm"] = timing->algorithm;
        p["method"] = kMethod;
        if (target.sku != nullptr) {
          const double peak = PeakTflops(*target.sku, dtype);
          if (peak > 0) {
            p["peak_tflops"] = FormatNumber(peak);
            p["pct_of_peak"] = FormatNumber(PercentOfPeak(median, peak));
          }
        }
        if (sampler != nullptr) {
          p["throttle_fraction"] = FormatNumber(ThrottleFraction(reasons));
          uint64_t seen = 0;
          for (uint64_t r : reasons) seen |= r;
          p["clock_event_reasons_seen"] =
              absl::StrJoin(DecodeClockEventReasons(seen), ",");
        }
        ++done;
        context.ReportProgress(
            static_cast<double>(done) / cases,
            absl::StrCat(label, ": ", FormatNumber(median), " TFLOP/s"));
      }
    }
  }
  return samples;
}

std::vector<agent::MetricInfo> GpuGemmBenchmark::metrics() const {
  // cuBLASLt; % of the SKU's peak in each sample's params.
  using agent::kHigherIsBetter;
  return {
      {"gemm.gpu.fp64.tflops", "tflops", kHigherIsBetter,
       "GPU fp64 GEMM (cuBLASLt)"},
      {"gemm.gpu.tf32.tflops", "tflops", kHigherIsBetter,
       "GPU tf32 GEMM (cuBLASLt)"},
      {"gemm.gpu.fp16.tflops", "tflops", kHigherIsBetter,
       "GPU fp16 GEMM, fp32 accumulate (cuBLASLt)"},
      {"gemm.gpu.bf16.tflops", "tflops", kHigherIsBetter,
       "GPU bf16 GEMM, fp32 accumulate (cuBLASLt)"},
      {"gemm.gpu.fp8.tflops", "tflops", kHigherIsBetter,
       "GPU fp8 e4m3 GEMM (cuBLASLt, sm_89+)"},
  };
}

}  // namespace fleetbench::gpu
