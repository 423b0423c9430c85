// The NVML samplers against tests/fake_nvml through the real dlopen path,
// with the summaries the plugins make of what they collect.
#include "agent/benchmarks/gpu/gpu_samplers.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "agent/benchmarks/gpu/gpu_math.h"
#include "agent/benchmarks/gpu/stress_math.h"
#include "agent/facts/gpu_facts.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/fake_nvml/fake_nvml_script.h"

namespace fleetbench::gpu {
namespace {

using ::testing::ElementsAre;

class GpuSamplersTest : public ::testing::Test {
 protected:
  void TearDown() override { fake_nvml::ClearScript(); }
  void UseScript(const std::string& text) { fake_nvml::UseScript(text); }
  static NvmlOptions Fake() { return NvmlOptions{FAKE_NVML_LIBRARY}; }
};

TEST_F(GpuSamplersTest, SamplerCollectsReasonsUntilStopped) {
  UseScript("device_count=1\nclock_event_reasons=0x4\n");
  absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Open(Fake());
  ASSERT_TRUE(nvml.ok()) << nvml.status();
  ClockEventSampler sampler(nvml->get(), 0, absl::Milliseconds(1));
  absl::SleepFor(absl::Milliseconds(30));
  const std::vector<uint64_t> samples = sampler.Stop();
  ASSERT_FALSE(samples.empty());
  EXPECT_DOUBLE_EQ(ThrottleFraction(samples), 1.0);
  EXPECT_EQ(sampler.Stop().size(), samples.size());  // idempotent
}

TEST_F(GpuSamplersTest, TelemetrySamplerFollowsAScriptedReasonSeries) {
  // Idle, then held back by the power cap, then thermal: each read takes
  // the next value and the last one sticks.
  UseScript(
      "device_count=1\n"
      "clock_event_reasons_series=0x1,0x0,0x4,0x4,0x20\n"
      "power_usage_mw_series=100000,650000,700000\n"
      "temperature_series=40,70,86\n");
  absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Open(Fake());
  ASSERT_TRUE(nvml.ok()) << nvml.status();
  TelemetrySampler sampler(nvml->get(), 0, absl::Milliseconds(1));
  absl::SleepFor(absl::Milliseconds(100));
  const std::vector<TelemetrySample> samples = sampler.Stop();
  ASSERT_GE(samples.size(), 6u);
  std::vector<uint64_t> reasons;
  for (const TelemetrySample& t : samples) {
    ASSERT_TRUE(t.reasons.has_value());
    reasons.push_back(*t.reasons);
  }
  EXPECT_THAT(std::vector<uint64_t>(reasons.begin(), reasons.begin() + 6),
              ElementsAre(0x1, 0x0, 0x4, 0x4, 0x20, 0x20));
  for (size_t i = 1; i < samples.size(); ++i) {
    EXPECT_GE(samples[i].seconds, samples[i - 1].seconds);
  }

  const TelemetrySummary summary = SummarizeTelemetry(samples);
  const double n = static_cast<double>(samples.size());
  EXPECT_DOUBLE_EQ(summary.throttle_fraction, (n - 2) / n);
  ASSERT_TRUE(summary.first_throttle_seconds.has_value());
  EXPECT_DOUBLE_EQ(*summary.first_throttle_seconds, samples[2].seconds);
  EXPECT_DOUBLE_EQ(summary.reason_fractions.at("gpu_idle"), 1 / n);
  EXPECT_DOUBLE_EQ(summary.reason_fractions.at("sw_power_cap"), 2 / n);
  EXPECT_DOUBLE_EQ(summary.reason_fractions.at("sw_thermal_slowdown"),
                   (n - 4) / n);
  EXPECT_EQ(summary.max_temperature_c, 86u);
  EXPECT_DOUBLE_EQ(*summary.max_power_w, 700.0);
}

}  // namespace
}  // namespace fleetbench::gpu
