#include "agent/benchmarks/mem/mem_stream.h"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <thread>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/benchmarks/param_reader.h"
#include "agent/benchmarks/stream/last_level_cache.h"
#include "agent/benchmarks/stream/stream_math.h"
#include "agent/benchmarks/stream/stream_team.h"
#include "common/stats.h"
#include "common/units.h"

namespace fleetbench::agent {
namespace {

constexpr absl::string_view kAllowedKeys[] = {"array_mib", "repetitions",
                                              "threads"};
// Past this share of physical memory the OOM killer, not this plugin,
// decides how the run ends.
constexpr double kMaxMemoryShare = 0.8;
// Values grow 12× per repetition with s = 3; 200 keeps them far from
// overflow (12^200 ≈ 10^216).
constexpr int kMaxRepetitions = 200;
constexpr char kMethod[] =
    "STREAM kernels, one pinned thread per CPU, first-touch slices, best of "
    "timed repetitions (first untimed)";
// Since the copy kernel became a loop instead of the memmove GCC made of it
// (stream_kernels.h); samples before it lack this param.
constexpr char kCopyKernel[] = "loop (no memmove)";

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

int DefaultThreads() {
  const size_t allowed = AllowedCpus().size();
  if (allowed > 0) return static_cast<int>(allowed);
  return static_cast<int>(
      std::clamp<long>(sysconf(_SC_NPROCESSORS_ONLN), 1, 4096));
}

double PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<double>(pages) * static_cast<double>(page_size);
}

// An anonymous mapping nobody has touched yet, so that the first write
// (by the owning thread) decides where each page lives. Aligned to 2 MiB
// so that transparent huge pages can back it where the system allows.
class UntouchedArray {
 public:
  static std::unique_ptr<UntouchedArray> Map(int64_t n) {
    constexpr size_t kAlign = size_t{2} << 20;
    const size_t bytes = static_cast<size_t>(n) * sizeof(double) + kAlign;
    void* raw = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    auto address = reinterpret_cast<uintptr_t>(raw);
    address = (address + kAlign - 1) / kAlign * kAlign;
    return std::unique_ptr<UntouchedArray>(
        new UntouchedArray(raw, bytes, reinterpret_cast<double*>(address)));
  }
  ~UntouchedArray() { munmap(raw_, bytes_); }
  UntouchedArray(const UntouchedArray&) = delete;
  UntouchedArray& operator=(const UntouchedArray&) = delete;

  double* data() const { return data_; }

 private:
  UntouchedArray(void* raw, size_t bytes, double* data)
      : raw_(raw), bytes_(bytes), data_(data) {}
  void* raw_;
  size_t bytes_;
  double* data_;
};

absl::Status CheckArray(const char* name, double sum_abs_error, int64_t n,
                        double expected) {
  const double error = StreamAverageRelativeError(sum_abs_error, n, expected);
  if (!(error <= kStreamEpsilon)) {
    return absl::InternalError(absl::StrFormat(
        "mem: validation failed: array %s average relative error %g exceeds "
        "%g (expected every element to be %.17g); the memory or the CPU "
        "returned wrong results",
        name, error, kStreamEpsilon, expected));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MemStreamConfig> ParseMemStreamParams(const Params& params) {
  ParamReader reader("mem", params);
  if (absl::Status s = reader.CheckKeys(kAllowedKeys); !s.ok()) return s;
  MemStreamConfig config;
  if (reader.Has("array_mib")) {
    absl::StatusOr<int64_t> array_mib =
        reader.Int("array_mib", 0, 1, int64_t{1} << 20);
    if (!array_mib.ok()) return array_mib.status();
    config.array_mib = *array_mib;
  }

  absl::StatusOr<int64_t> repetitions =
      reader.Int("repetitions", 10, 2, kMaxRepetitions);
  if (!repetitions.ok()) return repetitions.status();
  config.repetitions = static_cast<int>(*repetitions);

  absl::StatusOr<int64_t> threads =
      reader.Int("threads", DefaultThreads(), 1, 4096);
  if (!threads.ok()) return threads.status();
  config.threads = static_cast<int>(*threads);
  return config;
}

std::vector<MetricInfo> MemStreamBenchmark::metrics() const {
  // STREAM kernels, best of N.
  return {
      {"mem.copy.GBps", "GBps", kHigherIsBetter,
       "STREAM copy bandwidth, all cores"},
      {"mem.scale.GBps", "GBps", kHigherIsBetter,
       "STREAM scale bandwidth, all cores"},
      {"mem.add.GBps", "GBps", kHigherIsBetter,
       "STREAM add bandwidth, all cores"},
      {"mem.triad.GBps", "GBps", kHigherIsBetter,
       "STREAM triad bandwidth, all cores"},
  };
}

absl::Status MemStreamBenchmark::Probe() const { return absl::OkStatus(); }

absl::Status MemStreamBenchmark::ValidateParams(const Params& params) const {
  return ParseMemStreamParams(params).status();
}

absl::StatusOr<std::vector<v1::Sample>> MemStreamBenchmark::Run(
    const Params& params, const RunContext& context) {
  absl::StatusOr<MemStreamConfig> config = ParseMemStreamParams(params);
  if (!config.ok()) return config.status();

  const LastLevelCache llc = ReadLastLevelCache("/sys/devices/system/cpu");
  const int64_t array_bytes = config->array_mib > 0
                                  ? config->array_mib * kMiB
                                  : DefaultStreamArrayBytes(llc.total_bytes);
  const int64_t n = array_bytes / static_cast<int64_t>(sizeof(double));
  const double memory = PhysicalMemoryBytes();
  if (memory > 0 && 3.0 * array_bytes > kMaxMemoryShare * memory) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "mem: three arrays of %d MiB need %.1f GiB; this node has %.1f GiB of "
        "memory (at most %.0f%% is used); lower array_mib",
        array_bytes / kMiB, 3.0 * array_bytes / kGiB, memory / kGiB,
        kMaxMemoryShare * 100));
  }

