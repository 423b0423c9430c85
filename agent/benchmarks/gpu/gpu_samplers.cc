#include "agent/benchmarks/gpu/gpu_samplers.h"

#include <algorithm>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"

namespace fleetbench::gpu {

ClockEventSampler::ClockEventSampler(const Nvml* nvml, unsigned index,
                                     absl::Duration period)
    : thread_([this, nvml, index, period] { Loop(nvml, index, period); }) {}

ClockEventSampler::~ClockEventSampler() { Stop(); }

std::vector<uint64_t> ClockEventSampler::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  return samples_;
}

void ClockEventSampler::Loop(const Nvml* nvml, unsigned index,
                             absl::Duration period) {
  // Sleep in short slices so Stop() does not wait a whole period.
  const absl::Duration slice = std::min(period, absl::Milliseconds(10));
  while (!stop_.load()) {
    if (absl::StatusOr<uint64_t> reasons = nvml->ReadClockEventReasons(index);
        reasons.ok()) {
      samples_.push_back(*reasons);
    }
    const absl::Time next = absl::Now() + period;
    while (!stop_.load() && absl::Now() < next) absl::SleepFor(slice);
  }
}

TelemetrySampler::TelemetrySampler(const Nvml* nvml, unsigned index,
                                   absl::Duration period)
    : thread_([this, nvml, index, period] { Loop(nvml, index, period); }) {}

TelemetrySampler::~TelemetrySampler() { Stop(); }

std::vector<TelemetrySample> TelemetrySampler::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  return samples_;
}

void TelemetrySampler::Loop(const Nvml* nvml, unsigned index,
                            absl::Duration period) {
  const absl::Duration slice = std::min(period, absl::Milliseconds(10));
  const absl::Time start = absl::Now();
  while (!stop_.load()) {
    TelemetrySample sample;
    sample.seconds = absl::ToDoubleSeconds(absl::Now() - start);
    if (absl::StatusOr<uint64_t> r = nvml->ReadClockEventReasons(index);
        r.ok()) {
      sample.reasons = *r;
    }
    if (absl::StatusOr<double> w = nvml->ReadPowerWatts(index); w.ok()) {
      sample.power_w = *w;
    }
    if (absl::StatusOr<unsigned> t = nvml->ReadTemperatureC(index); t.ok()) {
      sample.temperature_c = *t;
    }
    samples_.push_back(sample);
    const absl::Time next = absl::Now() + period;
    while (!stop_.load() && absl::Now() < next) absl::SleepFor(slice);
  }
}

}  // namespace fleetbench::gpu
