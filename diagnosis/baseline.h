// diagnosis/baseline.h — what "normal" is for a set of measurements: a
// robust centre (median) and spread (MAD), after dropping the values that lie
// too far from the rest, so one broken node or one disturbed run does not
// move the expectation it is judged against.
//
// Pure; see diagnosis/finding.h for the layer's contract.
#ifndef FLEETBENCH_DIAGNOSIS_BASELINE_H_
#define FLEETBENCH_DIAGNOSIS_BASELINE_H_

#include <optional>
#include <vector>

namespace fleetbench::diagnosis {

// The MAD of normally distributed values times this is their standard
// deviation; every "MAD" below is scaled by it, so "3 MADs" means about
// three standard deviations for well-behaved noise.
inline constexpr double kMadToSigma = 1.4826;

struct BaselineOptions {
  // A value further than this many (scaled) MADs from the median is an
  // outlier, dropped before the next round (Iglewicz and Hoaglin's 3.5 for
  // the modified z-score).
  double drop_beyond_mads = 3.5;
  // Rounds of dropping and recomputing; it stops earlier once a round drops
  // nothing (it almost always does after two or three).
  int max_rounds = 10;
  // Never drop below this many values: with fewer, the rest are all that
  // there is to go by.
  int min_kept = 2;
};

struct Baseline {
  double median = 0;
  // Median absolute deviation from the median, times kMadToSigma.
  double mad = 0;
  int kept = 0;     // values the figures are over
  int dropped = 0;  // outliers left out
};

// Non-finite values are ignored; nullopt when no finite value is left. A
// MAD of 0 (half or more of the values equal) drops nothing: there is no
// spread to measure distance in.
std::optional<Baseline> RobustBaseline(const std::vector<double>& values,
                                       const BaselineOptions& options = {});

// The scaled MAD of `values` around `centre` (0 for an empty list).
double ScaledMad(const std::vector<double>& values, double centre);

}  // namespace fleetbench::diagnosis

#endif  // FLEETBENCH_DIAGNOSIS_BASELINE_H_
