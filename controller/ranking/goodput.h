// controller/ranking/goodput.h — the share of a job's time that becomes
// progress, for a job of N nodes on nodes interrupted at a measured rate
// (docs/ranking.md, Goodput).
//
// Pure math. The model, and what it assumes:
//   * Each node is interrupted as a Poisson process of rate λ per hour,
//     independently, so an N-node job is interrupted at Λ = N·λ (its mean
//     time to failure 1/Λ) and any one node's interruption stops the job.
//   * The job checkpoints every C hours of progress (writing a checkpoint
//     costs nothing here: fold its cost into C's choice) and after an
//     interruption spends R hours restarting, during which it is not
//     interrupted again, then resumes from its last checkpoint.
//   * One checkpoint interval then takes, on average (a renewal argument),
//       E[T] = (1/Λ + R) · (e^(ΛC) − 1)
//     hours, and goodput = C / E[T] = ΛC / ((1 + ΛR)(e^(ΛC) − 1)).
//     For ΛC small this is about 1 − Λ(R + C/2): each interruption loses
//     the restart and half an interval of work.
//   * Throughput while running is the node's measured rate, so the
//     effective cost per unit of work is the cost per unit / goodput.
//
// Thread safety: none needed.
#ifndef FLEETBENCH_CONTROLLER_RANKING_GOODPUT_H_
#define FLEETBENCH_CONTROLLER_RANKING_GOODPUT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace fleetbench::controller {

// A job's shape for goodput: how many nodes, how often it checkpoints and
// what a restart costs.
struct JobShape {
  int64_t nodes = 1;
  absl::Duration checkpoint_interval = absl::Minutes(30);
  absl::Duration restart_cost = absl::Minutes(10);
};

// The most nodes a job may name (a number beyond any fleet's, yet one
// whose products stay exact in a double).
inline constexpr int64_t kMaxJobNodes = 1'000'000;

// INVALID_ARGUMENT unless 1 <= nodes <= kMaxJobNodes and both durations
// are finite, the interval > 0 and the restart cost >= 0.
absl::Status CheckJobShape(const JobShape& job);

// The job's goodput in [0, 1] at `rate_per_node_hour` (>= 0; 0 gives 1;
// 0 once the job is interrupted so often, λNC past ~700, that a double
// cannot tell it from nothing).
double JobGoodput(double rate_per_node_hour, const JobShape& job);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_RANKING_GOODPUT_H_
