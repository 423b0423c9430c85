// ScheduleBook: each schedule is a StartRun request, a cron expression and
// a time zone; the actor fires it at its cron times and records each firing
// (docs/schedules.md):
// - a firing while the schedule's previous run is still going is SKIPPED;
// - a StartRun refusal (no online node matches) is FAILED, with the reason;
// - cron times passed while the controller was down: the newest runs once
//   if it is within schedule_grace, and the rest are one MISSED record;
// - the selection's nodes that are offline at the firing are recorded.
#include "controller/core/schedule_book.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/api_enums.h"
#include "common/logging.h"
#include "common/reason.h"
#include "common/wire_limits.h"
#include "controller/core/caller_deadline.h"

namespace fleetbench::controller {
namespace {

constexpr size_t kMaxScheduleNameBytes = 64;
constexpr int kDefaultFiringsLimit = 50;
constexpr int kMaxFiringsLimit = 1000;
// Counting the cron times a long outage missed stops here (a minutely
// schedule down for a year): the record says "at least".
constexpr int kMaxCountedSlots = 100000;

absl::Status CheckScheduleName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= kMaxScheduleNameBytes;
  for (char c : name) {
    ok = ok && (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                c == '-');
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("schedule name '", ClipInput(name),
                                                 "' is not 1-64 of A-Z a-z 0-9 . _ -"));
}

std::string TimeText(absl::Time t, absl::TimeZone zone) {
  return absl::FormatTime("%Y-%m-%d %H:%M %Z", t, zone);
}

}  // namespace

ScheduleBook::ScheduleBook(storage::Store* store, Clock* clock, Options options, Hooks hooks)
    : store_(store), clock_(clock), options_(options), hooks_(std::move(hooks)) {}

// ------------------------------------------------------------ any thread

absl::StatusOr<v1::ListScheduleFiringsResponse> ScheduleBook::ListFirings(
    const v1::ListScheduleFiringsRequest& request, absl::Time deadline) const {
  // A read of the store only: served from the caller's thread.
  if (absl::Now() >= deadline) return CallerDeadlinePassed();
  if (request.limit() > static_cast<uint32_t>(kMaxFiringsLimit)) {
    return absl::InvalidArgumentError(
        absl::StrCat("limit ", request.limit(), " is above ", kMaxFiringsLimit));
  }
  const int limit = request.limit() == 0 ? kDefaultFiringsLimit : static_cast<int>(request.limit());
  absl::StatusOr<std::vector<v1::ScheduleFiring>> firings =
      store_->ListFirings(request.name(), limit);
  if (!firings.ok()) return firings.status();
  v1::ListScheduleFiringsResponse response;
  for (v1::ScheduleFiring& f : *firings) *response.add_firings() = std::move(f);
  return response;
}

// ------------------------------------------------------------ actor thread

absl::Status ScheduleBook::Load() {
  absl::StatusOr<std::vector<storage::Store::ScheduleRecord>> stored = store_->ListSchedules();
  if (!stored.ok()) return stored.status();
  for (storage::Store::ScheduleRecord& record : *stored) {
    ScheduleState state;
    const std::string name = record.schedule.name();
    absl::StatusOr<CronExpression> cron = CronExpression::Parse(record.schedule.cron());
    absl::StatusOr<absl::TimeZone> zone = LoadScheduleTimeZone(record.schedule.timezone());
    if (cron.ok() && zone.ok()) {
      state.cron = *std::move(cron);
      state.zone = *zone;
      absl::StatusOr<absl::Time> next = state.cron->NextAfter(record.handled_until, state.zone);
      if (next.ok()) state.next_slot = *next;
    } else {
      // Written by this build it parsed; a zone the system's tzdata lost
      // (or a hand-edited row) keeps the schedule listed but silent.
      LOG(WARNING) << "schedule " << name << " will not fire: "
                   << (cron.ok() ? zone.status() : cron.status()).message();
    }
    absl::StatusOr<std::vector<v1::ScheduleFiring>> last = store_->ListFirings(name, 1);
    if (!last.ok()) return last.status();
    if (!last->empty()) state.last_firing = (*last)[0];
    state.record = std::move(record);
    schedules_[name] = std::move(state);
  }
  loaded_ = clock_->Now();
  from_ = loaded_ + options_.settle;
  UpdateNextDue();
  return absl::OkStatus();
}

void ScheduleBook::UpdateNextDue() {
  absl::Time due = absl::InfiniteFuture();
  for (const auto& [name, state] : schedules_) due = std::min(due, state.next_slot);
  next_due_ = due == absl::InfiniteFuture() ? due : std::max(due, from_);
}

v1::Schedule ScheduleBook::View(const ScheduleState& state) const {
  v1::Schedule view = state.record.schedule;
  if (state.next_slot != absl::InfiniteFuture()) {
    view.set_next_firing_unix_ms(absl::ToUnixMillis(std::max(state.next_slot, from_)));
  }
  if (state.last_firing.outcome() != v1::FIRING_OUTCOME_UNSPECIFIED) {
    *view.mutable_last_firing() = state.last_firing;
  }
  return view;
}

