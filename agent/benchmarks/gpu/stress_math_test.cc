#include "agent/benchmarks/gpu/stress_math.h"

#include <map>
#include <string>
#include <vector>

#include "agent/benchmarks/gpu/gpu_math.h"
#include "agent/benchmarks/gpu/gpu_stress.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::gpu {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pointwise;

// 1e12 FLOPs per product: one product per second is 1 TFLOP/s.
constexpr double kTera = 1e12;

TEST(StressParamsTest, DefaultTimeoutCoversTheAskedDuration) {
  StressBenchmark stress;
  EXPECT_EQ(stress.DefaultTimeout({}), absl::Minutes(30));  // 60 s profile
  EXPECT_EQ(stress.DefaultTimeout({{"seconds", "3600"}}), absl::Minutes(70));
  EXPECT_EQ(stress.DefaultTimeout({{"seconds", "-1"}}), absl::Minutes(30));
}

TEST(StressMathTest, SeriesSplitsBatchesAcrossIntervals) {
  // 0..0.5 s: 1 product; 0.5..1.5 s: 2 products; 1.5..2.0 s: 1 product.
  const std::vector<StressBatch> batches = {
      {0.5, 1, false, 0}, {1.5, 2, false, 0}, {2.0, 1, false, 0}};
  EXPECT_THAT(ThroughputSeries(batches, kTera, 1.0),
              Pointwise(DoubleNear(1e-9), {2.0, 2.0}));
}

TEST(StressMathTest, ShortLastIntervalIsDropped) {
  const std::vector<StressBatch> batches = {{1.0, 3, false, 0},
                                            {1.2, 1, false, 0}};
  EXPECT_THAT(ThroughputSeries(batches, kTera, 1.0),
              Pointwise(DoubleNear(1e-9), {3.0}));
  // A last interval at least half full counts over its own length.
  EXPECT_THAT(ThroughputSeries({{1.0, 3, false, 0}, {1.5, 1, false, 0}},
                               kTera, 1.0),
              Pointwise(DoubleNear(1e-9), {3.0, 2.0}));
  EXPECT_TRUE(ThroughputSeries({}, kTera, 1.0).empty());
  EXPECT_TRUE(ThroughputSeries({{1.0, 1, false, 0}}, kTera, 0).empty());
}

TEST(StressMathTest, BurstIsTheStartSustainedTheLastHalf) {
  // 10 s: 5 s at 100, then 5 s at 80.
  std::vector<double> series(10, 100.0);
  for (int i = 5; i < 10; ++i) series[i] = 80.0;
  BurstSustained split = SplitBurstSustained(series, 1.0, 5.0);
  EXPECT_DOUBLE_EQ(split.burst, 100.0);
  EXPECT_DOUBLE_EQ(split.sustained, 80.0);
  // Odd count: the last ceil(n/2).
  split = SplitBurstSustained({10, 20, 30}, 1.0, 1.0);
  EXPECT_DOUBLE_EQ(split.burst, 10.0);
  EXPECT_DOUBLE_EQ(split.sustained, 25.0);
  // Shorter than the burst window: all of it.
  EXPECT_DOUBLE_EQ(SplitBurstSustained({4, 6}, 1.0, 5.0).burst, 5.0);
  EXPECT_DOUBLE_EQ(SplitBurstSustained({}, 1.0, 5.0).sustained, 0.0);
}

