// The SQLite store's schedules: a definition row per schedule with the
// newest cron time handled, and one row per firing (docs/schedules.md).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "fleetbench/v1/schedule.pb.h"
#include "storage/record_checks.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/store.h"

namespace fleetbench::storage {
namespace {

constexpr char kFiringColumns[] =
    "slot_ms, fired_ms, outcome, run_id, reason, offline_nodes, manual, slots, schedule";

// A firing from a row of kFiringColumns.
v1::ScheduleFiring FiringOfRow(const Statement& s) {
  v1::ScheduleFiring f;
  f.set_slot_unix_ms(s.Int(0));
  f.set_fired_unix_ms(s.Int(1));
  f.set_outcome(static_cast<v1::FiringOutcome>(s.Int(2)));
  f.set_run_id(s.Text(3));
  f.set_reason(s.Text(4));
  for (absl::string_view n : absl::StrSplit(s.Text(5), ' ', absl::SkipEmpty())) {
    f.add_offline_nodes(std::string(n));
  }
  f.set_manual(s.Int(6) != 0);
  f.set_slots(static_cast<int32_t>(s.Int(7)));
  f.set_schedule(s.Text(8));
  return f;
}

}  // namespace

absl::Status SqliteStore::CreateSchedule(const ScheduleRecord& record) {
  const v1::Schedule& s = record.schedule;
  FLEETBENCH_RETURN_IF_ERROR(CheckSchedule(s));
  const std::string run = s.run().SerializeAsString();
  absl::MutexLock lock(&mu_);
  absl::Status status = InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    return RunCached(
        "INSERT INTO schedules(name, cron, timezone, run, created_ms, handled_until_ms, "
        "last_run_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        "storing a schedule", s.name(), s.cron(), s.timezone(), SqlBlob{run},
        s.created_unix_ms(), ToMillis(record.handled_until), record.last_run_id);
  });
  if (absl::IsAlreadyExists(status)) {
    return absl::AlreadyExistsError(absl::StrCat("a schedule named '", s.name(), "' exists"));
  }
  return status;
}

absl::StatusOr<std::vector<Store::ScheduleRecord>> SqliteStore::ListSchedules() {
  absl::MutexLock lock(&mu_);
  std::vector<ScheduleRecord> out;
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s, Prepare("SELECT name, cron, timezone, run, created_ms, handled_until_ms, "
                           "last_run_id FROM schedules ORDER BY name"));
  while (true) {
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("listing schedules"));
    if (!row) break;
    ScheduleRecord& r = out.emplace_back();
    r.schedule.set_name(s.Text(0));
    r.schedule.set_cron(s.Text(1));
    r.schedule.set_timezone(s.Text(2));
    if (!r.schedule.mutable_run()->ParseFromString(std::string(s.Blob(3)))) {
      return absl::DataLossError(
          absl::StrCat("schedule '", r.schedule.name(), "': its stored run does not parse"));
    }
    r.schedule.set_created_unix_ms(s.Int(4));
    r.handled_until = FromMillis(s.Int(5));
    r.last_run_id = s.Text(6);
  }
  return out;
}

absl::Status SqliteStore::RemoveSchedule(const std::string& name) {
  absl::MutexLock lock(&mu_);
  return InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    // Firings go with it (ON DELETE CASCADE).
    FLEETBENCH_ASSIGN_OR_RETURN(
        int removed,
        RowsChangedBy("DELETE FROM schedules WHERE name = ?1", "removing a schedule", name));
    if (removed == 0) return absl::NotFoundError(absl::StrCat("no schedule named '", name, "'"));
    return absl::OkStatus();
  });
}

absl::Status SqliteStore::RecordFiring(const v1::ScheduleFiring& f,
                                       std::optional<absl::Time> handled_until) {
  const std::string offline = absl::StrJoin(f.offline_nodes(), " ");
  absl::MutexLock lock(&mu_);
  return InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    // The row first: a firing of an unknown schedule is NOT_FOUND, not a
    // foreign-key failure.
    FLEETBENCH_ASSIGN_OR_RETURN(
        int updated,
        RowsChangedBy(
            "UPDATE schedules SET handled_until_ms = max(handled_until_ms, coalesce(?2, "
            "handled_until_ms)), last_run_id = CASE WHEN ?3 != '' THEN ?3 ELSE last_run_id END "
            "WHERE name = ?1",
            "moving a schedule's mark", f.schedule(),
            handled_until ? std::optional<int64_t>(ToMillis(*handled_until)) : std::nullopt,
            f.outcome() == v1::FIRING_OUTCOME_STARTED ? f.run_id() : std::string()));
    if (updated == 0) {
      return absl::NotFoundError(absl::StrCat("no schedule named '", f.schedule(), "'"));
    }
    return RunCached(
        "INSERT INTO schedule_firings(schedule, slot_ms, fired_ms, outcome, run_id, reason, "
        "offline_nodes, manual, slots) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        "storing a firing", f.schedule(), f.slot_unix_ms(), f.fired_unix_ms(),
        static_cast<int64_t>(f.outcome()), f.run_id(), f.reason(), offline,
        static_cast<int64_t>(f.manual()), static_cast<int64_t>(std::max(f.slots(), 1)));
  });
}

absl::StatusOr<std::vector<v1::ScheduleFiring>> SqliteStore::ListFirings(const std::string& name,
                                                                         int limit) {
  if (limit <= 0) return absl::InvalidArgumentError("ListFirings wants a limit above 0");
  absl::MutexLock lock(&mu_);
  std::vector<v1::ScheduleFiring> out;
  absl::Status status = InTransaction(TxnKind::kRead, [&]() -> absl::Status {
    {
      FLEETBENCH_ASSIGN_OR_RETURN(Statement s,
                                  Prepare("SELECT 1 FROM schedules WHERE name = ?1"));
      s.BindAll(name);
      FLEETBENCH_ASSIGN_OR_RETURN(bool found, s.Step("looking up a schedule"));
      if (!found) return absl::NotFoundError(absl::StrCat("no schedule named '", name, "'"));
    }
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement s,
        Prepare(absl::StrCat("SELECT ", kFiringColumns,
                             " FROM schedule_firings WHERE schedule = ?1 ORDER BY id DESC "
                             "LIMIT ?2")));
    s.BindAll(name, static_cast<int64_t>(limit));
    while (true) {
      FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("listing firings"));
      if (!row) break;
      v1::ScheduleFiring& f = out.emplace_back(FiringOfRow(s));
      f.set_schedule(name);
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<std::optional<v1::ScheduleFiring>> SqliteStore::FiringOfRun(
    const std::string& run_id) {
  if (run_id.empty()) return std::nullopt;
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s, Prepare(absl::StrCat("SELECT ", kFiringColumns,
                                        " FROM schedule_firings WHERE run_id = ?1 AND "
                                        "run_id != '' ORDER BY id LIMIT 1")));
  s.BindAll(run_id);
  FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("finding a run's firing"));
  if (!row) return std::nullopt;
  return FiringOfRow(s);
}

}  // namespace fleetbench::storage