  std::unique_ptr<UntouchedArray> a = UntouchedArray::Map(n);
  std::unique_ptr<UntouchedArray> b = UntouchedArray::Map(n);
  std::unique_ptr<UntouchedArray> c = UntouchedArray::Map(n);
  if (a == nullptr || b == nullptr || c == nullptr) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "mem: cannot map three arrays of %d MiB", array_bytes / kMiB));
  }

  const int reps = config->repetitions;
  std::array<std::vector<double>, 4> gbps;  // timed repetitions per kernel
  bool pinned = false;
  ErrorSums errors;
  {
    StreamTeam team(config->threads, AllowedCpus(), a->data(), b->data(),
                    c->data(), n, ExpectedStreamValues(reps));
    if (!team.complete()) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "mem: cannot start ", config->threads, " threads; lower threads"));
    }
    pinned = team.pinned();
    context.ReportProgress(0, "mem: first touch");
    team.Run(Op::kInit);
    for (int rep = 0; rep < reps; ++rep) {
      if (context.cancelled()) return absl::CancelledError("mem: cancelled");
      for (StreamKernel kernel : kStreamKernels) {
        const double seconds = team.Run(OpOf(kernel));
        // The first repetition pays for faults and warms the TLB: untimed.
        if (rep > 0) {
          gbps[static_cast<size_t>(kernel)].push_back(
              GigabytesPerSecond(StreamBytes(kernel, n), seconds));
        }
      }
      context.ReportProgress(
          static_cast<double>(rep + 1) / reps,
          absl::StrCat("mem: repetition ", rep + 1, " of ", reps));
    }
    team.Run(Op::kCheck);
    errors = team.TotalErrors();
  }

  const StreamValues expected = ExpectedStreamValues(reps);
  for (const auto& [name, sum, want] :
       {std::tuple{"a", errors.a, expected.a},
        std::tuple{"b", errors.b, expected.b},
        std::tuple{"c", errors.c, expected.c}}) {
    if (absl::Status s = CheckArray(name, sum, n, want); !s.ok()) return s;
  }

  std::vector<v1::Sample> samples;
  for (StreamKernel kernel : kStreamKernels) {
    const std::vector<double>& rates = gbps[static_cast<size_t>(kernel)];
    const Summary summary = Summarize(rates);
    v1::Sample& sample = samples.emplace_back();
    sample.set_metric(absl::StrCat("mem.", StreamKernelName(kernel), ".GBps"));
    sample.set_unit("GBps");
    sample.set_value(summary.max);
    auto& p = *sample.mutable_params();
    p["kernel"] = StreamKernelName(kernel);
    p["threads"] = absl::StrCat(config->threads);
    p["pinned"] = pinned ? "true" : "false";
    p["array_mib"] = FormatNumber(static_cast<double>(array_bytes) / kMiB);
    p["array_elements"] = absl::StrCat(n);
    p["bytes_per_pass"] =
        absl::StrCat(static_cast<int64_t>(StreamBytes(kernel, n)));
    p["repetitions"] = absl::StrCat(reps);
    p["timed_repetitions"] = absl::StrCat(summary.count);
    p["best_GBps"] = FormatNumber(summary.max);
    p["median_GBps"] = FormatNumber(summary.median);
    p["min_GBps"] = FormatNumber(summary.min);
    p["spread"] = FormatNumber(summary.spread);
    p["llc_level"] = absl::StrCat(llc.level);
    p["llc_total_mib"] =
        FormatNumber(static_cast<double>(llc.total_bytes) / kMiB);
    p["llc_instances"] = absl::StrCat(llc.instances);
    p["validated"] = "true";
    if (kernel == StreamKernel::kCopy) p["copy_kernel"] = kCopyKernel;
    p["method"] = kMethod;
  }
  return samples;
}

}  // namespace fleetbench::agent
