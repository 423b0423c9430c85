#include "agent/benchmarks/stream/stream_math.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "common/units.h"

namespace fleetbench::agent {

const char* StreamKernelName(StreamKernel kernel) {
  switch (kernel) {
    case StreamKernel::kCopy:
      return "copy";
    case StreamKernel::kScale:
      return "scale";
    case StreamKernel::kAdd:
      return "add";
    case StreamKernel::kTriad:
      return "triad";
  }
  return "unknown";
}

double StreamBytes(StreamKernel kernel, int64_t n) {
  const int arrays =
      kernel == StreamKernel::kCopy || kernel == StreamKernel::kScale ? 2 : 3;
  return static_cast<double>(arrays) * sizeof(double) * static_cast<double>(n);
}

StreamValues ExpectedStreamValues(int repetitions) {
  StreamValues v;
  // The same operations in the same order as the kernels, so that the
  // rounding matches theirs.
  for (int k = 0; k < repetitions; ++k) {
    v.c = v.a;
    v.b = kStreamScalar * v.c;
    v.c = v.a + v.b;
    v.a = v.b + kStreamScalar * v.c;
  }
  return v;
}

double StreamAverageRelativeError(double sum_abs_error, int64_t n,
                                  double expected) {
  if (n <= 0) return 0;
  const double average = sum_abs_error / static_cast<double>(n);
  return expected == 0 ? average : average / std::abs(expected);
}

std::optional<int64_t> ParseCacheSize(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return std::nullopt;
  int64_t multiplier = 1;
  switch (absl::ascii_toupper(text.back())) {
    case 'K':
      multiplier = int64_t{1} << 10;
      break;
    case 'M':
      multiplier = int64_t{1} << 20;
      break;
    case 'G':
      multiplier = int64_t{1} << 30;
      break;
    default:
      break;
  }
  if (multiplier != 1) text.remove_suffix(1);
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 0) return std::nullopt;
  return value * multiplier;
}

int64_t DefaultStreamArrayBytes(int64_t llc_bytes) {
  const int64_t bytes = std::max<int64_t>(4 * llc_bytes, 64 * kMiB);
  return (bytes + kMiB - 1) / kMiB * kMiB;
}

Slice ThreadSlice(int64_t n, int threads, int index) {
  auto boundary = [n, threads](int i) -> int64_t {
    if (i >= threads) return n;
    // Rounded down to a cache line so no two threads write the same line.
    const int64_t raw =
        static_cast<int64_t>(static_cast<__int128>(n) * i / threads);
    return std::min(n, raw / 8 * 8);
  };
  return Slice{boundary(index), boundary(index + 1)};
}

}  // namespace fleetbench::agent
