#include "agent/benchmarks/gemm/cpu_gemm.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <type_traits>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
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
    "dtypes", "sizes", "m", "n", "k", "transa", "transb", "shapes",
    "threads", "min_seconds", "max_runs", "warmup_runs"};
constexpr absl::string_view kAllowedDtypes[] = {"fp32", "fp64", "bf16", "fp16"};
constexpr absl::string_view kTransposes[] = {"N", "T"};
constexpr int kMinSize = 16;
constexpr int kMaxSize = 32768;
// m, n, k one at a time: 1 allows the skinny shapes of inference (m = 1);
// the memory check bounds the product.
constexpr int kMaxDimension = 1 << 20;
// A shape's A, B and C together: no more elements than the largest square
// size's three matrices, so a list of shapes cannot ask for more than sizes
// can (whether it fits this node's memory is Run's check).
constexpr double kMaxElements = 3.0 * kMaxSize * kMaxSize;
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

// Bytes of one element of A and B, and of C (bf16 and fp16 multiply into
// an fp32 C).
size_t InputSize(const std::string& dtype) {
  if (dtype == "fp64") return sizeof(double);
  if (dtype == "fp32") return sizeof(float);
  return sizeof(uint16_t);
}
size_t OutputSize(const std::string& dtype) {
  return dtype == "fp64" ? sizeof(double) : sizeof(float);
}

// The 16-bit formats as storage: BLAS reads the bits, the check reads
// them back as float.
struct Bf16 {
  uint16_t bits;
};
struct Fp16 {
  uint16_t bits;
};

Bf16 ToBf16(float value) {  // round to nearest even, as cblas_sbstobf16
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  bits += 0x7fff + ((bits >> 16) & 1);
  return Bf16{static_cast<uint16_t>(bits >> 16)};
}
Fp16 ToFp16(float value) {
  const _Float16 half = static_cast<_Float16>(value);
  Fp16 out;
  std::memcpy(&out.bits, &half, sizeof(out.bits));
  return out;
}

