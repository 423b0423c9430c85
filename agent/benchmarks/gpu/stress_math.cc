#include "agent/benchmarks/gpu/stress_math.h"

#include <algorithm>
#include <cmath>

#include "agent/benchmarks/gpu/gpu_math.h"
#include "common/gpu_values.h"

namespace fleetbench::gpu {

std::vector<double> ThroughputSeries(const std::vector<StressBatch>& batches,
                                     double flops_per_product,
                                     double interval_seconds) {
  std::vector<double> flops;
  if (batches.empty() || !(interval_seconds > 0)) return {};
  double begin = 0;
  for (const StressBatch& batch : batches) {
    const double end = std::max(batch.end_seconds, begin);
    const double work = flops_per_product * batch.products;
    const size_t last = static_cast<size_t>(end / interval_seconds);
    if (flops.size() < last + 1) flops.resize(last + 1, 0.0);
    if (end <= begin) {
      flops[last] += work;
    } else {
      for (size_t i = static_cast<size_t>(begin / interval_seconds); i <= last;
           ++i) {
        const double lo = std::max(begin, i * interval_seconds);
        const double hi = std::min(end, (i + 1) * interval_seconds);
        if (hi > lo) flops[i] += work * (hi - lo) / (end - begin);
      }
    }
    begin = end;
  }
  // The last interval covers [k·interval, begin): keep it if at least half.
  const double covered = begin - (flops.size() - 1) * interval_seconds;
  std::vector<double> series;
  for (size_t i = 0; i < flops.size(); ++i) {
    double span = interval_seconds;
    if (i + 1 == flops.size()) {
      if (covered < interval_seconds / 2) break;
      span = covered;
    }
    series.push_back(flops[i] / span / 1e12);
  }
  return series;
}

SeriesStats Stats(const std::vector<double>& series) {
  SeriesStats stats;
  if (series.empty()) return stats;
  double sum = 0;
  stats.min = stats.max = series.front();
  for (double v : series) {
    sum += v;
    stats.min = std::min(stats.min, v);
    stats.max = std::max(stats.max, v);
  }
  stats.mean = sum / series.size();
  double squares = 0;
  for (double v : series) squares += (v - stats.mean) * (v - stats.mean);
  const double sd = std::sqrt(squares / series.size());
  stats.cv = stats.mean != 0 ? sd / stats.mean : 0;
  return stats;
}

BurstSustained SplitBurstSustained(const std::vector<double>& series,
                                   double interval_seconds,
                                   double burst_seconds) {
  BurstSustained split;
  if (series.empty() || !(interval_seconds > 0)) return split;
  size_t burst_count = static_cast<size_t>(
      std::ceil(burst_seconds / interval_seconds - 1e-9));
  burst_count = std::clamp<size_t>(burst_count, 1, series.size());
  double sum = 0;
  for (size_t i = 0; i < burst_count; ++i) sum += series[i];
  split.burst = sum / burst_count;
  const size_t half = series.size() / 2;  // sustained: [half, n)
  sum = 0;
  for (size_t i = half; i < series.size(); ++i) sum += series[i];
  split.sustained = sum / (series.size() - half);
  return split;
}

TelemetrySummary SummarizeTelemetry(
    const std::vector<TelemetrySample>& samples) {
  TelemetrySummary summary;
  std::map<std::string, int> counts;
  int throttled = 0;
  double power_sum = 0;
  int power_count = 0;
  for (const TelemetrySample& s : samples) {
    if (s.reasons.has_value()) {
      ++summary.samples_with_reasons;
      if ((*s.reasons & kThrottlingReasons) != 0) {
        ++throttled;
        if (!summary.first_throttle_seconds.has_value()) {
          summary.first_throttle_seconds = s.seconds;
        }
      }
      for (const std::string& name : DecodeClockEventReasons(*s.reasons)) {
        ++counts[name];
      }
    }
    if (s.temperature_c.has_value()) {
      summary.max_temperature_c =
          std::max(summary.max_temperature_c.value_or(0), *s.temperature_c);
    }
    if (s.power_w.has_value()) {
      power_sum += *s.power_w;
      ++power_count;
      summary.max_power_w = std::max(summary.max_power_w.value_or(0), *s.power_w);
    }
  }
  if (summary.samples_with_reasons > 0) {
    summary.throttle_fraction =
        static_cast<double>(throttled) / summary.samples_with_reasons;
    for (const auto& [name, count] : counts) {
      summary.reason_fractions[name] =
          static_cast<double>(count) / summary.samples_with_reasons;
    }
  }
  if (power_count > 0) summary.mean_power_w = power_sum / power_count;
  return summary;
}

namespace {
std::optional<uint64_t> Delta(bool has_before, uint64_t before, bool has_after,
                              uint64_t after) {
  if (!has_before || !has_after) return std::nullopt;
  return after >= before ? after - before : after;
}
}  // namespace

EccDelta EccDeltaOf(const v1::GpuFacts& before, const v1::GpuFacts& after) {
  EccDelta delta;
  delta.corrected = Delta(before.has_ecc_corrected_volatile(),
                          before.ecc_corrected_volatile(),
                          after.has_ecc_corrected_volatile(),
                          after.ecc_corrected_volatile());
  delta.uncorrected = Delta(before.has_ecc_uncorrected_volatile(),
                            before.ecc_uncorrected_volatile(),
                            after.has_ecc_uncorrected_volatile(),
                            after.ecc_uncorrected_volatile());
  return delta;
}

ChecksumVerdict CheckChecksums(uint64_t reference,
                               const std::vector<StressBatch>& batches) {
  ChecksumVerdict verdict;
  for (size_t i = 0; i < batches.size(); ++i) {
    if (!batches[i].checked) continue;
    ++verdict.checks;
    if (batches[i].checksum != reference) {
      if (verdict.mismatches == 0) {
        verdict.first_bad_batch = static_cast<int>(i);
        verdict.first_bad_checksum = batches[i].checksum;
      }
      ++verdict.mismatches;
    }
  }
  return verdict;
}

}  // namespace fleetbench::gpu
