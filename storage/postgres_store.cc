// The PostgreSQL store: opening, migrating (the steps are in
// postgres_schema.cc), the leader lease, transactions, and the checks of
// the store's own invariants.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/reason.h"
#include "common/status_macros.h"
#include "storage/postgres_connection.h"
#include "storage/postgres_schema.h"
#include "storage/postgres_store.h"
#include "storage/postgres_store_impl.h"

namespace fleetbench::storage {
namespace {

// Every controller migrating this database takes this transaction-scoped
// advisory lock first ("fleetbnc" in ASCII), so one migrates and the
// others then find the schema current.
constexpr int64_t kMigrationLock = 0x666c656574626e63;
// The leader lease: a session-level advisory lock ("fleetldr").
constexpr int64_t kLeaderLock = 0x666c6565746c6472;

}  // namespace

int LatestPostgresSchemaVersion() { return PgMigrations().back().version; }

bool IsPostgresUrl(const std::string& store) {
  return absl::StartsWith(store, "postgresql://") || absl::StartsWith(store, "postgres://");
}

PgParam PgOptionalMillis(std::optional<absl::Time> t) {
  if (!t.has_value() || *t == absl::InfinitePast() || *t == absl::InfiniteFuture()) {
    return std::nullopt;
  }
  return PgInt(PgMillis(*t));
}

PostgresStore::PostgresStore(std::unique_ptr<PgConnection> conn) : conn_(std::move(conn)) {}

PostgresStore::~PostgresStore() {
  stop_.Notify();
  if (lease_checker_.joinable()) lease_checker_.join();
}

absl::StatusOr<bool> PostgresStore::TryLease(PgConnection& conn) {
  FLEETBENCH_ASSIGN_OR_RETURN(PgRows rows, conn.Exec("SELECT pg_try_advisory_lock($1)",
                                                     {PgInt(kLeaderLock)}, "taking the lease"));
  return rows.Text(0, 0) == "t";
}

absl::Status PostgresStore::LostLeadError() {
  return absl::FailedPreconditionError(
      "this controller lost the lead of the history: its lease is held by another session "
      "(another controller, or this one's own lost connection until the server drops it), or "
      "it could not check its lease for too long");
}

void PostgresStore::LostLead() {
  if (lead_lost_.exchange(true)) return;
  LOG(ERROR) << LostLeadError().message();
  if (lost_lead_) lost_lead_();
}

absl::Status PostgresStore::Lead(const PostgresOptions& options) {
  absl::MutexLock lock(&mu_);
  bool told = false;
  while (true) {
    FLEETBENCH_ASSIGN_OR_RETURN(bool taken, TryLease(*conn_));
    if (taken) break;
    if (!options.wait_for_lead) {
      return absl::FailedPreconditionError(
          "another controller leads this history (holds its lease); start this one with "
          "--standby to take over when it goes");
    }
    if (!told && options.standing_by) {
      absl::StatusOr<PgRows> holder = Exec(
          "SELECT coalesce(a.client_addr::TEXT, 'local socket') || ' (pid ' || l.pid || ')' "
          "FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid "
          "WHERE l.locktype = 'advisory' AND l.granted AND "
          "(l.classid::BIGINT << 32) + l.objid::BIGINT = $1",
          {PgInt(kLeaderLock)}, "finding the leader");
      options.standing_by(holder.ok() && holder->size() > 0 ? holder->Text(0, 0) : "unknown");
      told = true;
    }
    mu_.Unlock();
    absl::SleepFor(options.lease_check_interval);
    mu_.Lock();
  }
  // Whether or not this store waited, a leader whose connection the
  // server dropped may not know yet: by the end of the grace it has found
  // out (a reconnect that finds the lease taken, or checks failing past
  // lease_timeout) and stopped.
  mu_.Unlock();
  absl::SleepFor(options.lease_grace);
  mu_.Lock();
  lost_lead_ = options.lost_lead;
  // A new connection holds no lock: it must take the lease again before
  // anything is sent on it, or refuse every call for good.
  conn_->SetOnReconnect([this](PgConnection& conn) -> absl::Status {
    absl::StatusOr<bool> taken = TryLease(conn);
    if (taken.ok() && *taken) return absl::OkStatus();
    if (!taken.ok() && absl::IsUnavailable(taken.status())) return taken.status();
    LostLead();
    return LostLeadError();
  });
  lease_checker_ = std::thread([this, interval = options.lease_check_interval,
                                timeout = options.lease_timeout] {
    absl::Time last_ok = absl::Now();
    while (!stop_.WaitForNotificationWithTimeout(interval)) {
      absl::Status alive;
      {
        absl::MutexLock lock(&mu_);
        alive = Exec("SELECT 1", {}, "checking the lease").status();
      }
      if (alive.ok()) {
        last_ok = absl::Now();
        continue;
      }
      if (absl::IsFailedPrecondition(alive)) return;  // lost, and said so
      if (absl::Now() - last_ok >= timeout) {
        LostLead();
        return;
      }
    }
  });
  return absl::OkStatus();
}

absl::Status PostgresStore::InTransaction(absl::string_view what,
                                          absl::FunctionRef<absl::Status()> body) {
  if (lead_lost_) return LostLeadError();
  FLEETBENCH_RETURN_IF_ERROR(conn_->Begin(what));
  absl::Status status = body();
  if (status.ok()) status = conn_->Commit(what);
  if (!status.ok()) conn_->Rollback();
  return status;
}

absl::Status PostgresStore::Migrate() {
  absl::MutexLock lock(&mu_);
  return InTransaction("migrating the schema", [&]() -> absl::Status {
    FLEETBENCH_RETURN_IF_ERROR(
        Exec("SELECT pg_advisory_xact_lock($1)", {PgInt(kMigrationLock)}, "locking the schema")
            .status());
    FLEETBENCH_RETURN_IF_ERROR(conn_->ExecScript(
        "CREATE TABLE IF NOT EXISTS fleetbench_schema (version INTEGER NOT NULL)",
        "creating the schema version table"));
    FLEETBENCH_ASSIGN_OR_RETURN(
        PgRows rows, Exec("SELECT coalesce(max(version), 0) FROM fleetbench_schema", {},
                          "reading the schema version"));
    const int64_t version = rows.Int(0, 0);
    if (version > LatestPostgresSchemaVersion()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the PostgreSQL history is at schema ", version, ", newer than this build's ",
          LatestPostgresSchemaVersion(), ": run a newer fleetbench"));
    }
    for (const PgMigration& m : PgMigrations()) {
      if (m.version <= version) continue;
      FLEETBENCH_RETURN_IF_ERROR(conn_->ExecScript(
          m.sql, absl::StrCat("migrating to schema ", m.version, " (", m.description, ")")));
    }
    if (version < LatestPostgresSchemaVersion()) {
      FLEETBENCH_RETURN_IF_ERROR(Exec("DELETE FROM fleetbench_schema", {}, "schema version")
                                     .status());
      FLEETBENCH_RETURN_IF_ERROR(Exec("INSERT INTO fleetbench_schema(version) VALUES ($1)",
                                      {PgInt(LatestPostgresSchemaVersion())}, "schema version")
                                     .status());
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::unique_ptr<Store>> OpenPostgresStore(const PostgresOptions& options) {
  FLEETBENCH_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn,
                              PgConnection::Open(options.url, options.password_file));
  auto store = std::make_unique<PostgresStore>(std::move(conn));
  // A controller migrates only once it leads: a standby of a newer build
  // does not change the schema under a running older leader.
  if (options.lead) FLEETBENCH_RETURN_IF_ERROR(store->Lead(options));
  FLEETBENCH_RETURN_IF_ERROR(store->Migrate());
  return store;
}

absl::StatusOr<int64_t> PostgresStore::RunKeyLocked(const std::string& run_id) {
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows, Exec("SELECT key FROM runs WHERE run_id = $1", {PgText(run_id)}, "finding run"));
  if (rows.size() == 0) {
    return absl::NotFoundError(absl::StrCat("run ", ClipInput(run_id), " not found"));
  }
  return rows.Int(0, 0);
}

absl::StatusOr<int64_t> PostgresStore::CountSamples() {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(PgRows rows,
                              Exec("SELECT count(*) FROM samples", {}, "counting samples"));
  return rows.Int(0, 0);
}

absl::Status PostgresStore::CheckIntegrity() {
  absl::MutexLock lock(&mu_);
  // What the schema does not enforce: samples name their run, node and
  // metric by key without foreign keys (the ingest path resolves them), so
  // a sample whose key names nothing is damage.
  struct Check {
    const char* what;
    const char* sql;
  };
  const Check checks[] = {
      {"samples naming no run",
       "SELECT count(*) FROM samples s WHERE NOT EXISTS "
       "(SELECT 1 FROM runs r WHERE r.key = s.run_key)"},
      {"samples naming no node",
       "SELECT count(*) FROM samples s WHERE NOT EXISTS "
       "(SELECT 1 FROM nodes n WHERE n.id = s.node_id)"},
      {"samples naming no metric",
       "SELECT count(*) FROM samples s WHERE NOT EXISTS "
       "(SELECT 1 FROM metrics m WHERE m.id = s.metric_id)"},
  };
  std::vector<std::string> failed;
  for (const Check& c : checks) {
    FLEETBENCH_ASSIGN_OR_RETURN(PgRows rows, Exec(c.sql, {}, c.what));
    if (rows.Int(0, 0) != 0) failed.push_back(absl::StrCat(rows.Int(0, 0), " ", c.what));
  }
  if (!failed.empty()) {
    return absl::DataLossError(absl::StrCat("the history is damaged: ",
                                            absl::StrJoin(failed, "; ")));
  }
  return absl::OkStatus();
}

absl::Status PostgresStore::BackupTo(const std::string& dest_path, int step_size) {
  (void)dest_path;
  (void)step_size;
  return absl::UnimplementedError(
      "a PostgreSQL history is copied by the server's own tools (pg_dump, base backups), "
      "not by fleetbench backup");
}

}  // namespace fleetbench::storage
