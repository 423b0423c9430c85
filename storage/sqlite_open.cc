// Opening a SQLite history file: the connection's pragmas, then the schema
// migrations (the steps are in migrations.cc).
#include <sqlite3.h>

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "storage/migrations.h"
#include "storage/sqlite_sample_ids.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/sqlite_verify.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"

namespace fleetbench::storage {
namespace {

// Page size and caches, chosen by measurement (docs/storage.md): 8 KiB pages
// beat 4 and 16 KiB on commit CPU and on reading the ranking chunks. No
// mmap: every page it maps counts in the controller's RSS (the open's
// quick_check alone mapped 1 GiB of a 5M-sample history), while ranking
// now reads day summaries and a raw scan costs 18% more without it.
constexpr int kPageSize = 8192;
constexpr int64_t kCacheKib = 64 * 1024;
constexpr int64_t kMmapBytes = 0;
// A checkpoint (copying the WAL into the database, two fsyncs) runs in the
// commit that grows the WAL past this many pages: 32 MiB between checkpoints
// instead of SQLite's default 8 MiB makes the fsync stalls a quarter as
// frequent; the ingest rate rose about 15% in the measurement.
constexpr int kWalCheckpointPages = 4096;

absl::Status NewerSchemaError(const std::string& path, int64_t version,
                              int latest) {
  return absl::FailedPreconditionError(absl::StrCat(
      "database ", path, " has schema version ", version,
      ", newer than the latest this build knows (", latest,
      "); use a newer fleetbench build or another database file"));
}

// The single integer a pragma such as user_version answers.
absl::StatusOr<int64_t> QueryInt(sqlite3* db, const char* sql,
                                 absl::string_view what) {
  FLEETBENCH_ASSIGN_OR_RETURN(Statement s,
                              Statement::PrepareOnce(db, sql, what));
  FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step(what));
  return row ? s.Int(0) : 0;
}

absl::StatusOr<std::string> QueryText(sqlite3* db, const char* sql,
                                      absl::string_view what) {
  FLEETBENCH_ASSIGN_OR_RETURN(Statement s,
                              Statement::PrepareOnce(db, sql, what));
  FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step(what));
  return row ? s.Text(0) : std::string();
}

// An existing file of 0 bytes is not a history SQLite would create (a new
// file gets its header when WAL is enabled, before anything else): it is a
// history that was truncated or replaced. Opening it would silently start
// an empty history under the old name, so it is refused. A non-empty WAL
// beside it may still hold the data; SQLite recovers that, so it is let be.
absl::Status RefuseEmptyFile(const std::string& path) {
  struct stat main_file {};
  if (stat(path.c_str(), &main_file) != 0 || !S_ISREG(main_file.st_mode) ||
      main_file.st_size != 0) {
    return absl::OkStatus();
  }
  struct stat wal {};
  if (stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "database ", path,
      " exists but is empty (0 bytes), so it holds no history; if it held "
      "one, restore it from a backup; to start a new history, delete the "
      "file or name one that does not exist"));
}

// The main file's size in bytes; 0 when it cannot be read (a new file).
int64_t FileBytes(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_size);
}

absl::Status CheckMigrationList(const std::vector<SchemaMigration>& migrations) {
  if (migrations.empty()) {
    return absl::InvalidArgumentError("no schema migrations");
  }
  int previous = 0;
  for (const SchemaMigration& m : migrations) {
    if (m.version <= previous) {
      return absl::InvalidArgumentError(absl::StrCat(
          "schema migrations out of order at version ", m.version));
    }
    previous = m.version;
  }
  return absl::OkStatus();
}

// Applies every step newer than the file's user_version, each in its own
// transaction together with the user_version bump, so a crash mid-way leaves
// the file at the last completed version.
absl::Status Migrate(sqlite3* db, const std::string& path,
                     const std::vector<SchemaMigration>& migrations) {
  const int latest = migrations.back().version;
  FLEETBENCH_ASSIGN_OR_RETURN(
      int64_t initial,
      QueryInt(db, "PRAGMA user_version", absl::StrCat("reading ", path)));
  for (const SchemaMigration& m : migrations) {
    if (m.version <= initial) continue;
    const std::string what =
        absl::StrCat("migrating ", path, " to schema version ", m.version, " (",
                     m.description, ")");
    FLEETBENCH_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE", what));
    absl::Status status = [&]() -> absl::Status {
      // Read under the write lock: another process may have migrated.
      FLEETBENCH_ASSIGN_OR_RETURN(int64_t current,
                                  QueryInt(db, "PRAGMA user_version", what));
      if (current > latest) return NewerSchemaError(path, current, latest);
      if (current >= m.version) return absl::OkStatus();
      FLEETBENCH_RETURN_IF_ERROR(Exec(db, m.sql, what));
      FLEETBENCH_RETURN_IF_ERROR(
          Exec(db, absl::StrCat("PRAGMA user_version = ", m.version), what));
      return Exec(db, "COMMIT", what);
    }();
    RollBackIfOpen(db);
    FLEETBENCH_RETURN_IF_ERROR(status);
  }
  return absl::OkStatus();
}