absl::StatusOr<v1::AddScheduleResponse> ScheduleBook::Add(const v1::AddScheduleRequest& request) {
  const v1::Schedule& asked = request.schedule();
  if (absl::Status s = CheckScheduleName(asked.name()); !s.ok()) return s;
  absl::StatusOr<CronExpression> cron = CronExpression::Parse(asked.cron());
  if (!cron.ok()) return cron.status();
  absl::StatusOr<absl::TimeZone> zone = LoadScheduleTimeZone(asked.timezone());
  if (!zone.ok()) return zone.status();
  const v1::StartRunRequest& run = asked.run();
  if (run.benchmarks().empty()) {
    return absl::InvalidArgumentError("a schedule needs a suite or benchmarks to run");
  }
  if (!run.nodes().empty()) {
    return absl::InvalidArgumentError(
        "a schedule selects nodes by label (select_labels), not by name");
  }
  if (run.group().mode() != v1::GROUP_MODE_UNSPECIFIED) {
    return absl::InvalidArgumentError("a schedule cannot start group runs yet");
  }
  if (absl::Status s = CheckStartRunBounds(run); !s.ok()) return s;
  if (schedules_.contains(asked.name())) {
    return absl::AlreadyExistsError(
        absl::StrCat("a schedule named '", asked.name(), "' exists; remove it first"));
  }
  const absl::Time now = clock_->Now();
  ScheduleState state;
  state.record.schedule.set_name(asked.name());
  state.record.schedule.set_cron(cron->text());
  state.record.schedule.set_timezone(asked.timezone());
  *state.record.schedule.mutable_run() = run;
  state.record.schedule.set_created_unix_ms(absl::ToUnixMillis(now));
  // The first firing is the first cron time after now.
  state.record.handled_until = now;
  if (absl::Status s = store_->CreateSchedule(state.record); !s.ok()) return s;
  state.cron = *std::move(cron);
  state.zone = *zone;
  absl::StatusOr<absl::Time> next = state.cron->NextAfter(now, state.zone);
  if (next.ok()) state.next_slot = *next;
  ScheduleState& stored = schedules_[asked.name()] = std::move(state);
  UpdateNextDue();
  v1::AddScheduleResponse response;
  *response.mutable_schedule() = View(stored);
  return response;
}

v1::ListSchedulesResponse ScheduleBook::List() const {
  v1::ListSchedulesResponse response;
  for (const auto& [name, state] : schedules_) *response.add_schedules() = View(state);
  return response;
}

std::map<std::pair<std::string, std::string>, int64_t> ScheduleBook::FiringCounts() const {
  absl::MutexLock lock(&firings_mu_);
  return firing_counts_;
}

absl::Status ScheduleBook::Remove(const std::string& name) {
  if (!schedules_.contains(name)) {
    return absl::NotFoundError(absl::StrCat("no schedule named '", ClipInput(name), "'"));
  }
  if (absl::Status s = store_->RemoveSchedule(name); !s.ok()) return s;
  schedules_.erase(name);
  UpdateNextDue();
  return absl::OkStatus();
}

absl::StatusOr<v1::RunScheduleResponse> ScheduleBook::RunNow(const std::string& name) {
  auto it = schedules_.find(name);
  if (it == schedules_.end()) {
    return absl::NotFoundError(absl::StrCat("no schedule named '", ClipInput(name), "'"));
  }
  v1::RunScheduleResponse response;
  // A manual firing leaves the cron's mark alone: tonight's run still runs.
  *response.mutable_firing() = Fire(it->second, clock_->Now(), /*manual=*/true);
  return response;
}

