#include "common/cron.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench {
namespace {

using ::testing::HasSubstr;

absl::TimeZone Zone(const std::string& name) {
  absl::StatusOr<absl::TimeZone> zone = LoadScheduleTimeZone(name);
  EXPECT_TRUE(zone.ok()) << zone.status();
  return zone.ok() ? *zone : absl::UTCTimeZone();
}

absl::Time At(absl::CivilMinute civil, absl::TimeZone zone) { return zone.At(civil).pre; }

std::string Show(absl::Time t, absl::TimeZone zone) {
  return absl::FormatTime("%Y-%m-%d %H:%M %Z", t, zone);
}

// The next `n` firings after `from`, shown in `zone`.
std::vector<std::string> Firings(const std::string& expression, absl::Time from,
                                 absl::TimeZone zone, int n) {
  absl::StatusOr<CronExpression> cron = CronExpression::Parse(expression);
  EXPECT_TRUE(cron.ok()) << cron.status();
  std::vector<std::string> out;
  if (!cron.ok()) return out;
  absl::Time t = from;
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<absl::Time> next = cron->NextAfter(t, zone);
    EXPECT_TRUE(next.ok()) << next.status();
    if (!next.ok()) break;
    EXPECT_GT(*next, t);
    out.push_back(Show(*next, zone));
    t = *next;
  }
  return out;
}