template <typename T>
T FromUnit(double value) {
  if constexpr (std::is_same_v<T, Bf16>) {
    return ToBf16(static_cast<float>(value));
  } else if constexpr (std::is_same_v<T, Fp16>) {
    return ToFp16(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}
template <typename T>
double ToDouble(T value) {
  if constexpr (std::is_same_v<T, Bf16>) {
    const uint32_t bits = static_cast<uint32_t>(value.bits) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
  } else if constexpr (std::is_same_v<T, Fp16>) {
    _Float16 half;
    std::memcpy(&half, &value.bits, sizeof(half));
    return static_cast<double>(static_cast<float>(half));
  } else {
    return static_cast<double>(value);
  }
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

// rows×cols row-major matrix on a 64-byte (cache line, AVX-512 vector)
// boundary.
template <typename T>
using Matrix = std::unique_ptr<T[], FreeDeleter>;

template <typename T>
Matrix<T> AllocateMatrix(int64_t rows, int64_t cols) {
  constexpr size_t kAlignment = 64;
  size_t bytes = static_cast<size_t>(rows) * static_cast<size_t>(cols) * sizeof(T);
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
    data[i] = FromUnit<T>(2.0 * unit - 1.0);
  }
}

CBLAS_TRANSPOSE Cblas(bool transpose) {
  return transpose ? CblasTrans : CblasNoTrans;
}

// C (m×n) = op(A)·op(B), op(A) m×k, op(B) k×n, row-major. A is stored m×k
// (k×m when transposed) and B k×n (n×k): the leading dimensions follow.
struct Shape {
  int64_t m = 0, n = 0, k = 0;
  bool transa = false, transb = false;
  int64_t lda() const { return transa ? m : k; }
  int64_t ldb() const { return transb ? k : n; }
  int64_t a_rows() const { return transa ? k : m; }
  int64_t b_rows() const { return transb ? n : k; }
};

void Gemm(const OpenBlasLibrary& blas, const Shape& s, const float* a,
          const float* b, float* c) {
  blas.sgemm(CblasRowMajor, Cblas(s.transa), Cblas(s.transb), s.m, s.n, s.k,
             1.0f, a, s.lda(), b, s.ldb(), 0.0f, c, s.n);
}
void Gemm(const OpenBlasLibrary& blas, const Shape& s, const double* a,
          const double* b, double* c) {
  blas.dgemm(CblasRowMajor, Cblas(s.transa), Cblas(s.transb), s.m, s.n, s.k,
             1.0, a, s.lda(), b, s.ldb(), 0.0, c, s.n);
}
void Gemm(const OpenBlasLibrary& blas, const Shape& s, const Bf16* a,
          const Bf16* b, float* c) {
  blas.sbgemm(CblasRowMajor, Cblas(s.transa), Cblas(s.transb), s.m, s.n, s.k,
              1.0f, reinterpret_cast<const bfloat16*>(a), s.lda(),
              reinterpret_cast<const bfloat16*>(b), s.ldb(), 0.0f, c, s.n);
}
void Gemm(const OpenBlasLibrary& blas, const Shape& s, const Fp16* a,
          const Fp16* b, float* c) {
  blas.shgemm(CblasRowMajor, Cblas(s.transa), Cblas(s.transb), s.m, s.n, s.k,
              1.0f, reinterpret_cast<const uint16_t*>(a), s.lda(),
              reinterpret_cast<const uint16_t*>(b), s.ldb(), 0.0f, c, s.n);
}

// Recomputes C[i][j] in double from the stored inputs and compares within
// the standard inner-product error bound of C's precision (the 16-bit
// formats' products are exact in fp32, so fp32's bound holds for them), so
// a BLAS that returns early cannot report absurd TFLOP/s.
template <typename In, typename Out>
absl::Status CheckEntry(const Shape& s, const In* a, const In* b,
                        const Out* c, int64_t i, int64_t j,
                        absl::string_view label) {
  double want = 0;
  double magnitude = 0;
  for (int64_t p = 0; p < s.k; ++p) {
    const In x = s.transa ? a[p * s.m + i] : a[i * s.k + p];
    const In y = s.transb ? b[j * s.k + p] : b[p * s.n + j];
    const double term = ToDouble(x) * ToDouble(y);
    want += term;
    magnitude += std::abs(term);
  }
  const double got = c[i * s.n + j];
  const double tolerance =
      2.0 * s.k * std::numeric_limits<Out>::epsilon() * magnitude + 1e-30;
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

// Times one (dtype, shape) case; returns TFLOP/s per timed run. In: the
// element of A and B; Out: of C.
template <typename In, typename Out>
absl::StatusOr<std::vector<double>> TimeCase(const OpenBlasLibrary& blas,
                                             const Shape& shape,
                                             const CpuGemmConfig& config,
                                             const RunContext& context,
                                             Progress& progress, int case_index,
                                             const std::string& label) {
  Matrix<In> a = AllocateMatrix<In>(shape.a_rows(), shape.lda());
  Matrix<In> b = AllocateMatrix<In>(shape.b_rows(), shape.ldb());
  Matrix<Out> c = AllocateMatrix<Out>(shape.m, shape.n);
  if (a == nullptr || b == nullptr || c == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("gemm: ", label, ": cannot allocate the matrices"));
  }
  // Random values, not zeros: some CPUs draw less power (and so clock higher)
  // on zero operands, which would flatter the result.
  FillUniform(a.get(), static_cast<size_t>(shape.m * shape.k), 1);
  FillUniform(b.get(), static_cast<size_t>(shape.k * shape.n), 2);
  // Touch C's pages now so the first call does not pay for page faults.
  const size_t c_count = static_cast<size_t>(shape.m * shape.n);
  std::fill(c.get(), c.get() + c_count, Out{0});


  progress.Report(case_index, 0, absl::StrCat(label, ": warm-up"), true);
  for (int i = 0; i < config.warmup_runs; ++i) {
    if (context.cancelled()) return absl::CancelledError("gemm: cancelled");
    Gemm(blas, shape, a.get(), b.get(), c.get());
  }

  const double flops = GemmFlops(shape.m, shape.n, shape.k);
  const RepetitionPolicy policy{config.min_seconds, config.max_runs};
  std::vector<double> tflops;
  double timed_seconds = 0;
  while (!EnoughRuns(policy, static_cast<int>(tflops.size()), timed_seconds)) {
    if (context.cancelled()) return absl::CancelledError("gemm: cancelled");
    const auto start = std::chrono::steady_clock::now();
    Gemm(blas, shape, a.get(), b.get(), c.get());
    const auto stop = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(stop - start).count();
    timed_seconds += seconds;
    tflops.push_back(TflopsFromSeconds(flops, seconds));
    const double case_fraction = RepetitionFraction(
        policy, static_cast<int>(tflops.size()), timed_seconds);
    progress.Report(case_index, case_fraction,
                    absl::StrCat(label, ": run ", tflops.size()), false);
  }

  for (const auto& [i, j] :
       {std::pair<int64_t, int64_t>{0, 0},
        std::pair<int64_t, int64_t>{shape.m - 1, shape.n - 1}}) {
    if (absl::Status s =
            CheckEntry(shape, a.get(), b.get(), c.get(), i, j, label);
        !s.ok()) {
      return s;
    }
  }
  return tflops;
}

// An entry as the user wrote it, clipped so an error stays one short line.
std::string Quoted(absl::string_view text) {
  constexpr size_t kMaxShown = 40;
  return absl::StrCat("'", text.substr(0, kMaxShown),
                      text.size() > kMaxShown ? "...'" : "'");
}

double Elements(const GemmShape& s) {
  const double m = s.m, n = s.n, k = s.k;
  return m * k + k * n + m * n;
}

// "4096x1024x256" or "4096x1024x256:TN": m×n×k, then op(A) and op(B).
absl::StatusOr<GemmShape> ParseShape(const ParamReader& in,
                                     absl::string_view text) {
  const std::vector<absl::string_view> halves = absl::StrSplit(text, ':');
  const std::vector<absl::string_view> dims = absl::StrSplit(halves[0], 'x');
  if (halves.size() > 2 || dims.size() != 3) {
    return in.Error("shapes", absl::StrCat(Quoted(text),
                                           " is not MxNxK or MxNxK:AB (e.g. "
                                           "4096x1024x256:TN)"));
  }
  GemmShape shape;
  int* out[] = {&shape.m, &shape.n, &shape.k};
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<int64_t> value =
        in.IntFrom("shapes", dims[i], 1, kMaxDimension);
    if (!value.ok()) return value.status();
    *out[i] = static_cast<int>(*value);
  }
  if (halves.size() == 2) {
    const absl::string_view ops = halves[1];
    if (ops.size() != 2 || (ops[0] != 'N' && ops[0] != 'T') ||
        (ops[1] != 'N' && ops[1] != 'T')) {
      return in.Error("shapes",
                      absl::StrCat(Quoted(text), ": ", Quoted(ops),
                                   " is not two of N (as stored) or T "
                                   "(transposed), for A then B"));
    }
    shape.transa = ops[0] == 'T';
    shape.transb = ops[1] == 'T';
  }
  return shape;
}

absl::Status CheckElements(const ParamReader& in, const std::string& key,
                           const GemmShape& shape, absl::string_view text) {
  if (Elements(shape) <= kMaxElements) return absl::OkStatus();
  return in.Error(key, absl::StrFormat(
                           "%s: A, B and C would hold %.3g elements, more "
                           "than the %d-square size's %.3g",
                           text, Elements(shape), kMaxSize, kMaxElements));
}

// The `shapes` list: each entry parsed and bounded, at most kMaxGemmShapes,
// no case twice (also when written two ways, "64x64x64" and "64x64x64:NN"),
// and none of the keys that describe cases another way.
absl::StatusOr<std::vector<GemmShape>> ParseShapes(const ParamReader& in) {
  for (const char* other : {"sizes", "m", "n", "k", "transa", "transb"}) {
    if (in.Has(other)) {
      return in.Error("shapes", absl::StrCat(
                                    "give either shapes or ", other,
                                    ", not both (transposes go in each "
                                    "entry: 4096x1024x256:TN)"));
    }
  }
  absl::StatusOr<std::vector<std::string>> entries = in.List("shapes", "");
  if (!entries.ok()) return entries.status();
  if (entries->size() > static_cast<size_t>(kMaxGemmShapes)) {
    return in.Error("shapes", absl::StrCat(entries->size(),
                                           " entries; at most ",
                                           kMaxGemmShapes));
  }
  std::vector<GemmShape> shapes;
  for (const std::string& text : *entries) {
    absl::StatusOr<GemmShape> shape = ParseShape(in, text);
    if (!shape.ok()) return shape.status();
    if (absl::Status s = CheckElements(in, "shapes", *shape, Quoted(text));
        !s.ok()) {
      return s;
    }
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (shapes[i] == *shape) {
        return in.Error("shapes", absl::StrCat(Quoted(text),
                                               " is the same case as ",
                                               Quoted((*entries)[i])));
      }
    }
    shapes.push_back(*shape);
  }
  return shapes;
}

}  // namespace

