#include "agent/benchmarks/gemm/cpu_gemm.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "agent/benchmarks/gemm/openblas_library.h"
#include "agent/benchmarks/gemm_math.h"
#include "agent/benchmarks/param_reader.h"
#include "agent/benchmarks/sample_summary.h"
#include "common/stats.h"
#include "common/units.h"

namespace fleetbench::agent {
namespace {

constexpr absl::string_view kAllowedKeys[] = {
    "dtypes", "sizes", "threads", "min_seconds", "max_runs", "warmup_runs"};
constexpr absl::string_view kAllowedDtypes[] = {"fp32", "fp64"};
constexpr int kMinSize = 16;
constexpr int kMaxSize = 32768;
constexpr char kMethod[] =
    "openblas cblas_?gemm, median of timed runs after warm-up";
// Matrices larger than this share of physical memory are refused: past it
// the kernel's OOM killer, not this plugin, decides how the run ends.
constexpr double kMaxMemoryShare = 0.9;

int OnlineCores() {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return static_cast<int>(std::clamp<long>(cores, 1, 1024));
}

double PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<double>(pages) * static_cast<double>(page_size);
}

size_t ElementSize(const std::string& dtype) {
  return dtype == "fp32" ? sizeof(float) : sizeof(double);
}

// OpenBLAS's thread count is process-wide: set it for the run, then put the
// caller's value back.
class ScopedBlasThreads {
 public:
  ScopedBlasThreads(const OpenBlasLibrary& blas, int threads)
      : blas_(blas), previous_(blas.get_num_threads()) {
    blas_.set_num_threads(threads);
  }
  ~ScopedBlasThreads() { blas_.set_num_threads(previous_); }
  ScopedBlasThreads(const ScopedBlasThreads&) = delete;
  ScopedBlasThreads& operator=(const ScopedBlasThreads&) = delete;

 private:
  const OpenBlasLibrary& blas_;
  int previous_;
};

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// n×n row-major matrix on a 64-byte (cache line, AVX-512 vector) boundary.
template <typename T>
using Matrix = std::unique_ptr<T[], FreeDeleter>;

template <typename T>
Matrix<T> AllocateMatrix(int n) {
  constexpr size_t kAlignment = 64;
  size_t bytes = static_cast<size_t>(n) * static_cast<size_t>(n) * sizeof(T);
  bytes = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  return Matrix<T>(static_cast<T*>(std::aligned_alloc(kAlignment, bytes)));
}

// Uniform in [-1, 1) from splitmix64: deterministic, and fast enough that
// filling two 32768² matrices does not take longer than measuring them.
template <typename T>
void FillUniform(T* data, size_t count, uint64_t seed) {
  uint64_t state = seed;
  for (size_t i = 0; i < count; ++i) {
    state += 0x9e3779b97f4a7c15ULL;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    const double unit = static_cast<double>(z >> 11) * 0x1.0p-53;  // [0, 1)
    data[i] = static_cast<T>(2.0 * unit - 1.0);
  }
}

void Gemm(const OpenBlasLibrary& blas, int n, const float* a, const float* b,
          float* c) {
  blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b,
              n, 0.0f, c, n);
}
void Gemm(const OpenBlasLibrary& blas, int n, const double* a,
          const double* b, double* c) {
  blas.dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b,
              n, 0.0, c, n);
}

// Recomputes C[i][j] in double and compares within the standard inner-product
// error bound, so a BLAS that returns early cannot report absurd TFLOP/s.
template <typename T>
absl::Status CheckEntry(int n, const T* a, const T* b, const T* c, int i, int j,
                        absl::string_view label) {
  double want = 0;
  double magnitude = 0;
  for (int k = 0; k < n; ++k) {
    const double term = static_cast<double>(a[static_cast<size_t>(i) * n + k]) *
                        static_cast<double>(b[static_cast<size_t>(k) * n + j]);
    want += term;
    magnitude += std::abs(term);
  }
  const double got = c[static_cast<size_t>(i) * n + j];
  const double tolerance =
      2.0 * n * std::numeric_limits<T>::epsilon() * magnitude + 1e-30;
  if (!(std::abs(got - want) <= tolerance)) {
    return absl::InternalError(
        absl::StrFormat("gemm: %s: result check failed at C[%d][%d]: got %g, "
                        "want %g (tolerance %g)",
                        label, i, j, got, want, tolerance));
  }
  return absl::OkStatus();
}

