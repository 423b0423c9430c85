#include "common/cron.h"

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/reason.h"

namespace fleetbench {
namespace {

// How far NextAfter looks: past any Feb 29 (8 years around 2100).
constexpr int kSearchDays = 366 * 10 + 3;

struct FieldSpec {
  const char* name;
  int min;
  int max;
  // Names for min, min+1, ... ("jan" is 1, "sun" is 0); null when none.
  const char* const* names;
  int name_count;
  const char* what;  // for errors: what a value of this field is
};

constexpr const char* kMonthNames[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                       "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr const char* kDayNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

constexpr FieldSpec kFields[] = {
    {"minute", 0, 59, nullptr, 0, "a minute (0-59)"},
    {"hour", 0, 23, nullptr, 0, "an hour (0-23)"},
    {"day-of-month", 1, 31, nullptr, 0, "a day of the month (1-31)"},
    {"month", 1, 12, kMonthNames, 12, "a month (1-12 or jan-dec)"},
    {"day-of-week", 0, 7, kDayNames, 7, "a day of the week (0-7 or sun-sat, 0 and 7 Sunday)"},
};

struct Macro {
  const char* name;
  const char* expression;
};
constexpr Macro kMacros[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

class FieldParser {
 public:
  FieldParser(absl::string_view expression, const FieldSpec& field)
      : expression_(expression), field_(field) {}

  absl::Status Error(absl::string_view token, absl::string_view problem) const {
    return absl::InvalidArgumentError(absl::StrCat("cron expression \"", ClipInput(expression_),
                                                   "\": ", field_.name, " field: '",
                                                   ClipInput(token), "' ", problem));
  }

  absl::StatusOr<int> Value(absl::string_view token) const {
    int value = 0;
    if (!token.empty() && absl::ascii_isdigit(static_cast<unsigned char>(token[0]))) {
      if (!absl::SimpleAtoi(token, &value)) {
        return Error(token, absl::StrCat("is not ", field_.what));
      }
    } else {
      const std::string lower = absl::AsciiStrToLower(token);
      bool found = false;
      for (int i = 0; i < field_.name_count; ++i) {
        if (lower == field_.names[i]) {
          value = field_.min + i;
          found = true;
          break;
        }
      }
      if (!found) return Error(token, absl::StrCat("is not ", field_.what));
    }
    if (value < field_.min || value > field_.max) {
      return Error(token, absl::StrCat("is out of range: want ", field_.what));
    }
    return value;
  }

  // Sets the values `item` names in `bits` (indexed by value).
  template <size_t N>
  absl::Status Item(absl::string_view item, std::bitset<N>& bits) const {
    if (item.empty()) return Error(item, "is empty (two commas in a row?)");
    absl::string_view base = item;
    int step = 1;
    bool has_step = false;
    if (const size_t slash = item.find('/'); slash != absl::string_view::npos) {
      base = item.substr(0, slash);
      const absl::string_view step_text = item.substr(slash + 1);
      has_step = true;
      if (!absl::SimpleAtoi(step_text, &step) || step <= 0) {
        return Error(item, "has a bad step: want /N with N a positive number");
      }
      if (step > field_.max - field_.min) {
        return Error(item, absl::StrCat("has a step larger than the field's range ", field_.min,
                                        "-", field_.max));
      }
    }
    int first = field_.min;
    int last = field_.max;
    if (base == "*") {
      // The whole field.
    } else if (const size_t dash = base.find('-'); dash != absl::string_view::npos) {
      absl::StatusOr<int> a = Value(base.substr(0, dash));
      if (!a.ok()) return a.status();
      absl::StatusOr<int> b = Value(base.substr(dash + 1));
      if (!b.ok()) return b.status();
      if (*a > *b) return Error(item, "is a range that goes backwards");
      first = *a;
      last = *b;
    } else {
      absl::StatusOr<int> a = Value(base);
      if (!a.ok()) return a.status();
      first = *a;
      // "a/n" runs from a to the field's end; "a" alone is one value.
      last = has_step ? field_.max : *a;
    }
    for (int v = first; v <= last; v += step) bits.set(static_cast<size_t>(v % static_cast<int>(N)));
    return absl::OkStatus();
  }

  template <size_t N>
  absl::Status List(absl::string_view text, std::bitset<N>& bits) const {
    for (absl::string_view item : absl::StrSplit(text, ',')) {
      if (absl::Status s = Item(item, bits); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  absl::string_view expression_;
  const FieldSpec& field_;
};

// The instant a wall-clock minute fires at (the DST rules in cron.h): the
// first occurrence of a repeated time, the jump for a skipped one.
absl::Time Resolve(const absl::TimeZone::TimeInfo& info) {
  return info.kind == absl::TimeZone::TimeInfo::SKIPPED ? info.trans : info.pre;
}

int CronWeekday(absl::CivilDay day) {
  // absl counts from Monday = 0; cron from Sunday = 0.
  return (static_cast<int>(absl::GetWeekday(day)) + 1) % 7;
}

}  // namespace

absl::StatusOr<CronExpression> CronExpression::Parse(absl::string_view text) {
  const std::string trimmed(absl::StripAsciiWhitespace(text));
  std::string expanded = trimmed;
  if (!trimmed.empty() && trimmed[0] == '@') {
    const std::string lower = absl::AsciiStrToLower(trimmed);
    bool found = false;
    for (const Macro& m : kMacros) {
      if (lower == m.name) {
        expanded = m.expression;
        found = true;
      }
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cron expression \"", ClipInput(trimmed),
          "\": unknown macro; known: @yearly @annually @monthly @weekly @daily @midnight @hourly"));
    }
  }
  const std::vector<absl::string_view> fields =
      absl::StrSplit(expanded, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (fields.size() != 5) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cron expression \"", ClipInput(trimmed), "\" has ", fields.size(),
        " fields; want 5: minute hour day-of-month month day-of-week"));
  }
  CronExpression cron;
  cron.text_ = trimmed;
  std::bitset<8> days_of_week;  // 0..7, folded below
  absl::Status s = FieldParser(trimmed, kFields[0]).List(fields[0], cron.minutes_);
  if (s.ok()) s = FieldParser(trimmed, kFields[1]).List(fields[1], cron.hours_);
  if (s.ok()) s = FieldParser(trimmed, kFields[2]).List(fields[2], cron.days_of_month_);
  if (s.ok()) s = FieldParser(trimmed, kFields[3]).List(fields[3], cron.months_);
  if (s.ok()) s = FieldParser(trimmed, kFields[4]).List(fields[4], days_of_week);
  if (!s.ok()) return s;
  for (size_t d = 0; d < 7; ++d) cron.days_of_week_[d] = days_of_week[d];
  if (days_of_week[7]) cron.days_of_week_.set(0);
  // cron's rule: a day field that starts with '*' does not restrict the day
  // (so "*/2" in one day field ANDs with the other).
  cron.hour_star_ = fields[1] == "*";
  cron.day_of_month_star_ = fields[2][0] == '*';
  cron.day_of_week_star_ = fields[4][0] == '*';
  // An expression that names no existing date (30 feb) would never fire.
  if (!cron.NextAfter(absl::FromCivil(absl::CivilSecond(2000, 1, 1), absl::UTCTimeZone()),
                      absl::UTCTimeZone())
           .ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cron expression \"", ClipInput(trimmed),
        "\" never fires: its day-of-month and month fields name no date that exists"));
  }
  return cron;
}

