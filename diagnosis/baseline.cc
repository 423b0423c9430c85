#include "diagnosis/baseline.h"

#include <algorithm>
#include <cmath>

#include "common/stats.h"

namespace fleetbench::diagnosis {

double ScaledMad(const std::vector<double>& values, double centre) {
  if (values.empty()) return 0;
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - centre));
  return kMadToSigma * Median(deviations);
}

std::optional<Baseline> RobustBaseline(const std::vector<double>& values,
                                       const BaselineOptions& options) {
  std::vector<double> kept;
  kept.reserve(values.size());
  for (double v : values) {
    if (std::isfinite(v)) kept.push_back(v);
  }
  if (kept.empty()) return std::nullopt;
  const int finite = static_cast<int>(kept.size());
  Baseline b;
  for (int round = 0;; ++round) {
    b.median = Median(kept);
    b.mad = ScaledMad(kept, b.median);
    if (round >= options.max_rounds || b.mad <= 0) break;
    std::vector<double> next;
    next.reserve(kept.size());
    for (double v : kept) {
      if (std::fabs(v - b.median) <= options.drop_beyond_mads * b.mad) next.push_back(v);
    }
    if (next.size() == kept.size() ||
        static_cast<int>(next.size()) < std::max(options.min_kept, 1)) {
      break;
    }
    kept = std::move(next);
  }
  b.kept = static_cast<int>(kept.size());
  b.dropped = finite - b.kept;
  return b;
}

}  // namespace fleetbench::diagnosis
