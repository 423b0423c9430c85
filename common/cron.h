// common/cron.h — cron expressions and when they fire next, in a named time
// zone (docs/schedules.md).
//
// Five fields, as cron(8) has them: minute (0-59), hour (0-23), day of month
// (1-31), month (1-12 or jan-dec), day of week (0-7 or sun-sat; 0 and 7 are
// Sunday). Each field is a list of items separated by commas; an item is
// `*`, a value, a range `a-b`, any of those followed by a step `/n`, or
// `a/n` (from a to the field's end). Names are case-insensitive. As in
// cron, when both day fields are restricted (neither starts with `*`) a day
// matches when either does; otherwise both must. The macros @yearly,
// @annually, @monthly, @weekly, @daily, @midnight and @hourly stand for
// their usual expressions.
//
// Daylight saving time: a firing names a wall-clock time in the zone.
// - Spring forward: a time that does not exist that day (02:30 when clocks
//   jump from 02:00 to 03:00) fires once, at the jump (03:00); several such
//   times (*/15 in that hour) fire once together.
// - Fall back: a time that happens twice fires once, at its first
//   occurrence; only an expression whose hour field is `*` also fires in
//   the repeated hour's second pass, so "every 15 minutes" keeps ticking.
//
// Pure and thread-safe. Errors: INVALID_ARGUMENT in one line naming the
// field and quoting the bad token.
#ifndef FLEETBENCH_COMMON_CRON_H_
#define FLEETBENCH_COMMON_CRON_H_

#include <bitset>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace fleetbench {

class CronExpression {
 public:
  // INVALID_ARGUMENT for a malformed expression, and for one that names no
  // date that exists (day-of-month 31 in February only).
  static absl::StatusOr<CronExpression> Parse(absl::string_view text);

  // Whether the wall-clock minute matches (seconds are ignored).
  bool Matches(absl::CivilMinute minute) const;
  // The first firing strictly after `after`, as wall-clock times in `zone`
  // map to instants (DST rules above). NOT_FOUND when nothing matches in the
  // next ten years (Parse refuses expressions that never fire, so only a
  // zone's odd history could cause it).
  absl::StatusOr<absl::Time> NextAfter(absl::Time after, absl::TimeZone zone) const;

  // The expression as given (trimmed).
  const std::string& text() const { return text_; }

 private:
  CronExpression() = default;
  bool DayMatches(absl::CivilDay day) const;

  std::string text_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_of_month_;  // 1..31
  std::bitset<13> months_;         // 1..12
  std::bitset<7> days_of_week_;    // 0 = Sunday
  bool day_of_month_star_ = false;
  bool day_of_week_star_ = false;
  bool hour_star_ = false;
};

// A time zone by IANA name (the system's tzdata): "" and "UTC" are UTC.
// INVALID_ARGUMENT quoting the name when tzdata does not know it.
absl::StatusOr<absl::TimeZone> LoadScheduleTimeZone(const std::string& name);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_CRON_H_
