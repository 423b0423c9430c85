// storage/postgres_store.h — the PostgreSQL backend of the history store:
// the history in a database on a PostgreSQL server, for fleets whose
// history outgrows a file on one machine, and for several controllers that
// share one history (docs/storage.md, PostgreSQL).
//
// Keeps the Store contract (storage/store.h), proven by the store contract
// suite run against a real server. Its own terms: OpenPostgresStore
// connects, and creates or migrates the schema in one transaction under an
// advisory lock, so two controllers starting at once do not both migrate;
// calls are serialised on one connection (a controller's calls are short);
// a connection lost between calls is opened again by the next call, and a
// call that fails on a lost connection is UNAVAILABLE with nothing of it
// stored (a transaction not committed is rolled back by the server),
// except for a COMMIT whose reply was lost: it may have committed (the
// controller's retries are idempotent: samples by id; a run created again
// is ALREADY_EXISTS); text holds no NUL byte, which is stored as U+FFFD;
// BackupTo is UNIMPLEMENTED: the server's own tools (pg_dump, base
// backups) copy a PostgreSQL history; CheckIntegrity checks the store's own
// invariants (what the schema cannot say), not the server's pages.
// Only the storage/postgres_*.cc files include libpq-fe.h.
#ifndef FLEETBENCH_STORAGE_POSTGRES_STORE_H_
#define FLEETBENCH_STORAGE_POSTGRES_STORE_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/store.h"

namespace fleetbench::storage {

struct PostgresOptions {
  // postgresql://USER@HOST[:PORT]/DB (storage/postgres_connection.h).
  std::string url;
  // The password's file; empty: libpq's PGPASSFILE (~/.pgpass).
  std::string password_file;

  // The history's leader lease (docs/operations.md, "A PostgreSQL history
  // and a standby controller"), for a controller: a session-level advisory lock held by the store's own
  // connection, so only the connection that holds it writes, and taken
  // again on each reconnect. Without `lead` the store takes none (tools,
  // tests).
  bool lead = false;
  // When another holds the lease: wait for it (a standby), trying every
  // `lease_check_interval`; without it, FAILED_PRECONDITION at once.
  bool wait_for_lead = false;
  // While leading, the connection is checked every lease_check_interval.
  // The lead is lost when a reconnect finds the lease held by another
  // session, or when no check has succeeded for `lease_timeout` (the
  // leader cannot tell whether the server still holds its lease, so it
  // stops). Then every later call fails with FAILED_PRECONDITION and
  // `lost_lead` is called once.
  absl::Duration lease_check_interval = absl::Seconds(1);
  absl::Duration lease_timeout = absl::Seconds(3);
  // Having taken the lease, a store waits this long before it returns:
  // a leader that lost it has stopped by then. It must exceed
  // lease_check_interval + lease_timeout + the longest a check can block
  // (2 s: storage/postgres_connection.cc's connect and TCP timeouts).
  absl::Duration lease_grace = absl::Seconds(7);
  std::function<void()> lost_lead;
  // Called once while waiting for the lease, with who holds it (for a log
  // line).
  std::function<void(const std::string& holder)> standing_by;
};

// Connects and brings the schema to this build's version.
// FAILED_PRECONDITION for a database whose schema a newer build wrote.
absl::StatusOr<std::unique_ptr<Store>> OpenPostgresStore(const PostgresOptions& options);

// The PostgreSQL schema version this build migrates to.
int LatestPostgresSchemaVersion();

// Whether `store` names a PostgreSQL URL (postgresql:// or postgres://)
// rather than a SQLite file.
bool IsPostgresUrl(const std::string& store);

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_POSTGRES_STORE_H_
