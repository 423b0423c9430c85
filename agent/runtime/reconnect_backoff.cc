#include "agent/runtime/reconnect_backoff.h"

#include <algorithm>
#include <random>
#include <utility>

namespace fleetbench::agent {
namespace {

double SystemUnitRandom() {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  return dist(gen);
}

}  // namespace

ReconnectBackoff::ReconnectBackoff(ReconnectBackoffOptions options, UnitRandom unit_random)
    : options_(options),
      unit_random_(unit_random ? std::move(unit_random) : UnitRandom(&SystemUnitRandom)),
      backoff_(options.initial) {}

absl::Duration ReconnectBackoff::NextWait(bool welcomed, absl::Duration session_length) {
  if (welcomed && session_length >= options_.reset_after) backoff_ = options_.initial;
  // Clamped: an injected source that strays outside [0, 1] must not make the
  // wait negative or longer than the backoff.
  const double unit = std::clamp(unit_random_(), 0.0, 1.0);
  const absl::Duration wait = backoff_ * (0.5 + 0.5 * unit);
  backoff_ = std::min(backoff_ * 2, options_.max);
  return wait;
}

}  // namespace fleetbench::agent
