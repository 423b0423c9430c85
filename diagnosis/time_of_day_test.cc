#include "diagnosis/time_of_day.h"

#include "absl/time/civil_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::diagnosis {
namespace {

int64_t At(int day, int hour, const absl::TimeZone& zone = absl::UTCTimeZone()) {
  return absl::ToUnixMillis(absl::FromCivil(absl::CivilHour(2026, 11, day, hour), zone));
}

// Day (08-20) slow, night fast, with a little noise: a week of runs every
// three hours.
std::vector<TimedValue> DaySlowNightFast(const absl::TimeZone& zone = absl::UTCTimeZone()) {
  std::vector<TimedValue> v;
  for (int day = 1; day <= 7; ++day) {
    for (int hour = 0; hour < 24; hour += 3) {
      const bool by_day = hour >= 8 && hour < 20;
      const double noise = 0.01 * ((day + hour) % 3 - 1);
      v.push_back({(by_day ? 0.70 : 1.00) + noise, At(day, hour, zone)});
    }
  }
  return v;
}

TEST(ProfileByHourTest, CountsAndMediansPerHour) {
  HourProfile p = ProfileByHour(DaySlowNightFast(), absl::UTCTimeZone(), true);
  EXPECT_EQ(p.time_zone, "UTC");
  EXPECT_EQ(p.hours[0].count, 7);
  EXPECT_EQ(p.hours[1].count, 0);
  EXPECT_NEAR(p.hours[9].median, 0.70, 0.011);
  EXPECT_NEAR(p.hours[21].median, 1.00, 0.011);
  EXPECT_EQ(p.day_count, 4 * 7);  // 09, 12, 15, 18
  EXPECT_EQ(p.night_count, 4 * 7);
}

TEST(ProfileByHourTest, DaySlowNightFastIsBeyondTheNoise) {
  HourProfile p = ProfileByHour(DaySlowNightFast(), absl::UTCTimeZone(), true);
  EXPECT_TRUE(p.enough_data);
  EXPECT_TRUE(p.beyond_noise);
  EXPECT_TRUE(p.day_is_slower);
  EXPECT_NEAR(p.gap_fraction, 0.30, 0.02);
  EXPECT_EQ(p.slow_hours, "09-18");
}

TEST(ProfileByHourTest, FlatProfileIsNot) {
  std::vector<TimedValue> v;
  for (int day = 1; day <= 7; ++day) {
    for (int hour = 0; hour < 24; hour += 2) v.push_back({1.0 + 0.02 * (hour % 3), At(day, hour)});
  }
  HourProfile p = ProfileByHour(v, absl::UTCTimeZone(), true);
  EXPECT_TRUE(p.enough_data);
  EXPECT_FALSE(p.beyond_noise);
  EXPECT_EQ(p.slow_hours, "");
}

TEST(ProfileByHourTest, NoisyGapIsNotBeyondTheNoise) {
  // Day 10% lower, but runs scatter by +-30%.
  std::vector<TimedValue> v;
  for (int day = 1; day <= 7; ++day) {
    for (int hour = 0; hour < 24; hour += 2) {
      const double base = hour >= 8 && hour < 20 ? 0.88 : 1.0;
      v.push_back({base * (1 + 0.3 * ((day * 7 + hour) % 5 - 2) / 2.0), At(day, hour)});
    }
  }
  EXPECT_FALSE(ProfileByHour(v, absl::UTCTimeZone(), true).beyond_noise);
}

TEST(ProfileByHourTest, LowerIsBetterSlowMeansHigher) {
  std::vector<TimedValue> v = DaySlowNightFast();
  for (TimedValue& t : v) t.value = 1 / t.value;  // latency: high by day
  HourProfile p = ProfileByHour(v, absl::UTCTimeZone(), false);
  EXPECT_TRUE(p.beyond_noise);
  EXPECT_TRUE(p.day_is_slower);
}

TEST(ProfileByHourTest, LocalZoneShiftsTheHours) {
  absl::TimeZone tokyo = absl::FixedTimeZone(9 * 3600);
  // Slow by Tokyo's day: 08-20 there is 23-11 UTC.
  std::vector<TimedValue> v = DaySlowNightFast(tokyo);
  HourProfile local = ProfileByHour(v, tokyo, true);
  EXPECT_TRUE(local.beyond_noise);
  EXPECT_EQ(local.slow_hours, "09-18");
  HourProfile utc = ProfileByHour(v, absl::UTCTimeZone(), true);
  EXPECT_EQ(utc.slow_hours, "00-09");
}

TEST(ProfileByHourTest, AGapSeenOnOneDayOnlyIsNotEnough) {
  // Two dozen runs in one day, slow in the afternoon: one busy afternoon.
  std::vector<TimedValue> v;
  for (int hour = 0; hour < 24; ++hour) v.push_back({hour >= 12 && hour < 18 ? 0.5 : 1.0, At(3, hour)});
  HourProfile p = ProfileByHour(v, absl::UTCTimeZone(), true);
  EXPECT_FALSE(p.enough_data);
  EXPECT_FALSE(p.beyond_noise);
}

TEST(ProfileByHourTest, TooFewRunsInAHalfIsNotEnough) {
  std::vector<TimedValue> v;
  for (int day = 1; day <= 7; ++day) v.push_back({1.0, At(day, 2)});
  v.push_back({0.5, At(1, 10)});
  HourProfile p = ProfileByHour(v, absl::UTCTimeZone(), true);
  EXPECT_FALSE(p.enough_data);
  EXPECT_FALSE(p.beyond_noise);
}

}  // namespace
}  // namespace fleetbench::diagnosis