// Reports progress at the start of each case and at most once a second
// inside it, so tiny sizes with many runs do not flood the runner.
class Progress {
 public:
  Progress(const RunContext& context, int cases)
      : context_(context), cases_(cases) {}

  void Report(int case_index, double case_fraction, const std::string& what,
              bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    const double fraction =
        (case_index + std::clamp(case_fraction, 0.0, 1.0)) / cases_;
    context_.ReportProgress(fraction, what);
  }

 private:
  const RunContext& context_;
  int cases_;
  std::chrono::steady_clock::time_point last_{};
};

// Times one (dtype, size) case; returns TFLOP/s per timed run.
template <typename T>
absl::StatusOr<std::vector<double>> TimeCase(const OpenBlasLibrary& blas, int n,
                                             const CpuGemmConfig& config,
                                             const RunContext& context,
                                             Progress& progress, int case_index,
                                             const std::string& label) {
  Matrix<T> a = AllocateMatrix<T>(n);
  Matrix<T> b = AllocateMatrix<T>(n);
  Matrix<T> c = AllocateMatrix<T>(n);
  if (a == nullptr || b == nullptr || c == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("gemm: ", label, ": cannot allocate the matrices"));
  }
  const size_t count = static_cast<size_t>(n) * static_cast<size_t>(n);
  // Random values, not zeros: some CPUs draw less power (and so clock higher)
  // on zero operands, which would flatter the result.
  FillUniform(a.get(), count, 1);
  FillUniform(b.get(), count, 2);
  // Touch C's pages now so the first call does not pay for page faults.
  std::fill(c.get(), c.get() + count, T{0});

  progress.Report(case_index, 0, absl::StrCat(label, ": warm-up"), true);
  for (int i = 0; i < config.warmup_runs; ++i) {
    if (context.cancelled()) return absl::CancelledError("gemm: cancelled");
    Gemm(blas, n, a.get(), b.get(), c.get());
  }

  const double flops = GemmFlops(n, n, n);
  const RepetitionPolicy policy{config.min_seconds, config.max_runs};
  std::vector<double> tflops;
  double timed_seconds = 0;
  while (!EnoughRuns(policy, static_cast<int>(tflops.size()), timed_seconds)) {
    if (context.cancelled()) return absl::CancelledError("gemm: cancelled");
    const auto start = std::chrono::steady_clock::now();
    Gemm(blas, n, a.get(), b.get(), c.get());
    const auto stop = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(stop - start).count();
    timed_seconds += seconds;
    tflops.push_back(TflopsFromSeconds(flops, seconds));
    const double case_fraction = RepetitionFraction(
        policy, static_cast<int>(tflops.size()), timed_seconds);
    progress.Report(case_index, case_fraction,
                    absl::StrCat(label, ": run ", tflops.size()), false);
  }

  for (const auto& [i, j] : {std::pair{0, 0}, std::pair{n - 1, n - 1}}) {
    if (absl::Status s = CheckEntry(n, a.get(), b.get(), c.get(), i, j, label);
        !s.ok()) {
      return s;
    }
  }
  return tflops;
}

}  // namespace

absl::StatusOr<CpuGemmConfig> ParseCpuGemmParams(const Params& params) {
  const ParamReader in("gemm", params);
  if (absl::Status s = in.CheckKeys(kAllowedKeys); !s.ok()) return s;
  CpuGemmConfig config;

  // Repeats are refused: a repeated case would give two samples nobody can
  // tell apart.
  absl::StatusOr<std::vector<std::string>> dtypes =
      in.List("dtypes", "fp32,fp64", kAllowedDtypes);
  if (!dtypes.ok()) return dtypes.status();
  config.dtypes = *std::move(dtypes);

  absl::StatusOr<std::vector<std::string>> sizes = in.List("sizes", "4096");
  if (!sizes.ok()) return sizes.status();
  for (const std::string& text : *sizes) {
    absl::StatusOr<int64_t> size = in.IntFrom("sizes", text, kMinSize, kMaxSize);
    if (!size.ok()) return size.status();
    config.sizes.push_back(static_cast<int>(*size));
  }

  absl::StatusOr<int64_t> threads = in.Int("threads", OnlineCores(), 1, 1024);
  if (!threads.ok()) return threads.status();
  config.threads = static_cast<int>(*threads);

  absl::StatusOr<double> min_seconds = in.Double("min_seconds", 2, 0.01, 600);
  if (!min_seconds.ok()) return min_seconds.status();
  config.min_seconds = *min_seconds;

  absl::StatusOr<int64_t> max_runs = in.Int("max_runs", 50, 1, 100000);
  if (!max_runs.ok()) return max_runs.status();
  config.max_runs = static_cast<int>(*max_runs);

  absl::StatusOr<int64_t> warmup_runs = in.Int("warmup_runs", 1, 0, 1000);
  if (!warmup_runs.ok()) return warmup_runs.status();
  config.warmup_runs = static_cast<int>(*warmup_runs);
  return config;
}