TEST(StressMathTest, SeriesStatistics) {
  const SeriesStats s = Stats({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.min, 2.0);
  EXPECT_DOUBLE_EQ(s.max, 9.0);
  EXPECT_DOUBLE_EQ(s.cv, 2.0 / 5.0);
  EXPECT_EQ(Stats({}).mean, 0.0);
}

TEST(StressMathTest, TelemetryFromAScriptedReasonSeries) {
  std::vector<TelemetrySample> samples;
  const uint64_t reasons[] = {kReasonGpuIdle, 0, 0, kReasonSwPowerCap,
                              kReasonSwPowerCap | kReasonHwThermalSlowdown,
                              kReasonSwPowerCap, 0, kReasonSyncBoost};
  for (int i = 0; i < 8; ++i) {
    TelemetrySample s;
    s.seconds = 0.25 * i;
    s.reasons = reasons[i];
    s.power_w = 600.0 + 10 * i;
    s.temperature_c = 60u + static_cast<unsigned>(i);
    samples.push_back(s);
  }
  samples.push_back(TelemetrySample{2.0, std::nullopt, std::nullopt, 90u});
  const TelemetrySummary t = SummarizeTelemetry(samples);
  EXPECT_EQ(t.samples_with_reasons, 8);
  EXPECT_DOUBLE_EQ(t.throttle_fraction, 3.0 / 8);
  ASSERT_TRUE(t.first_throttle_seconds.has_value());
  EXPECT_DOUBLE_EQ(*t.first_throttle_seconds, 0.75);
  EXPECT_DOUBLE_EQ(t.reason_fractions.at("sw_power_cap"), 3.0 / 8);
  EXPECT_DOUBLE_EQ(t.reason_fractions.at("hw_thermal_slowdown"), 1.0 / 8);
  EXPECT_DOUBLE_EQ(t.reason_fractions.at("gpu_idle"), 1.0 / 8);
  EXPECT_DOUBLE_EQ(t.reason_fractions.at("sync_boost"), 1.0 / 8);
  EXPECT_EQ(t.max_temperature_c, 90u);
  EXPECT_DOUBLE_EQ(*t.mean_power_w, 635.0);
  EXPECT_DOUBLE_EQ(*t.max_power_w, 670.0);

  const TelemetrySummary calm = SummarizeTelemetry(
      {TelemetrySample{0, 0, std::nullopt, std::nullopt}});
  EXPECT_FALSE(calm.first_throttle_seconds.has_value());
  EXPECT_EQ(calm.throttle_fraction, 0.0);
  EXPECT_FALSE(calm.mean_power_w.has_value());
}

TEST(StressMathTest, EccDeltas) {
  v1::GpuFacts before, after;
  before.set_ecc_corrected_volatile(3);
  after.set_ecc_corrected_volatile(7);
  after.set_ecc_uncorrected_volatile(1);
  EccDelta d = EccDeltaOf(before, after);
  EXPECT_EQ(d.corrected, 4u);
  EXPECT_FALSE(d.uncorrected.has_value());  // absent before
  before.set_ecc_uncorrected_volatile(5);   // driver reloaded: counter reset
  EXPECT_EQ(EccDeltaOf(before, after).uncorrected, 1u);
}

TEST(StressMathTest, ChecksumMismatchMarksFaulty) {
  std::vector<StressBatch> batches = {{0.1, 10, true, 42},
                                      {0.2, 10, false, 0},
                                      {0.3, 10, true, 42}};
  ChecksumVerdict v = CheckChecksums(42, batches);
  EXPECT_FALSE(v.faulty());
  EXPECT_EQ(v.checks, 2);
  batches.push_back({0.4, 10, true, 43});
  batches.push_back({0.5, 10, true, 44});
  v = CheckChecksums(42, batches);
  EXPECT_TRUE(v.faulty());
  EXPECT_EQ(v.mismatches, 2);
  EXPECT_EQ(v.first_bad_batch, 3);
  EXPECT_EQ(v.first_bad_checksum, 43u);
}

std::map<std::string, double> ByMetric(const std::vector<v1::Sample>& s) {
  std::map<std::string, double> m;
  for (const v1::Sample& x : s) m[x.metric()] = x.value();
  return m;
}

StressOutcome TenSeconds(uint64_t last_checksum) {
  StressOutcome o;
  o.seconds = 10;
  o.flops_per_product = kTera;
  for (int i = 1; i <= 10; ++i) {
    // 100 TFLOP/s for 5 s, then 80.
    o.batches.push_back({static_cast<double>(i), i <= 5 ? 100 : 80, true,
                         i == 10 ? last_checksum : 7});
  }
  o.reference_checksum = 7;
  return o;
}

TEST(StressSamplesTest, HealthyGpu) {
  StressConfig config;
  config.seconds = 10;
  StressOutcome o = TenSeconds(7);
  o.has_telemetry = true;
  o.telemetry = {TelemetrySample{0, 0, 500.0, 50u},
                 TelemetrySample{4, kReasonSwPowerCap, 700.0, 80u}};
  v1::GpuFacts facts;
  facts.set_power_enforced_limit_w(700);
  facts.set_power_default_limit_w(700);
  facts.set_temperature_slowdown_c(87);
  o.facts_before = facts;
  o.facts_after = facts;
  const StressSamplesForGpu out = StressSamples(config, o);
  EXPECT_TRUE(out.faulty_reason.empty());
  const auto m = ByMetric(out.samples);
  EXPECT_DOUBLE_EQ(m.at("stress.gpu.burst.tflops"), 100.0);
  EXPECT_DOUBLE_EQ(m.at("stress.gpu.sustained.tflops"), 80.0);
  EXPECT_DOUBLE_EQ(m.at("stress.gpu.faulty.count"), 0.0);
  EXPECT_DOUBLE_EQ(m.at("stress.gpu.throttle_fraction.ratio"), 0.5);
  EXPECT_DOUBLE_EQ(m.at("stress.gpu.first_throttle.s"), 4.0);
  EXPECT_DOUBLE_EQ(m.at("stress.gpu.max_temp.C"), 80.0);
  const v1::Sample& sustained = out.samples[0];
  EXPECT_EQ(sustained.metric(), "stress.gpu.sustained.tflops");
  EXPECT_EQ(sustained.params().at("series_tflops"),
            "100,100,100,100,100,80,80,80,80,80");
  EXPECT_EQ(sustained.params().at("mean_power_W"), "600");
  EXPECT_EQ(sustained.params().at("power_enforced_limit_W"), "700");
  EXPECT_EQ(sustained.params().at("checksum_checks"), "10");
  for (const v1::Sample& s : out.samples) {
    if (s.metric() == "stress.gpu.max_temp.C") {
      EXPECT_EQ(s.params().at("headroom_C"), "7");
    }
    // Every metric is declared by the plugin, with the declared unit.
    const auto info = agent::DeclaredMetric(StressBenchmark(), s.metric());
    ASSERT_TRUE(info.has_value()) << s.metric();
    EXPECT_EQ(info->unit, s.unit());
  }
  EXPECT_EQ(out.samples.size(), StressBenchmark().metrics().size());
}

TEST(StressSamplesTest, ChecksumMismatchIsFaultyWithAReason) {
  StressConfig config;
  const StressSamplesForGpu out = StressSamples(config, TenSeconds(8));
  EXPECT_DOUBLE_EQ(ByMetric(out.samples).at("stress.gpu.faulty.count"), 1.0);
  EXPECT_THAT(out.faulty_reason,
              HasSubstr("1 of 10 checksums of the repeated bf16 8192"));
  // Without NVML there are no telemetry samples, and no first throttle.
  EXPECT_EQ(ByMetric(out.samples).count("stress.gpu.first_throttle.s"), 0u);
}

TEST(StressParamsTest, DefaultsProfilesAndErrors) {
  absl::StatusOr<StressConfig> c = ParseStressParams({});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->seconds, 60);
  EXPECT_EQ(c->dtype, "bf16");
  EXPECT_EQ(c->size, 8192);
  EXPECT_EQ(ParseStressParams({{"profile", "full"}})->seconds, 300);
  EXPECT_EQ(ParseStressParams({{"profile", "full"}, {"seconds", "30"}})->seconds,
            30);
  EXPECT_THAT(ParseStressParams({{"dtype", "fp8"}}).status().message(),
              HasSubstr("must be one of"));
  EXPECT_THAT(ParseStressParams({{"profile", "long"}}).status().message(),
              HasSubstr("quick (60 s) or full (300 s)"));
  EXPECT_EQ(ParseStressParams({{"size", "1000"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseStressParams({{"seconds", "1"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fleetbench::gpu