bool CronExpression::DayMatches(absl::CivilDay day) const {
  if (!months_[static_cast<size_t>(day.month())]) return false;
  const bool dom = days_of_month_[static_cast<size_t>(day.day())];
  const bool dow = days_of_week_[static_cast<size_t>(CronWeekday(day))];
  if (day_of_month_star_ || day_of_week_star_) return dom && dow;
  return dom || dow;
}

bool CronExpression::Matches(absl::CivilMinute minute) const {
  return minutes_[static_cast<size_t>(minute.minute())] &&
         hours_[static_cast<size_t>(minute.hour())] && DayMatches(absl::CivilDay(minute));
}

absl::StatusOr<absl::Time> CronExpression::NextAfter(absl::Time after,
                                                     absl::TimeZone zone) const {
  const absl::CivilMinute from(absl::ToCivilSecond(after, zone));
  const absl::CivilDay last_day = absl::CivilDay(from) + kSearchDays;
  if (hour_star_) {
    // Every hour of a matching day: walk the instants, so a repeated hour
    // is walked twice and a skipped one not at all.
    absl::Time t = zone.At(from).pre;
    while (true) {
      const absl::CivilMinute m(absl::ToCivilSecond(t, zone));
      const absl::CivilDay day(m);
      if (day > last_day) break;
      if (!DayMatches(day)) {
        t = Resolve(zone.At(absl::CivilMinute(day + 1)));
        continue;
      }
      if (t > after && minutes_[static_cast<size_t>(m.minute())]) return t;
      t += absl::Minutes(1);
    }
    return absl::NotFoundError(
        absl::StrCat("cron expression \"", text_, "\" does not fire in the next ten years"));
  }
  for (absl::CivilDay day(from); day <= last_day; ++day) {
    if (!DayMatches(day)) continue;
    for (int h = 0; h < 24; ++h) {
      if (!hours_[static_cast<size_t>(h)]) continue;
      for (int min = 0; min < 60; ++min) {
        if (!minutes_[static_cast<size_t>(min)]) continue;
        const absl::CivilMinute m(day.year(), day.month(), day.day(), h, min);
        if (m < from) continue;
        // Civil order is instant order here (a repeated time resolves to
        // its first occurrence), so the first one past `after` is the next.
        const absl::Time t = Resolve(zone.At(m));
        if (t > after) return t;
      }
    }
  }
  return absl::NotFoundError(
      absl::StrCat("cron expression \"", text_, "\" does not fire in the next ten years"));
}

absl::StatusOr<absl::TimeZone> LoadScheduleTimeZone(const std::string& name) {
  if (name.empty() || name == "UTC") return absl::UTCTimeZone();
  // IANA names only: never a path out of the zoneinfo folder.
  bool plain = name.size() <= 64 && name[0] != '/' && name.find("..") == std::string::npos;
  for (char c : name) {
    plain = plain && (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '/' ||
                      c == '_' || c == '-' || c == '+');
  }
  absl::TimeZone zone;
  if (!plain || !absl::LoadTimeZone(name, &zone)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown time zone '", ClipInput(name),
                     "': want an IANA name such as Europe/Paris or America/New_York"));
  }
  return zone;
}

}  // namespace fleetbench
