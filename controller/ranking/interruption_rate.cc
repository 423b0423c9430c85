// Incomplete gamma by its series below a + 1 and its continued fraction
// (modified Lentz) above, the split where each converges fast; the
// quantile by bisection on a bracket that doubles until it holds p, which
// is slow next to Newton but cannot diverge, and a rate interval is
// computed a few times per call.
#include "controller/ranking/interruption_rate.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fleetbench::controller {
namespace {

// Near x = a both need about 8·sqrt(a) terms: enough for a of 10^9 and more
// interruptions than any fleet records.
constexpr int kMaxTerms = 1'000'000;
constexpr double kEpsilon = 1e-15;

// P(a, x) by the series x^a e^-x / Gamma(a+1) * sum x^n / ((a+1)...(a+n)).
double GammaSeries(double a, double x) {
  double term = 1.0 / a;
  double sum = term;
  for (int n = 1; n < kMaxTerms; ++n) {
    term *= x / (a + n);
    sum += term;
    if (std::fabs(term) < std::fabs(sum) * kEpsilon) break;
  }
  return sum * std::exp(-x + a * std::log(x) - std::lgamma(a));
}

// Q(a, x) = 1 - P(a, x) by its continued fraction.
double GammaContinuedFraction(double a, double x) {
  constexpr double kTiny = std::numeric_limits<double>::min() / kEpsilon;
  double b = x + 1.0 - a;
  double c = 1.0 / kTiny;
  double d = 1.0 / b;
  double h = d;
  for (int i = 1; i < kMaxTerms; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < kEpsilon) break;
  }
  return std::exp(-x + a * std::log(x) - std::lgamma(a)) * h;
}

}  // namespace

double RegularizedGammaP(double a, double x) {
  if (x <= 0) return 0;
  if (x < a + 1.0) return GammaSeries(a, x);
  return 1.0 - GammaContinuedFraction(a, x);
}

double GammaQuantile(double a, double p) {
  double lo = 0;
  double hi = std::max(1.0, a);
  while (RegularizedGammaP(a, hi) < p) {
    lo = hi;
    hi *= 2;
  }
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (RegularizedGammaP(a, mid) < p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

double PoissonUpperTail(int64_t k, double mean) {
  if (k <= 0) return 1;
  // P(X >= k) = P(k, mean): k arrivals of a unit-rate process by `mean`.
  return RegularizedGammaP(static_cast<double>(k), mean);
}

RateInterval PoissonRateInterval(int64_t events, double exposure_hours, double confidence) {
  const double tail = (1.0 - confidence) / 2.0;
  const double k = static_cast<double>(std::max<int64_t>(events, 0));
  RateInterval out;
  out.rate = k / exposure_hours;
  out.lower = k == 0 ? 0.0 : GammaQuantile(k, tail) / exposure_hours;
  out.upper = GammaQuantile(k + 1.0, 1.0 - tail) / exposure_hours;
  return out;
}

}  // namespace fleetbench::controller