void ScheduleBook::FireDue() {
  const absl::Time now = clock_->Now();
  if (now < from_) {
    UpdateNextDue();
    return;
  }
  for (auto& [name, state] : schedules_) {
    if (state.next_slot > now || !state.cron) continue;
    // The cron times that have come since the last one handled: normally
    // one; several after the controller was down.
    const absl::Time first = state.next_slot;
    absl::Time newest = first;
    int count = 1;
    while (count < kMaxCountedSlots) {
      absl::StatusOr<absl::Time> next = state.cron->NextAfter(newest, state.zone);
      if (!next.ok() || *next > now) break;
      newest = *next;
      ++count;
    }
    if (count == kMaxCountedSlots) {
      // Past the count: walk from the grace window's start to the newest
      // time before now instead.
      absl::StatusOr<absl::Time> t =
          state.cron->NextAfter(now - options_.grace, state.zone);
      while (t.ok() && *t <= now) {
        newest = *t;
        t = state.cron->NextAfter(newest, state.zone);
      }
    }
    // A cron time since Start is late, not missed, however late (a busy
    // actor); the grace window is for those that passed while down.
    const bool in_grace =
        newest >= loaded_ || now - newest <= options_.grace;
    const int missed = in_grace ? count - 1 : count;
    if (missed > 0) {
      v1::ScheduleFiring f;
      f.set_schedule(name);
      f.set_slot_unix_ms(absl::ToUnixMillis(first));
      f.set_fired_unix_ms(absl::ToUnixMillis(now));
      f.set_outcome(v1::FIRING_OUTCOME_MISSED);
      f.set_slots(missed);
      if (in_grace) {
        f.set_reason(absl::StrCat(
            missed == 1 ? absl::StrCat("the cron time ", TimeText(first, state.zone))
                        : absl::StrCat(missed, " cron times from ", TimeText(first, state.zone)),
            " passed while the controller was down; only the newest, ",
            TimeText(newest, state.zone), ", runs"));
      } else {
        f.set_reason(absl::StrCat(
            count == 1 ? absl::StrCat("the cron time ", TimeText(first, state.zone))
                       : absl::StrCat(count, count == kMaxCountedSlots ? "+" : "",
                                      " cron times from ", TimeText(first, state.zone), " to ",
                                      TimeText(newest, state.zone)),
            " passed while the controller was down, longer ago than the grace window (",
            absl::FormatDuration(options_.grace), ")"));
      }
      RecordFiring(state, f, in_grace ? std::optional<absl::Time>() : newest);
    }
    if (in_grace) Fire(state, newest, /*manual=*/false);
    absl::StatusOr<absl::Time> next = state.cron->NextAfter(newest, state.zone);
    state.next_slot = next.ok() ? *next : absl::InfiniteFuture();
  }
  UpdateNextDue();
}

v1::ScheduleFiring ScheduleBook::Fire(ScheduleState& state, absl::Time slot, bool manual) {
  const absl::Time now = clock_->Now();
  const v1::StartRunRequest& run = state.record.schedule.run();
  v1::ScheduleFiring f;
  f.set_schedule(state.record.schedule.name());
  f.set_slot_unix_ms(absl::ToUnixMillis(slot));
  f.set_fired_unix_ms(absl::ToUnixMillis(now));
  f.set_manual(manual);
  f.set_slots(1);
  // The selection's nodes that are offline now: known to the store, not
  // removed, labels matching, and not online here.
  absl::StatusOr<std::vector<storage::NodeRecord>> nodes = store_->ListNodes();
  if (nodes.ok()) {
    for (const storage::NodeRecord& n : *nodes) {
      if (n.removed) continue;
      std::map<std::string, std::string> live_labels;
      if (hooks_.node_online(n.name, &live_labels)) continue;
      const std::map<std::string, std::string>& labels =
          !live_labels.empty() ? live_labels : n.labels;
      bool selected = true;
      for (const auto& [k, v] : run.select_labels()) {
        auto it = labels.find(k);
        selected = selected && it != labels.end() && it->second == v;
      }
      if (selected) f.add_offline_nodes(n.name);
    }
  }
  const std::string& previous = state.record.last_run_id;
  std::optional<std::string> previous_state;
  if (!previous.empty()) previous_state = hooks_.unfinished_run_state(previous);
  if (previous_state) {
    f.set_outcome(v1::FIRING_OUTCOME_SKIPPED);
    f.set_reason(absl::StrCat("the previous run ", previous, " is still ", *previous_state));
  } else {
    absl::StatusOr<v1::StartRunResponse> started = hooks_.start_run(run);
    if (started.ok()) {
      f.set_outcome(v1::FIRING_OUTCOME_STARTED);
      f.set_run_id(started->run_id());
      state.record.last_run_id = started->run_id();
    } else {
      f.set_outcome(v1::FIRING_OUTCOME_FAILED);
      f.set_reason(TruncateReason(started.status().message()));
    }
  }
  RecordFiring(state, f, manual ? std::optional<absl::Time>() : slot);
  return f;
}

void ScheduleBook::RecordFiring(ScheduleState& state, const v1::ScheduleFiring& firing,
                                std::optional<absl::Time> handled_until) {
  if (handled_until) state.record.handled_until = std::max(state.record.handled_until, *handled_until);
  state.last_firing = firing;
  {
    absl::MutexLock lock(&firings_mu_);
    ++firing_counts_[{firing.schedule(), FiringOutcomeName(firing.outcome())}];
  }
  LOG(INFO) << "schedule " << firing.schedule() << ": " << FiringOutcomeName(firing.outcome())
            << (firing.run_id().empty() ? "" : " run " + firing.run_id())
            << (firing.reason().empty() ? "" : ": " + firing.reason());
  // A firing that cannot be stored is not fired again: the run it started
  // is real. After a restart the older mark may run the newest cron time
  // once more if it is still within the grace window (docs/schedules.md).
  if (absl::Status s = store_->RecordFiring(firing, handled_until); !s.ok()) {
    LOG(ERROR) << "schedule " << firing.schedule() << ": storing its firing failed: "
               << s.message();
  }
}

}  // namespace fleetbench::controller
