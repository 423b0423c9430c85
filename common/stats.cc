#include "common/stats.h"

#include <algorithm>
#include <cmath>

namespace fleetbench {

namespace {

double PercentileOfSorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double rank = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  // Two order statistics in linear time: ranking calls this for every node
  // of a million-sample window, where sorting each series would dominate.
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lo), values.end());
  const double lo_value = values[lo];
  if (lo + 1 >= values.size()) return lo_value;
  const double hi_value =
      *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lo) + 1, values.end());
  return lo_value + (hi_value - lo_value) * (rank - static_cast<double>(lo));
}

double PercentileOfCounts(std::vector<std::pair<double, uint64_t>> counted, double q) {
  std::sort(counted.begin(), counted.end());
  uint64_t n = 0;
  for (const auto& [value, count] : counted) n += count;
  if (n == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double rank = q * static_cast<double>(n - 1);
  const auto lo = static_cast<uint64_t>(std::floor(rank));
  const uint64_t hi = std::min(lo + 1, n - 1);
  // The k-th (0-based) value of the expanded list.
  auto at = [&](uint64_t k) {
    for (const auto& [value, count] : counted) {
      if (k < count) return value;
      k -= count;
    }
    return counted.back().first;
  };
  const double lo_value = at(lo);
  return lo_value + (at(hi) - lo_value) * (rank - static_cast<double>(lo));
}

Summary Summarize(const std::vector<double>& values) {
  Summary s;
  if (values.empty()) return s;
  std::vector<double> sorted = values;  // sorted once for every statistic
  std::sort(sorted.begin(), sorted.end());
  s.count = static_cast<int>(sorted.size());
  s.median = PercentileOfSorted(sorted, 0.5);
  s.p10 = PercentileOfSorted(sorted, 0.1);
  s.p90 = PercentileOfSorted(sorted, 0.9);
  s.min = sorted.front();
  s.max = sorted.back();
  s.spread = s.median != 0 ? (s.max - s.min) / s.median : 0;
  return s;
}

}  // namespace fleetbench
