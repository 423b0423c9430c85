// storage/migrations.h — the ordered list of schema migrations.
//
// The schema version lives in SQLite's `PRAGMA user_version` (a field of the
// database header, so it changes in the same transaction as the schema). A
// database at version N gets every step with version > N applied in order,
// each in its own transaction. Steps are append-only: once released, a step's
// SQL never changes; a later change is a new step.
//
// No sqlite3.h here: tests use this header to migrate with their own lists.
#ifndef FLEETBENCH_STORAGE_MIGRATIONS_H_
#define FLEETBENCH_STORAGE_MIGRATIONS_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"

namespace fleetbench::storage {

struct SchemaMigration {
  int version;              // 1, 2, 3, ... strictly increasing
  const char* description;  // one line, shown in errors
  const char* sql;          // one or more statements, no parameters
};

// The migrations this build knows; LatestSchemaVersion() is the last one's.
const std::vector<SchemaMigration>& SchemaMigrations();

// OpenSqliteStore with an explicit migration list, for testing the migration
// machinery (a list with an extra step stands for a future build).
absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStoreWithMigrations(
    const SqliteOptions& options,
    const std::vector<SchemaMigration>& migrations);

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_MIGRATIONS_H_
