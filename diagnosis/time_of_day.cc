#include "diagnosis/time_of_day.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/civil_time.h"
#include "common/stats.h"
#include "diagnosis/baseline.h"

namespace fleetbench::diagnosis {
namespace {

bool IsDay(int hour, const TimeOfDayOptions& o) {
  if (o.day_start_hour <= o.day_end_hour) return hour >= o.day_start_hour && hour < o.day_end_hour;
  return hour >= o.day_start_hour || hour < o.day_end_hour;  // a day across midnight
}

// "09-11, 14": the slow hours as ranges. Hours without data do not break a
// range (runs every two hours that are slow from 08 to 18 are "08-18"), a
// measured hour that is not slow does.
std::string HourRanges(const std::array<HourBucket, 24>& hours, const std::vector<bool>& slow) {
  std::vector<std::string> parts;
  int first = -1;
  int last = -1;
  auto close = [&] {
    if (first < 0) return;
    parts.push_back(first == last ? absl::StrFormat("%02d", first)
                                  : absl::StrFormat("%02d-%02d", first, last));
    first = -1;
  };
  for (int h = 0; h < 24; ++h) {
    if (hours[h].count == 0) continue;
    if (!slow[h]) {
      close();
      continue;
    }
    if (first < 0) first = h;
    last = h;
  }
  close();
  return absl::StrJoin(parts, ", ");
}

}  // namespace

HourProfile ProfileByHour(const std::vector<TimedValue>& values, const absl::TimeZone& zone,
                          bool higher_is_better, const TimeOfDayOptions& options) {
  HourProfile p;
  p.time_zone = zone.name();
  std::array<std::vector<double>, 24> by_hour;
  std::vector<double> day;
  std::vector<double> night;
  std::set<absl::CivilDay> day_dates;
  std::set<absl::CivilDay> night_dates;
  for (const TimedValue& v : values) {
    if (!std::isfinite(v.value)) continue;
    const absl::TimeZone::CivilInfo civil =
        zone.At(absl::FromUnixMillis(v.time_unix_ms));
    const int hour = civil.cs.hour();
    by_hour[hour].push_back(v.value);
    const bool by_day = IsDay(hour, options);
    (by_day ? day : night).push_back(v.value);
    (by_day ? day_dates : night_dates).insert(absl::CivilDay(civil.cs));
  }
  for (int h = 0; h < 24; ++h) {
    p.hours[h].count = static_cast<int>(by_hour[h].size());
    if (!by_hour[h].empty()) p.hours[h].median = Median(by_hour[h]);
  }
  p.day_count = static_cast<int>(day.size());
  p.night_count = static_cast<int>(night.size());
  if (day.empty() || night.empty()) return p;
  p.day_median = Median(day);
  p.night_median = Median(night);
  std::vector<double> residuals;
  for (double v : day) residuals.push_back(v - p.day_median);
  for (double v : night) residuals.push_back(v - p.night_median);
  p.noise = ScaledMad(residuals, 0);
  const double better = higher_is_better ? std::max(p.day_median, p.night_median)
                                         : std::min(p.day_median, p.night_median);
  const double gap = std::fabs(p.day_median - p.night_median);
  if (better > 0) p.gap_fraction = gap / better;
  p.day_is_slower = higher_is_better ? p.day_median < p.night_median
                                     : p.day_median > p.night_median;
  p.enough_data = p.day_count >= options.min_per_half && p.night_count >= options.min_per_half &&
                  static_cast<int>(day_dates.size()) >= options.min_days_per_half &&
                  static_cast<int>(night_dates.size()) >= options.min_days_per_half;
  p.beyond_noise = p.enough_data && better > 0 && p.gap_fraction > options.relative &&
                   gap > options.mads * p.noise;
  std::vector<bool> slow(24, false);
  if (better > 0) {
    for (int h = 0; h < 24; ++h) {
      if (p.hours[h].count == 0) continue;
      const double m = p.hours[h].median;
      const double shortfall = higher_is_better ? (better - m) / better : (m - better) / better;
      slow[h] = shortfall > options.relative;
    }
  }
  p.slow_hours = HourRanges(p.hours, slow);
  return p;
}

}  // namespace fleetbench::diagnosis
