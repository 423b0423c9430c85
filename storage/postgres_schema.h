// storage/postgres_schema.h — the PostgreSQL store's schema, step by step
// (docs/storage.md, PostgreSQL). A step is never edited once released; a
// change is a new step. OpenPostgresStore applies the pending ones.
#ifndef FLEETBENCH_STORAGE_POSTGRES_SCHEMA_H_
#define FLEETBENCH_STORAGE_POSTGRES_SCHEMA_H_

#include <vector>

namespace fleetbench::storage {

struct PgMigration {
  int version;
  const char* description;
  const char* sql;
};

// In version order.
const std::vector<PgMigration>& PgMigrations();

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_POSTGRES_SCHEMA_H_
