// agent/benchmarks/stream/stream_math.h — the arithmetic of the STREAM-style
// memory bandwidth benchmark ("mem").
//
// Pure functions, no threads and no clock: bytes counted per kernel, GB/s
// from a time, the values the arrays must hold after a number of
// repetitions, the average relative error STREAM's checkSTREAMresults
// computes, and the reading of cache sizes from sysfs text.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_STREAM_STREAM_MATH_H_
#define FLEETBENCH_AGENT_BENCHMARKS_STREAM_STREAM_MATH_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace fleetbench::agent {

// The four STREAM kernels, in the order STREAM runs them.
enum class StreamKernel { kCopy = 0, kScale = 1, kAdd = 2, kTriad = 3 };
inline constexpr std::array<StreamKernel, 4> kStreamKernels = {
    StreamKernel::kCopy, StreamKernel::kScale, StreamKernel::kAdd,
    StreamKernel::kTriad};

// "copy", "scale", "add", "triad".
const char* StreamKernelName(StreamKernel kernel);

// STREAM's scalar (b = s*c, a = b + s*c).
inline constexpr double kStreamScalar = 3.0;
// STREAM's threshold on the average relative error of a double array.
inline constexpr double kStreamEpsilon = 1e-13;

// Bytes STREAM counts for one pass over n doubles: every array read or
// written once, write-allocate traffic not counted. copy and scale touch 2
// arrays, add and triad 3.
double StreamBytes(StreamKernel kernel, int64_t n);

// Every element of a, b and c after `repetitions` passes of copy, scale,
// add, triad starting from a = 1, b = 2, c = 0 (STREAM's start, without its
// a *= 2 timer-granularity pass).
struct StreamValues {
  double a = 1;
  double b = 2;
  double c = 0;
};
StreamValues ExpectedStreamValues(int repetitions);

// Average relative error of an array: sum of |x[j] - expected| over its n
// elements, divided by n and by |expected|. Absolute when expected is 0.
double StreamAverageRelativeError(double sum_abs_error, int64_t n,
                                  double expected);

// sysfs cache sizes: "32K", "32768K", "1M", "512" (bytes). nullopt when the
// text is not one of those forms.
std::optional<int64_t> ParseCacheSize(absl::string_view text);

// Default bytes per array: max(4 × last-level cache, 64 MiB), rounded up to
// a whole MiB. STREAM's rule is 4× the sum of all last-level caches, so
// `llc_bytes` is the total over every LLC instance, not one CPU's share.
int64_t DefaultStreamArrayBytes(int64_t llc_bytes);

// [begin, end) of thread `index` of `threads` over n elements: contiguous,
// each begin a multiple of 8 doubles (one 64-byte line) except the end.
struct Slice {
  int64_t begin = 0;
  int64_t end = 0;
};
Slice ThreadSlice(int64_t n, int threads, int index);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_STREAM_STREAM_MATH_H_