absl::Status CheckHalfPrecision(const OpenBlasLibrary& blas,
                                const std::vector<std::string>& dtypes) {
  for (const std::string& dtype : dtypes) {
    const bool missing = (dtype == "bf16" && blas.sbgemm == nullptr) ||
                         (dtype == "fp16" && blas.shgemm == nullptr);
    if (!missing) continue;
    const std::string config(absl::StripAsciiWhitespace(
        blas.get_config != nullptr ? blas.get_config() : ""));
    return absl::FailedPreconditionError(absl::StrCat(
        "gemm: ", dtype, ": this OpenBLAS (", config.empty() ? blas.path : config,
        ") has no ", dtype == "bf16" ? "cblas_sbgemm" : "cblas_shgemm",
        dtype == "bf16"
            ? " (built without BUILD_BFLOAT16, as Debian's is)"
            : " (fp16 GEMM is newer than this release)",
        "; drop ", dtype, " from dtypes"));
  }
  return absl::OkStatus();
}

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

  // Square sizes, one shape (m, n, k, all three) or a list of shapes, one
  // of the three: a mix would leave the reader guessing which cases run.
  const bool any_mnk = in.Has("m") || in.Has("n") || in.Has("k");
  if (in.Has("shapes")) {
    absl::StatusOr<std::vector<GemmShape>> shapes = ParseShapes(in);
    if (!shapes.ok()) return shapes.status();
    config.shapes = *std::move(shapes);
  } else if (any_mnk) {
    for (const char* key : {"m", "n", "k"}) {
      if (!in.Has(key)) {
        return in.Error(key, "missing: give m, n and k together");
      }
    }
    if (in.Has("sizes")) {
      return in.Error("sizes", "give either sizes (square) or m, n and k, not both");
    }
    for (auto [key, out] : {std::pair{"m", &config.m}, std::pair{"n", &config.n},
                            std::pair{"k", &config.k}}) {
      absl::StatusOr<int64_t> value = in.Int(key, 0, 1, kMaxDimension);
      if (!value.ok()) return value.status();
      *out = static_cast<int>(*value);
    }
    if (absl::Status s = CheckElements(
            in, "m", GemmShape{config.m, config.n, config.k},
            absl::StrCat("m=", config.m, " n=", config.n, " k=", config.k));
        !s.ok()) {
      return s;
    }
  } else {
    absl::StatusOr<std::vector<std::string>> sizes = in.List("sizes", "4096");
    if (!sizes.ok()) return sizes.status();
    for (const std::string& text : *sizes) {
      absl::StatusOr<int64_t> size = in.IntFrom("sizes", text, kMinSize, kMaxSize);
      if (!size.ok()) return size.status();
      config.sizes.push_back(static_cast<int>(*size));
    }
  }
  for (auto [key, out] : {std::pair{"transa", &config.transa},
                          std::pair{"transb", &config.transb}}) {
    const std::string text = in.Get(key, "N");
    if (std::find(std::begin(kTransposes), std::end(kTransposes), text) ==
        std::end(kTransposes)) {
      return in.Error(key, absl::StrCat("'", text,
                                        "' is not N (as stored) or T (transposed)"));
    }
    *out = text == "T";
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
      {"gemm.cpu.bf16.tflops", "tflops", kHigherIsBetter,
       "CPU bf16 GEMM into fp32 (OpenBLAS sbgemm), median over repetitions"},
      {"gemm.cpu.fp16.tflops", "tflops", kHigherIsBetter,
       "CPU fp16 GEMM into fp32 (OpenBLAS shgemm), median over repetitions"},
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

  std::vector<Shape> shapes;
  if (!config->shapes.empty()) {
    for (const GemmShape& g : config->shapes) {
      shapes.push_back({g.m, g.n, g.k, g.transa, g.transb});
    }
  } else if (config->m > 0) {
    shapes.push_back({config->m, config->n, config->k, config->transa,
                      config->transb});
  } else {
    for (int n : config->sizes) {
      shapes.push_back({n, n, n, config->transa, config->transb});
    }
  }

  // Refuse up front rather than after measuring the smaller cases.
  const double memory = PhysicalMemoryBytes();
  for (const std::string& dtype : config->dtypes) {
    for (const Shape& shape : shapes) {
      const double needed =
          static_cast<double>(shape.m * shape.k + shape.k * shape.n) *
              InputSize(dtype) +
          static_cast<double>(shape.m * shape.n) * OutputSize(dtype);
      if (memory > 0 && needed > kMaxMemoryShare * memory) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "gemm: %s m=%d n=%d k=%d needs %.1f GiB for A, B and C; this node "
            "has %.1f GiB of memory (at most %.0f%% is used); choose a smaller "
            "size",
            dtype, shape.m, shape.n, shape.k, needed / kGiB, memory / kGiB,
            kMaxMemoryShare * 100));
      }
    }
  }

  absl::StatusOr<const OpenBlasLibrary*> blas = OpenBlas();
  if (!blas.ok()) return blas.status();
  // A 16-bit GEMM this OpenBLAS lacks: skipped with the reason (the runner
  // reports FAILED_PRECONDITION as skipped) before anything is measured.
  if (absl::Status s = CheckHalfPrecision(**blas, config->dtypes); !s.ok()) {
    return s;
  }
  ScopedBlasThreads blas_threads(**blas, config->threads);
  // OpenBLAS caps the count at its build-time maximum; report what it uses.
  const int threads = (*blas)->get_num_threads();
  const std::string blas_config(
      absl::StripAsciiWhitespace((*blas)->get_config()));

  const int cases =
      static_cast<int>(config->dtypes.size() * shapes.size());
  Progress progress(context, cases);
  std::vector<v1::Sample> samples;
  int case_index = 0;
  for (const std::string& dtype : config->dtypes) {
    for (const Shape& shape : shapes) {
      if (context.cancelled()) return absl::CancelledError("gemm: cancelled");
      const bool square = shape.m == shape.n && shape.n == shape.k;
      std::string label =
          square ? absl::StrCat(dtype, " n=", shape.n)
                 : absl::StrCat(dtype, " m=", shape.m, " n=", shape.n,
                                " k=", shape.k);
      if (shape.transa || shape.transb) {
        absl::StrAppend(&label, " ", shape.transa ? "T" : "N",
                        shape.transb ? "T" : "N");
      }
      absl::StatusOr<std::vector<double>> tflops;
      if (dtype == "fp32") {
        tflops = TimeCase<float, float>(**blas, shape, *config, context,
                                        progress, case_index, label);
      } else if (dtype == "fp64") {
        tflops = TimeCase<double, double>(**blas, shape, *config, context,
                                          progress, case_index, label);
      } else if (dtype == "bf16") {
        tflops = TimeCase<Bf16, float>(**blas, shape, *config, context,
                                       progress, case_index, label);
      } else {
        tflops = TimeCase<Fp16, float>(**blas, shape, *config, context,
                                       progress, case_index, label);
      }
      if (!tflops.ok()) return tflops.status();
      const Summary summary = Summarize(*tflops);

      v1::Sample& sample = samples.emplace_back();
      sample.set_metric(absl::StrCat("gemm.cpu.", dtype, ".tflops"));
      sample.set_unit("tflops");
      sample.set_value(summary.median);
      auto& p = *sample.mutable_params();
      p["dtype"] = dtype;
      // "size" only for square cases, as before m, n and k existed, so
      // their history reads the same.
      if (square) p["size"] = absl::StrCat(shape.n);
      p["m"] = absl::StrCat(shape.m);
      p["n"] = absl::StrCat(shape.n);
      p["k"] = absl::StrCat(shape.k);
      p["transa"] = shape.transa ? "T" : "N";
      p["transb"] = shape.transb ? "T" : "N";
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