// The connection's pragmas; answers the file's schema version as it was
// before any migration.
absl::StatusOr<int64_t> Configure(sqlite3* db, const SqliteOptions& options, int latest) {
  const std::string& path = options.path;
  sqlite3_extended_result_codes(db, 1);
  FLEETBENCH_RETURN_IF_ERROR(RegisterSampleIdFunction(db));
  sqlite3_busy_timeout(
      db, static_cast<int>(absl::ToInt64Milliseconds(options.busy_timeout)));
  // Reading the header first: a file that is not a database fails here with
  // DATA_LOSS, and a newer schema is refused before anything is written.
  FLEETBENCH_ASSIGN_OR_RETURN(
      int64_t version,
      QueryInt(db, "PRAGMA user_version", absl::StrCat("reading ", path)));
  if (version > latest) return NewerSchemaError(path, version, latest);
  FLEETBENCH_ASSIGN_OR_RETURN(
      int64_t pages,
      QueryInt(db, "PRAGMA page_count", absl::StrCat("reading ", path)));
  if (pages == 0) {
    // Only a new, empty file can take a page size (not later in WAL mode).
    FLEETBENCH_RETURN_IF_ERROR(
        Exec(db, absl::StrCat("PRAGMA page_size = ", kPageSize),
             "setting page size"));
  }
  FLEETBENCH_ASSIGN_OR_RETURN(
      std::string mode, QueryText(db, "PRAGMA journal_mode = WAL",
                                  absl::StrCat("enabling WAL on ", path)));
  if (mode != "wal") {
    return absl::FailedPreconditionError(absl::StrCat(
        "database ", path, " cannot use WAL journaling (got \"", mode,
        "\"); use a file on a local filesystem"));
  }
  FLEETBENCH_RETURN_IF_ERROR(Exec(db,
                                  options.synchronous_full
                                      ? "PRAGMA synchronous = FULL"
                                      : "PRAGMA synchronous = NORMAL",
                                  "setting synchronous"));
  FLEETBENCH_RETURN_IF_ERROR(
      Exec(db, "PRAGMA foreign_keys = ON", "enabling foreign keys"));
  FLEETBENCH_RETURN_IF_ERROR(
      Exec(db, absl::StrCat("PRAGMA cache_size = -", kCacheKib),
           "setting cache size"));
  FLEETBENCH_RETURN_IF_ERROR(
      Exec(db, absl::StrCat("PRAGMA mmap_size = ", kMmapBytes),
           "setting mmap size"));
  FLEETBENCH_RETURN_IF_ERROR(
      Exec(db, "PRAGMA temp_store = MEMORY", "setting temp store"));
  FLEETBENCH_RETURN_IF_ERROR(Exec(
      db, absl::StrCat("PRAGMA wal_autocheckpoint = ", kWalCheckpointPages),
      "setting the WAL checkpoint interval"));
  return version;
}

// The mode and pragmas of a connection, then migrations, then the test cap.
absl::StatusOr<std::unique_ptr<Store>> Open(
    const SqliteOptions& options,
    const std::vector<SchemaMigration>& migrations) {
  if (options.path.empty()) {
    return absl::InvalidArgumentError("SQLite store needs a file path");
  }
  FLEETBENCH_RETURN_IF_ERROR(CheckMigrationList(migrations));
  FLEETBENCH_RETURN_IF_ERROR(RefuseEmptyFile(options.path));
  sqlite3* db = nullptr;
  // NOMUTEX: the store's own mutex serialises every use of the connection.
  const int rc = sqlite3_open_v2(
      options.path.c_str(), &db,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
      nullptr);
  if (rc != SQLITE_OK) {
    absl::Status status =
        SqliteStatus(db, rc, absl::StrCat("opening ", options.path));
    sqlite3_close(db);
    return status;
  }
  absl::StatusOr<int64_t> version = Configure(db, options, migrations.back().version);
  absl::Status status = version.status();
  // Reading the header and the schema already meets a damaged first page
  // or schema page: said the way quick_check's findings are.
  if (status.code() == absl::StatusCode::kDataLoss) {
    status = CorruptError(options.path, status.message());
  }
  // Checked before migrating: a corrupt file is not written to. A large
  // file with no schema step pending is checked beside serving instead
  // (sqlite_verify.h): its first writes go in before the check has read
  // every page, a risk taken for a start in seconds rather than minutes.
  bool verify_later = false;
  if (status.ok() && options.verify_on_open) {
    const int64_t file_bytes = FileBytes(options.path);
    verify_later = *version == migrations.back().version &&
                   options.verify_inline_max_bytes >= 0 &&
                   file_bytes > options.verify_inline_max_bytes;
    if (verify_later && options.on_verify_started) options.on_verify_started(file_bytes);
    if (!verify_later) status = QuickCheck(db, options.path);
  }
  if (status.ok()) status = Migrate(db, options.path, migrations);
  if (status.ok() && options.max_page_count > 0) {
    status = Exec(db,
                  absl::StrCat("PRAGMA max_page_count = ", options.max_page_count),
                  "setting max_page_count");
  }
  if (!status.ok()) {
    sqlite3_close(db);
    return status;
  }
  auto store = std::make_unique<SqliteStore>(db, options.path);
  FLEETBENCH_RETURN_IF_ERROR(store->ReadSamplesLayout());
  FLEETBENCH_RETURN_IF_ERROR(store->BuildPendingDaySummaries());
  if (verify_later) store->VerifyInBackground(options.on_verified);
  return store;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStore(
    const SqliteOptions& options) {
  return Open(options, SchemaMigrations());
}

absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStoreWithMigrations(
    const SqliteOptions& options,
    const std::vector<SchemaMigration>& migrations) {
  return Open(options, migrations);
}

}  // namespace fleetbench::storage
