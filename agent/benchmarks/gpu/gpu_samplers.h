// agent/benchmarks/gpu/gpu_samplers.h — NVML readings taken on a thread of
// their own while a GPU benchmark runs: the measurement part that tells how
// much of a run was throttled, and by what.
//
// Each sampler reads one device through an Nvml (agent/facts/gpu_facts.h)
// every `period` until Stop() (or the destructor) joins the thread; Stop()
// returns the samples taken and may be called again. Failed reads are
// skipped (ClockEventSampler) or left absent in the sample
// (TelemetrySampler). `nvml` must outlive the sampler; Nvml's methods may
// run concurrently, so several samplers may share one.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_SAMPLERS_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_SAMPLERS_H_

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "agent/benchmarks/gpu/stress_math.h"
#include "agent/facts/gpu_facts.h"

namespace fleetbench::gpu {

// The clock event reason bitmask, for "gpu_gemm"'s share of the run that
// was throttled (ThrottleFraction).
class ClockEventSampler {
 public:
  ClockEventSampler(const Nvml* nvml, unsigned index, absl::Duration period);
  ~ClockEventSampler();
  ClockEventSampler(const ClockEventSampler&) = delete;
  ClockEventSampler& operator=(const ClockEventSampler&) = delete;
  std::vector<uint64_t> Stop();

 private:
  void Loop(const Nvml* nvml, unsigned index, absl::Duration period);

  std::atomic<bool> stop_{false};
  std::vector<uint64_t> samples_;  // written by the thread until joined
  std::thread thread_;
};

// For the long "stress" runs: each tick reads the reasons, power draw and
// temperature, stamped with seconds since the sampler started.
class TelemetrySampler {
 public:
  TelemetrySampler(const Nvml* nvml, unsigned index, absl::Duration period);
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;
  std::vector<TelemetrySample> Stop();

 private:
  void Loop(const Nvml* nvml, unsigned index, absl::Duration period);

  std::atomic<bool> stop_{false};
  std::vector<TelemetrySample> samples_;  // written by the thread until joined
  std::thread thread_;
};

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_SAMPLERS_H_