std::vector<MetricInfo> CpuGemmBenchmark::metrics() const {
  return {
      {"gemm.cpu.fp32.tflops", "tflops", kHigherIsBetter,
       "CPU single-precision GEMM (OpenBLAS sgemm), median over repetitions"},
      {"gemm.cpu.fp64.tflops", "tflops", kHigherIsBetter,
       "CPU double-precision GEMM (OpenBLAS dgemm), median over repetitions"},
  };
}

absl::Status CpuGemmBenchmark::Probe() const { return OpenBlas().status(); }

absl::Status CpuGemmBenchmark::ValidateParams(const Params& params) const {
  return ParseCpuGemmParams(params).status();
}

absl::StatusOr<std::vector<v1::Sample>> CpuGemmBenchmark::Run(
    const Params& params, const RunContext& context) {
  absl::StatusOr<CpuGemmConfig> config = ParseCpuGemmParams(params);
  if (!config.ok()) return config.status();

  // Refuse up front rather than after measuring the smaller cases.
  const double memory = PhysicalMemoryBytes();
  for (const std::string& dtype : config->dtypes) {
    for (int n : config->sizes) {
      const double needed = 3.0 * n * n * ElementSize(dtype);
      if (memory > 0 && needed > kMaxMemoryShare * memory) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "gemm: %s n=%d needs %.1f GiB for A, B and C; this node has "
            "%.1f GiB of memory (at most %.0f%% is used); choose a smaller "
            "size",
            dtype, n, needed / kGiB, memory / kGiB, kMaxMemoryShare * 100));
      }
    }
  }

  absl::StatusOr<const OpenBlasLibrary*> blas = OpenBlas();
  if (!blas.ok()) return blas.status();
  ScopedBlasThreads blas_threads(**blas, config->threads);
  // OpenBLAS caps the count at its build-time maximum; report what it uses.
  const int threads = (*blas)->get_num_threads();
  const std::string blas_config(
      absl::StripAsciiWhitespace((*blas)->get_config()));

  const int cases =
      static_cast<int>(config->dtypes.size() * config->sizes.size());
  Progress progress(context, cases);
  std::vector<v1::Sample> samples;
  int case_index = 0;
  for (const std::string& dtype : config->dtypes) {
    for (int n : config->sizes) {
      if (context.cancelled()) return absl::CancelledError("gemm: cancelled");
      const std::string label = absl::StrCat(dtype, " n=", n);
      absl::StatusOr<std::vector<double>> tflops =
          dtype == "fp32" ? TimeCase<float>(**blas, n, *config, context, progress,
                                            case_index, label)
                          : TimeCase<double>(**blas, n, *config, context, progress,
                                             case_index, label);
      if (!tflops.ok()) return tflops.status();
      const Summary summary = Summarize(*tflops);

      v1::Sample& sample = samples.emplace_back();
      sample.set_metric(absl::StrCat("gemm.cpu.", dtype, ".tflops"));
      sample.set_unit("tflops");
      sample.set_value(summary.median);
      auto& p = *sample.mutable_params();
      p["dtype"] = dtype;
      p["size"] = absl::StrCat(n);
      p["threads"] = absl::StrCat(threads);
      if (threads != config->threads) {
        p["threads_requested"] = absl::StrCat(config->threads);
      }
      AddSummaryParams(summary, "tflops", &p);
      p["warmup_runs"] = absl::StrCat(config->warmup_runs);
      p["method"] = kMethod;
      p["blas"] = blas_config;
      ++case_index;
      progress.Report(
          case_index, 0,
          absl::StrCat(label, ": ", FormatNumber(summary.median), " TFLOP/s"),
          true);
    }
  }
  return samples;
}

}  // namespace fleetbench::agent
