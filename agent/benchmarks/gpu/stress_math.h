// agent/benchmarks/gpu/stress_math.h — the arithmetic of the "stress"
// plugin, pure and unit-tested: per-interval throughput from the module's
// batches, burst vs sustained split, what the NVML telemetry says (time to
// first throttle, share of time under each clock-event reason, temperature
// and power), ECC deltas, and the checksum verdict that marks a GPU faulty.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GPU_STRESS_MATH_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GPU_STRESS_MATH_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fleetbench/v1/gpu.pb.h"

namespace fleetbench::gpu {

// One batch of back-to-back products, as the module reports it.
struct StressBatch {
  double end_seconds = 0;  // GPU-time offset since the first timed product
  int products = 0;
  bool checked = false;    // D was hashed after this batch
  uint64_t checksum = 0;
};

// TFLOP/s per interval of `interval_seconds` from the batches: a batch
// spans (previous end, end] and its FLOPs are shared among the intervals
// it overlaps in proportion to the overlap. The last, partial interval is
// dropped when it covers less than half an interval. Empty for no batches
// or a non-positive interval.
std::vector<double> ThroughputSeries(const std::vector<StressBatch>& batches,
                                     double flops_per_product,
                                     double interval_seconds);

struct SeriesStats {
  double mean = 0, min = 0, max = 0;
  double cv = 0;  // standard deviation / mean (0 when mean is 0)
};
SeriesStats Stats(const std::vector<double>& series);

// burst: mean over the first ceil(burst_seconds / interval) intervals (at
// least one); sustained: mean over the last ceil(n/2) intervals. Both 0 for
// an empty series.
struct BurstSustained {
  double burst = 0;
  double sustained = 0;
};
BurstSustained SplitBurstSustained(const std::vector<double>& series,
                                   double interval_seconds,
                                   double burst_seconds);

// One NVML reading taken during the run.
struct TelemetrySample {
  double seconds = 0;                  // since the sampler started
  std::optional<uint64_t> reasons;     // clock event reason bitmask
  std::optional<double> power_w;
  std::optional<unsigned> temperature_c;
};

struct TelemetrySummary {
  int samples_with_reasons = 0;
  double throttle_fraction = 0;        // any kThrottlingReasons bit
  std::optional<double> first_throttle_seconds;
  // reason name (DecodeClockEventReasons) -> share of reason samples.
  std::map<std::string, double> reason_fractions;
  std::optional<unsigned> max_temperature_c;
  std::optional<double> mean_power_w;
  std::optional<double> max_power_w;
};
TelemetrySummary SummarizeTelemetry(const std::vector<TelemetrySample>& samples);

// after − before of the ECC counters that both readings have (volatile
// counts, since the driver loaded). Absent when either reading lacks it; a
// counter that went down (driver reload) gives the after value.
struct EccDelta {
  std::optional<uint64_t> corrected;
  std::optional<uint64_t> uncorrected;
};
EccDelta EccDeltaOf(const v1::GpuFacts& before, const v1::GpuFacts& after);

// Compares every checked batch's checksum with the reference.
struct ChecksumVerdict {
  int checks = 0;
  int mismatches = 0;
  int first_bad_batch = -1;
  uint64_t first_bad_checksum = 0;
  bool faulty() const { return mismatches > 0; }
};
ChecksumVerdict CheckChecksums(uint64_t reference,
                               const std::vector<StressBatch>& batches);

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_STRESS_MATH_H_
