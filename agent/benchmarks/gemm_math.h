// agent/benchmarks/gemm_math.h — the arithmetic of a GEMM benchmark.
//
// Pure functions, no BLAS and no clock: FLOP counts, throughput from a time,
// and the rule that says when enough timed repetitions have been made. The
// CPU plugin uses them today; the GPU GEMM plugin will share them, so that
// both report the same quantity the same way.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GEMM_MATH_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GEMM_MATH_H_

#include <cstdint>

namespace fleetbench::agent {

// Floating-point operations of C = A·B with A m×k and B k×n: one multiply
// and one add per inner-product term, 2·m·n·k. A double, because 2·32768³
// is already 7·10^13 and callers divide it anyway.
double GemmFlops(int64_t m, int64_t n, int64_t k);

// 10^12 FLOP per second. 0 when seconds is not positive (a clock that did
// not advance says nothing about speed; it must not become inf).
double TflopsFromSeconds(double flops, double seconds);

// When a timed-repetition loop may stop: after max_runs runs, or once the
// timed total reaches min_seconds and at least 3 runs were made (fewer only
// when max_runs is smaller). Three runs are the fewest for which a median
// and a spread mean anything.
inline constexpr int kMinTimedRuns = 3;
struct RepetitionPolicy {
  double min_seconds = 2;
  int max_runs = 50;
};
bool EnoughRuns(const RepetitionPolicy& policy, int runs, double timed_seconds);
// How far the loop is towards EnoughRuns, in [0, 1], for progress reports.
double RepetitionFraction(const RepetitionPolicy& policy, int runs,
                          double timed_seconds);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GEMM_MATH_H_