std::string ParseError(const std::string& expression) {
  absl::StatusOr<CronExpression> cron = CronExpression::Parse(expression);
  EXPECT_FALSE(cron.ok()) << expression;
  EXPECT_EQ(cron.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(cron.status().message());
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  return message;
}

TEST(CronTest, DailyAtThreeUtc) {
  const absl::TimeZone utc = absl::UTCTimeZone();
  EXPECT_THAT(Firings("0 3 * * *", At(absl::CivilMinute(2026, 12, 1, 3, 0), utc), utc, 2),
              ::testing::ElementsAre("2026-12-02 03:00 UTC", "2026-12-03 03:00 UTC"));
  // Strictly after: from 02:59 the same day's 03:00 is next.
  EXPECT_THAT(Firings("0 3 * * *", At(absl::CivilMinute(2026, 12, 1, 2, 59), utc), utc, 1),
              ::testing::ElementsAre("2026-12-01 03:00 UTC"));
}

TEST(CronTest, ListsRangesStepsAndNames) {
  const absl::TimeZone utc = absl::UTCTimeZone();
  const absl::Time from = At(absl::CivilMinute(2026, 12, 1, 0, 0), utc);  // a Tuesday
  EXPECT_THAT(Firings("*/15 1 * * *", from, utc, 5),
              ::testing::ElementsAre("2026-12-01 01:00 UTC", "2026-12-01 01:15 UTC",
                                     "2026-12-01 01:30 UTC", "2026-12-01 01:45 UTC",
                                     "2026-12-02 01:00 UTC"));
  EXPECT_THAT(Firings("0 9 * * MON-fri/2", from, utc, 3),  // Mon, Wed, Fri
              ::testing::ElementsAre("2026-12-02 09:00 UTC", "2026-12-04 09:00 UTC",
                                     "2026-12-07 09:00 UTC"));
  EXPECT_THAT(Firings("30 0,12 1-5/2 * *", from, utc, 4),
              ::testing::ElementsAre("2026-12-01 00:30 UTC", "2026-12-01 12:30 UTC",
                                     "2026-12-03 00:30 UTC", "2026-12-03 12:30 UTC"));
  EXPECT_THAT(Firings("0 0 1 jan,Jul *", from, utc, 2),
              ::testing::ElementsAre("2027-01-01 00:00 UTC", "2027-07-01 00:00 UTC"));
  EXPECT_THAT(Firings("5/20 3 * * *", from, utc, 3),  // 5, 25, 45
              ::testing::ElementsAre("2026-12-01 03:05 UTC", "2026-12-01 03:25 UTC",
                                     "2026-12-01 03:45 UTC"));
  EXPECT_THAT(Firings("@weekly", from, utc, 1), ::testing::ElementsAre("2026-12-06 00:00 UTC"));
  EXPECT_THAT(Firings("0 0 29 2 *", from, utc, 1),
              ::testing::ElementsAre("2028-02-29 00:00 UTC"));
}

TEST(CronTest, SevenAndZeroAreBothSunday) {
  const absl::TimeZone utc = absl::UTCTimeZone();
  const absl::Time from = At(absl::CivilMinute(2026, 12, 1, 0, 0), utc);
  EXPECT_EQ(Firings("0 4 * * 7", from, utc, 1), Firings("0 4 * * 0", from, utc, 1));
  EXPECT_THAT(Firings("0 4 * * 7", from, utc, 1), ::testing::ElementsAre("2026-12-06 04:00 UTC"));
  EXPECT_THAT(Firings("0 4 * * 5-7", from, utc, 3),
              ::testing::ElementsAre("2026-12-04 04:00 UTC", "2026-12-05 04:00 UTC",
                                     "2026-12-06 04:00 UTC"));
}

TEST(CronTest, BothDayFieldsRestrictedMatchEither) {
  const absl::TimeZone utc = absl::UTCTimeZone();
  const absl::Time from = At(absl::CivilMinute(2026, 12, 1, 0, 0), utc);
  // The 13th or any Friday (cron's OR rule).
  EXPECT_THAT(Firings("0 0 13 * fri", from, utc, 3),
              ::testing::ElementsAre("2026-12-04 00:00 UTC", "2026-12-11 00:00 UTC",
                                     "2026-12-13 00:00 UTC"));
  // A day field starting with '*' does not restrict: odd days AND Fridays.
  EXPECT_THAT(Firings("0 0 */2 * fri", from, utc, 2),
              ::testing::ElementsAre("2026-12-11 00:00 UTC", "2026-12-25 00:00 UTC"));
}

TEST(CronTest, ErrorsNameTheFieldAndTheToken) {
  EXPECT_THAT(ParseError("0 3 * *"), HasSubstr("has 4 fields; want 5"));
  EXPECT_THAT(ParseError("0 3 * * * *"), HasSubstr("has 6 fields"));
  EXPECT_THAT(ParseError("60 3 * * *"), HasSubstr("minute field: '60' is out of range"));
  EXPECT_THAT(ParseError("0 24 * * *"), HasSubstr("hour field: '24' is out of range"));
  EXPECT_THAT(ParseError("0 3 0 * *"), HasSubstr("day-of-month field: '0'"));
  EXPECT_THAT(ParseError("0 3 * foo *"), HasSubstr("month field: 'foo' is not a month"));
  EXPECT_THAT(ParseError("0 3 * * mo"), HasSubstr("day-of-week field: 'mo' is not a day"));
  EXPECT_THAT(ParseError("0 3 * * 8"), HasSubstr("day-of-week field: '8' is out of range"));
  EXPECT_THAT(ParseError("5-1 3 * * *"), HasSubstr("minute field: '5-1' is a range that goes"));
  EXPECT_THAT(ParseError("*/0 3 * * *"), HasSubstr("minute field: '*/0' has a bad step"));
  EXPECT_THAT(ParseError("*/x 3 * * *"), HasSubstr("'*/x' has a bad step"));
  EXPECT_THAT(ParseError("*/60 3 * * *"), HasSubstr("step larger than the field's range 0-59"));
  EXPECT_THAT(ParseError("1,,2 3 * * *"), HasSubstr("minute field: '' is empty"));
  EXPECT_THAT(ParseError("0 3 31 feb *"), HasSubstr("never fires"));
  EXPECT_THAT(ParseError("@sometimes"), HasSubstr("unknown macro"));
  EXPECT_THAT(ParseError(""), HasSubstr("has 0 fields"));
  EXPECT_THAT(ParseError("0 3 * * *x"), HasSubstr("day-of-week field: '*x'"));
}

TEST(CronTest, UnknownTimeZonesAreRefused) {
  for (const std::string name : {"Europe/Pariss", "../../etc/passwd", "/etc/localtime", "Mars/Base"}) {
    absl::StatusOr<absl::TimeZone> zone = LoadScheduleTimeZone(name);
    ASSERT_FALSE(zone.ok()) << name;
    EXPECT_THAT(zone.status().message(), HasSubstr("unknown time zone"));
  }
  EXPECT_TRUE(LoadScheduleTimeZone("").ok());
  EXPECT_TRUE(LoadScheduleTimeZone("America/New_York").ok());
}

TEST(CronTest, NamedZoneFiresAtItsWallClock) {
  const absl::TimeZone paris = Zone("Europe/Paris");
  const absl::Time from = absl::FromCivil(absl::CivilSecond(2026, 12, 1, 0, 0, 0), absl::UTCTimeZone());
  absl::StatusOr<CronExpression> cron = CronExpression::Parse("0 3 * * *");
  ASSERT_TRUE(cron.ok());
  absl::StatusOr<absl::Time> next = cron->NextAfter(from, paris);
  ASSERT_TRUE(next.ok());
  // 03:00 in Paris in winter (CET, UTC+1) is 02:00 UTC.
  EXPECT_EQ(absl::FormatTime("%H:%M", *next, absl::UTCTimeZone()), "02:00");
}

// Europe/Paris springs forward on 2026-03-29: 02:00 CET becomes 03:00 CEST.
TEST(CronTest, SpringForwardFiresOnceAtTheJump) {
  const absl::TimeZone paris = Zone("Europe/Paris");
  const absl::Time from = At(absl::CivilMinute(2026, 3, 28, 12, 0), paris);
  EXPECT_THAT(Firings("30 2 * * *", from, paris, 3),
              ::testing::ElementsAre("2026-03-29 03:00 CEST", "2026-03-30 02:30 CEST",
                                     "2026-03-31 02:30 CEST"));
  // Four times in the missing hour fire once together, then 03:00 is not
  // fired a second time.
  EXPECT_THAT(Firings("*/15 2,3 29 3 *", from, paris, 5),
              ::testing::ElementsAre("2026-03-29 03:00 CEST", "2026-03-29 03:15 CEST",
                                     "2026-03-29 03:30 CEST", "2026-03-29 03:45 CEST",
                                     "2027-03-29 02:00 CEST"));
  // An hourly expression has no 02:30 that day and goes on at 03:30.
  EXPECT_THAT(Firings("30 * * * *", At(absl::CivilMinute(2026, 3, 29, 1, 0), paris), paris, 2),
              ::testing::ElementsAre("2026-03-29 01:30 CET", "2026-03-29 03:30 CEST"));
}

// Europe/Paris falls back on 2026-10-25: 03:00 CEST becomes 02:00 CET.
TEST(CronTest, FallBackFiresOnceNotTwice) {
  const absl::TimeZone paris = Zone("Europe/Paris");
  const absl::Time from = At(absl::CivilMinute(2026, 10, 24, 12, 0), paris);
  EXPECT_THAT(Firings("30 2 * * *", from, paris, 2),
              ::testing::ElementsAre("2026-10-25 02:30 CEST", "2026-10-26 02:30 CET"));
  // Asked from inside the repeated hour's second pass, the next is tomorrow.
  absl::StatusOr<CronExpression> cron = CronExpression::Parse("30 2 * * *");
  ASSERT_TRUE(cron.ok());
  const absl::Time second_pass = paris.At(absl::CivilMinute(2026, 10, 25, 2, 10)).post;
  absl::StatusOr<absl::Time> next = cron->NextAfter(second_pass, paris);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(Show(*next, paris), "2026-10-26 02:30 CET");
  // An expression with hour '*' ticks through both passes.
  EXPECT_THAT(Firings("30 * * * *", At(absl::CivilMinute(2026, 10, 25, 1, 0), paris), paris, 4),
              ::testing::ElementsAre("2026-10-25 01:30 CEST", "2026-10-25 02:30 CEST",
                                     "2026-10-25 02:30 CET", "2026-10-25 03:30 CET"));
}

}  // namespace
}  // namespace fleetbench
