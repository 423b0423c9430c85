// controller/ranking/interruption_rate.h — how often nodes are interrupted,
// from a count of interruptions over a time observed (docs/reliability.md).
//
// Pure math: no store, no clock. Interruptions are taken to arrive as a
// Poisson process with a constant rate per node-hour, so a group that saw
// `k` interruptions over `T` node-hours has the rate estimate k / T and an
// exact (Garwood) interval from the Gamma distribution:
//   lower = GammaQuantile(k,     (1 - c) / 2) / T   (0 when k = 0)
//   upper = GammaQuantile(k + 1, (1 + c) / 2) / T
// which never reads zero interruptions as a perfect record: 0 in 100
// node-hours still allows up to 30 per 1,000 node-hours at c = 0.9.
//
// Thread safety: none needed, the functions only read their arguments.
#ifndef FLEETBENCH_CONTROLLER_RANKING_INTERRUPTION_RATE_H_
#define FLEETBENCH_CONTROLLER_RANKING_INTERRUPTION_RATE_H_

#include <cstdint>

namespace fleetbench::controller {

// The regularized lower incomplete gamma function P(a, x) for a > 0,
// x >= 0: the Gamma(a, 1) distribution's CDF at x.
double RegularizedGammaP(double a, double x);

// The x with RegularizedGammaP(a, x) = p, for a > 0 and 0 < p < 1
// (relative accuracy about 1e-10).
double GammaQuantile(double a, double p);

// P(X >= k) for X ~ Poisson(mean): how surprising k events are when
// `mean` were expected. 1 for k <= 0.
double PoissonUpperTail(int64_t k, double mean);

struct RateInterval {
  double rate = 0;   // events per hour of exposure: k / T
  double lower = 0;  // the exact two-sided interval at `confidence`
  double upper = 0;
};

// The rate of `events` over `exposure_hours` (> 0) with its interval at
// `confidence` (0 < c < 1, e.g. 0.9).
RateInterval PoissonRateInterval(int64_t events, double exposure_hours, double confidence);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_RANKING_INTERRUPTION_RATE_H_
