// diagnosis/time_of_day.h — a metric by hour of day: the 24-hour profile
// (count and median per hour) in one time zone, and whether the day and the
// night differ by more than the noise. Used by the node.time_of_day rule
// (fleet_rules.h) and by `fleetbench variance`.
//
// Day is [day_start_hour, day_end_hour) in the zone, night the rest. The gap
// is "beyond the noise" when the two halves' medians differ by more than
// `relative` of the better one AND by more than `mads` times the noise, the
// scaled MAD of every value around its own half's median (what one run
// varies by when the hour is known). Each half needs `min_per_half` values
// on `min_days_per_half` different days.
//
// Pure; see diagnosis/finding.h. The zone is loaded by the caller (time zone
// files are I/O).
#ifndef FLEETBENCH_DIAGNOSIS_TIME_OF_DAY_H_
#define FLEETBENCH_DIAGNOSIS_TIME_OF_DAY_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace fleetbench::diagnosis {

struct TimeOfDayOptions {
  int day_start_hour = 8;   // 08:00 local
  int day_end_hour = 20;    // until 20:00 local
  double relative = 0.10;   // the gap as a fraction of the better half
  double mads = 3.0;        // the gap in noise units (scaled MADs)
  int min_per_half = 4;     // values needed in each half
  // ... on at least this many calendar days each: a gap seen on one day only
  // may be one event (a step, a busy afternoon), not the time of day.
  int min_days_per_half = 2;
};

struct TimedValue {
  double value = 0;
  int64_t time_unix_ms = 0;
};

struct HourBucket {
  int count = 0;
  double median = 0;  // 0 when count is 0
};

struct HourProfile {
  std::string time_zone;  // the zone's name, "UTC" for UTC
  std::array<HourBucket, 24> hours;
  int day_count = 0;
  int night_count = 0;
  double day_median = 0;
  double night_median = 0;
  double noise = 0;  // scaled MAD around each half's median
  // |day - night| / the better half's median; 0 when a half is empty.
  double gap_fraction = 0;
  bool enough_data = false;  // both halves have enough values and days
  bool beyond_noise = false;
  bool day_is_slower = false;  // meaningful when beyond_noise
  // The hours whose median is worse than the better half's by more than
  // `relative`, as ranges: "09-11, 14" (hours in this zone).
  std::string slow_hours;
};

// Non-finite values are ignored.
HourProfile ProfileByHour(const std::vector<TimedValue>& values, const absl::TimeZone& zone,
                          bool higher_is_better, const TimeOfDayOptions& options = {});

}  // namespace fleetbench::diagnosis

#endif  // FLEETBENCH_DIAGNOSIS_TIME_OF_DAY_H_
