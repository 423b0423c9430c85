// common/stats.h — order statistics used by every benchmark and by ranking.
// Pure functions; the input is copied, never reordered in place.
#ifndef FLEETBENCH_COMMON_STATS_H_
#define FLEETBENCH_COMMON_STATS_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace fleetbench {

// Linear interpolation between closest ranks (numpy's default, "type 7").
// q in [0,1]. Empty input gives 0.
double Percentile(std::vector<double> values, double q);
inline double Median(const std::vector<double>& values) {
  return Percentile(values, 0.5);
}

// Percentile of a multiset given as (value, how many times) pairs: the same
// as Percentile of the list with each value repeated, without building it.
// Pairs with a count of 0 are ignored; no values give 0.
double PercentileOfCounts(std::vector<std::pair<double, uint64_t>> counted, double q);

struct Summary {
  int count = 0;
  double median = 0;
  double min = 0;
  double max = 0;
  double p10 = 0;
  double p90 = 0;
  // (max - min) / median: how far apart the repetitions were; a large
  // spread says the machine was not steady while measured.
  double spread = 0;
};
Summary Summarize(const std::vector<double>& values);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_STATS_H_
