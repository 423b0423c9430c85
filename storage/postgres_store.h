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
// stored (a transaction not committed is rolled back by the server);
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

  // The history's leader lease (docs/storage.md, The leader lease), for a
  // controller: a session-level advisory lock held by the store's own
  // connection, so only the connection that holds it writes, and taken
  // again on each reconnect. Without `lead` the store takes none (tools,
  // tests).
  bool lead = false;
  // When another holds the lease: wait for it (a standby), checking every
  // `lease_check_interval`, then wait `lease_grace` more before returning,
  // so that a leader that lost its connection has found out and stopped;
  // without it, FAILED_PRECONDITION at once.
  bool wait_for_lead = false;
  // While leading, the connection is checked this often; a leader whose
  // connection went and whose lease another took fails every later call
  // with FAILED_PRECONDITION and calls `lost_lead` once (from the checking
  // thread or the failing call's).
  absl::Duration lease_check_interval = absl::Seconds(1);
  absl::Duration lease_grace = absl::Seconds(3);
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
