// The PostgreSQL store's catalog: the metric descriptors the plugins
// declare, the price catalog, and schedules with their firings.
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
#include "common/status_macros.h"
#include "storage/postgres_store_impl.h"
#include "storage/record_checks.h"

namespace fleetbench::storage {
namespace {

constexpr char kSelectDescriptor[] =
    "SELECT m.name, d.unit, d.direction, d.description, d.benchmark "
    "FROM metric_descriptors d JOIN metrics m ON m.id = d.metric_id ";

v1::MetricDescriptor DescriptorOfRow(const PgRows& rows, int i) {
  v1::MetricDescriptor d;
  d.set_name(rows.Text(i, 0));
  d.set_unit(rows.Text(i, 1));
  const int64_t direction = rows.Int(i, 2);
  d.set_direction(v1::MetricDirection_IsValid(static_cast<int>(direction))
                      ? static_cast<v1::MetricDirection>(direction)
                      : v1::METRIC_DIRECTION_UNSPECIFIED);
  d.set_description(rows.Text(i, 3));
  d.set_benchmark(rows.Text(i, 4));
  return d;
}

constexpr char kFiringColumns[] =
    "slot_ms, fired_ms, outcome, run_id, reason, offline_nodes, manual, slots, schedule";

v1::ScheduleFiring FiringOfRow(const PgRows& rows, int i) {
  v1::ScheduleFiring f;
  f.set_slot_unix_ms(rows.Int(i, 0));
  f.set_fired_unix_ms(rows.Int(i, 1));
  f.set_outcome(static_cast<v1::FiringOutcome>(rows.Int(i, 2)));
  f.set_run_id(rows.Text(i, 3));
  f.set_reason(rows.Text(i, 4));
  for (absl::string_view n : absl::StrSplit(rows.Text(i, 5), ' ', absl::SkipEmpty())) {
    f.add_offline_nodes(std::string(n));
  }
  f.set_manual(rows.Text(i, 6) == "t");
  f.set_slots(static_cast<int32_t>(rows.Int(i, 7)));
  f.set_schedule(rows.Text(i, 8));
  return f;
}

}  // namespace

absl::Status PostgresStore::UpsertMetricDescriptors(
    const std::vector<v1::MetricDescriptor>& descriptors) {
  for (const v1::MetricDescriptor& d : descriptors) {
    FLEETBENCH_RETURN_IF_ERROR(CheckMetricDescriptor(d));
  }
  absl::MutexLock lock(&mu_);
  return InTransaction("storing metric descriptors", [&]() -> absl::Status {
    for (const v1::MetricDescriptor& d : descriptors) {
      FLEETBENCH_RETURN_IF_ERROR(Exec("INSERT INTO metrics(name) VALUES ($1) "
                                      "ON CONFLICT (name) DO NOTHING",
                                      {PgText(d.name())}, "adding a metric")
                                     .status());
      FLEETBENCH_RETURN_IF_ERROR(
          Exec("INSERT INTO metric_descriptors(metric_id, unit, direction, description, "
               "benchmark) SELECT id, $2, $3, $4, $5 FROM metrics WHERE name = $1 "
               "ON CONFLICT (metric_id) DO UPDATE SET unit = excluded.unit, "
               "direction = excluded.direction, description = excluded.description, "
               "benchmark = excluded.benchmark",
               {PgText(d.name()), PgText(d.unit()), PgInt(d.direction()),
                PgText(d.description()), PgText(d.benchmark())},
               "storing metric descriptor")
              .status());
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<v1::MetricDescriptor>> PostgresStore::ListMetricDescriptors() {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(PgRows rows, Exec(absl::StrCat(kSelectDescriptor, "ORDER BY m.name"),
                                                {}, "listing metric descriptors"));
  std::vector<v1::MetricDescriptor> out;
  for (int i = 0; i < rows.size(); ++i) out.push_back(DescriptorOfRow(rows, i));
  return out;
}

absl::StatusOr<v1::MetricDescriptor> PostgresStore::GetMetricDescriptor(const std::string& name) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(PgRows rows,
                              Exec(absl::StrCat(kSelectDescriptor, "WHERE m.name = $1"),
                                   {PgText(name)}, "reading metric descriptor"));
  if (rows.size() == 0) return absl::NotFoundError(absl::StrCat("metric ", name, " is not declared"));
  return DescriptorOfRow(rows, 0);
}

absl::StatusOr<Store::PriceImport> PostgresStore::ImportPrices(
    const std::vector<v1::CatalogPrice>& prices, absl::Time imported) {
  FLEETBENCH_RETURN_IF_ERROR(CheckCatalogPrices(prices));
  absl::MutexLock lock(&mu_);
  PriceImport counts;
  absl::Status status = InTransaction("importing prices", [&]() -> absl::Status {
    for (const v1::CatalogPrice& p : prices) {
      const PgParam spot =
          p.has_spot_price_per_hour() ? PgDouble(p.spot_price_per_hour()) : PgParam(std::nullopt);
      // The stored row's three values are compared as the server sees
      // them: IS NOT DISTINCT FROM takes two NULL spot prices as equal.
      FLEETBENCH_ASSIGN_OR_RETURN(
          PgRows stored,
          Exec("SELECT price_per_hour = $5::DOUBLE PRECISION AND spot_price_per_hour IS NOT "
               "DISTINCT FROM $6::DOUBLE PRECISION AND currency = $7 FROM prices "
               "WHERE provider = $1 AND region = $2 AND instance_type = $3 "
               "AND effective_from_ms = $4",
               {PgText(p.provider()), PgText(p.region()), PgText(p.instance_type()),
                PgInt(p.effective_from_unix_ms()), PgDouble(p.price_per_hour()), spot,
                PgText(p.currency())},
               "reading a stored price"));
      if (stored.size() > 0) {
        if (stored.Text(0, 0) == "t") {
          ++counts.unchanged;
          continue;
        }
        ++counts.replaced;
      } else {
        ++counts.added;
      }
      FLEETBENCH_RETURN_IF_ERROR(
          Exec("INSERT INTO prices(provider, region, instance_type, effective_from_ms, "
               "price_per_hour, spot_price_per_hour, currency, imported_ms) "
               "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
               "ON CONFLICT (provider, region, instance_type, effective_from_ms) DO UPDATE SET "
               "price_per_hour = excluded.price_per_hour, "
               "spot_price_per_hour = excluded.spot_price_per_hour, "
               "currency = excluded.currency, imported_ms = excluded.imported_ms",
               {PgText(p.provider()), PgText(p.region()), PgText(p.instance_type()),
                PgInt(p.effective_from_unix_ms()), PgDouble(p.price_per_hour()), spot,
                PgText(p.currency()), PgInt(PgMillis(imported))},
               "storing a price")
              .status());
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return counts;
}

absl::StatusOr<std::vector<v1::CatalogPrice>> PostgresStore::ListPrices() {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec("SELECT provider, region, instance_type, effective_from_ms, price_per_hour, "
           "spot_price_per_hour, currency, imported_ms FROM prices "
           "ORDER BY provider, region, instance_type, effective_from_ms",
           {}, "listing prices"));
  std::vector<v1::CatalogPrice> out;
  for (int i = 0; i < rows.size(); ++i) {
    v1::CatalogPrice& p = out.emplace_back();
    p.set_provider(rows.Text(i, 0));
    p.set_region(rows.Text(i, 1));
    p.set_instance_type(rows.Text(i, 2));
    p.set_effective_from_unix_ms(rows.Int(i, 3));
    p.set_price_per_hour(rows.Double(i, 4));
    if (!rows.IsNull(i, 5)) p.set_spot_price_per_hour(rows.Double(i, 5));
    p.set_currency(rows.Text(i, 6));
    p.set_imported_unix_ms(rows.Int(i, 7));
  }
  return out;
}

absl::Status PostgresStore::CreateSchedule(const ScheduleRecord& record) {
  const v1::Schedule& s = record.schedule;
  FLEETBENCH_RETURN_IF_ERROR(CheckSchedule(s));
  absl::MutexLock lock(&mu_);
  absl::Status status =
      Exec("INSERT INTO schedules(name, cron, timezone, run, created_ms, handled_until_ms, "
           "last_run_id) VALUES ($1, $2, $3, $4, $5, $6, $7)",
           {PgText(s.name()), PgText(s.cron()), PgText(s.timezone()),
            PgBytes{s.run().SerializeAsString()}, PgInt(s.created_unix_ms()),
            PgInt(PgMillis(record.handled_until)), PgText(record.last_run_id)},
           "storing a schedule")
          .status();
  if (absl::IsAlreadyExists(status)) {
    return absl::AlreadyExistsError(absl::StrCat("a schedule named '", s.name(), "' exists"));
  }
  return status;
}

absl::StatusOr<std::vector<Store::ScheduleRecord>> PostgresStore::ListSchedules() {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows, Exec("SELECT name, cron, timezone, run, created_ms, handled_until_ms, "
                        "last_run_id FROM schedules ORDER BY name",
                        {}, "listing schedules"));
  std::vector<ScheduleRecord> out;
  for (int i = 0; i < rows.size(); ++i) {
    ScheduleRecord& r = out.emplace_back();
    r.schedule.set_name(rows.Text(i, 0));
    r.schedule.set_cron(rows.Text(i, 1));
    r.schedule.set_timezone(rows.Text(i, 2));
    if (!r.schedule.mutable_run()->ParseFromString(rows.Bytes(i, 3))) {
      return absl::DataLossError(
          absl::StrCat("schedule '", r.schedule.name(), "': its stored run does not parse"));
    }
    r.schedule.set_created_unix_ms(rows.Int(i, 4));
    r.handled_until = PgTime(rows.Int(i, 5));
    r.last_run_id = rows.Text(i, 6);
  }
  return out;
}

absl::Status PostgresStore::RemoveSchedule(const std::string& name) {
  absl::MutexLock lock(&mu_);
  // Firings go with it (ON DELETE CASCADE).
  FLEETBENCH_ASSIGN_OR_RETURN(PgRows rows, Exec("DELETE FROM schedules WHERE name = $1",
                                                {PgText(name)}, "removing a schedule"));
  if (rows.affected() == 0) {
    return absl::NotFoundError(absl::StrCat("no schedule named '", name, "'"));
  }
  return absl::OkStatus();
}

absl::Status PostgresStore::RecordFiring(const v1::ScheduleFiring& f,
                                         std::optional<absl::Time> handled_until) {
  absl::MutexLock lock(&mu_);
  return InTransaction("recording a firing", [&]() -> absl::Status {
    // The schedule's row first: a firing of an unknown schedule is
    // NOT_FOUND, not a foreign-key failure. handled_until never goes back.
    FLEETBENCH_ASSIGN_OR_RETURN(
        PgRows moved,
        Exec("UPDATE schedules SET handled_until_ms = greatest(handled_until_ms, "
             "coalesce($2::BIGINT, handled_until_ms)), last_run_id = CASE WHEN $3 <> '' "
             "THEN $3 ELSE last_run_id END WHERE name = $1",
             {PgText(f.schedule()),
              handled_until ? PgInt(PgMillis(*handled_until)) : PgParam(std::nullopt),
              PgText(f.outcome() == v1::FIRING_OUTCOME_STARTED ? f.run_id() : std::string())},
             "moving a schedule's mark"));
    if (moved.affected() == 0) {
      return absl::NotFoundError(absl::StrCat("no schedule named '", f.schedule(), "'"));
    }
    return Exec("INSERT INTO schedule_firings(schedule, slot_ms, fired_ms, outcome, run_id, "
                "reason, offline_nodes, manual, slots) "
                "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                {PgText(f.schedule()), PgInt(f.slot_unix_ms()), PgInt(f.fired_unix_ms()),
                 PgInt(f.outcome()), PgText(f.run_id()), PgText(f.reason()),
                 PgText(absl::StrJoin(f.offline_nodes(), " ")), PgText(f.manual() ? "t" : "f"),
                 PgInt(std::max(f.slots(), 1))},
                "storing a firing")
        .status();
  });
}

absl::StatusOr<std::vector<v1::ScheduleFiring>> PostgresStore::ListFirings(const std::string& name,
                                                                           int limit) {
  if (limit <= 0) return absl::InvalidArgumentError("ListFirings wants a limit above 0");
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(PgRows found, Exec("SELECT 1 FROM schedules WHERE name = $1",
                                                 {PgText(name)}, "looking up a schedule"));
  if (found.size() == 0) return absl::NotFoundError(absl::StrCat("no schedule named '", name, "'"));
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows, Exec(absl::StrCat("SELECT ", kFiringColumns,
                                     " FROM schedule_firings WHERE schedule = $1 "
                                     "ORDER BY id DESC LIMIT $2"),
                        {PgText(name), PgInt(limit)}, "listing firings"));
  std::vector<v1::ScheduleFiring> out;
  for (int i = 0; i < rows.size(); ++i) out.push_back(FiringOfRow(rows, i));
  return out;
}

absl::StatusOr<std::optional<v1::ScheduleFiring>> PostgresStore::FiringOfRun(
    const std::string& run_id) {
  if (run_id.empty()) return std::nullopt;
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows, Exec(absl::StrCat("SELECT ", kFiringColumns,
                                     " FROM schedule_firings WHERE run_id = $1 AND run_id <> '' "
                                     "ORDER BY id LIMIT 1"),
                        {PgText(run_id)}, "finding a run's firing"));
  if (rows.size() == 0) return std::nullopt;
  return FiringOfRow(rows, 0);
}

}  // namespace fleetbench::storage
