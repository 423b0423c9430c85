#include "common/stats.h"

#include <algorithm>
#include <cmath>

namespace fleetbench {

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  q = std::clamp(q, 0.0, 1.0);
  const double rank = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

Summary Summarize(const std::vector<double>& values) {
  Summary s;
  if (values.empty()) return s;
  s.count = static_cast<int>(values.size());
  s.median = Percentile(values, 0.5);
  s.p10 = Percentile(values, 0.1);
  s.p90 = Percentile(values, 0.9);
  auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  s.min = *mn;
  s.max = *mx;
  s.spread = s.median != 0 ? (s.max - s.min) / s.median : 0;
  return s;
}

}  // namespace fleetbench
