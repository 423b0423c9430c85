// storage/sqlite_store.h — the SQLite backend of the history store: one
// file (WAL beside it while open), opened by OpenSqliteStore, which applies
// pending schema migrations (storage/migrations.h) before it returns.
//
// Keeps the Store contract (storage/store.h). Its own terms: calls are
// serialised on one connection; UNAVAILABLE when another process holds the
// file's lock past busy_timeout; INTERNAL/DATA_LOSS carry SQLite's
// message; BackupTo uses SQLite's online backup API and copies pages, and
// the copy is a single file (rollback journal, no WAL beside it). Only the
// storage/sqlite_*.cc files include sqlite3.h.
#ifndef FLEETBENCH_STORAGE_SQLITE_STORE_H_
#define FLEETBENCH_STORAGE_SQLITE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/store.h"

namespace fleetbench::storage {

struct SqliteOptions {
  std::string path;
  // NORMAL survives a process crash (SIGKILL) in WAL mode; FULL also
  // survives power loss at the cost of an fsync per commit.
  bool synchronous_full = false;
  // How long a call waits for a lock held by another connection (a reader
  // such as the sqlite3 shell) before failing with UNAVAILABLE.
  absl::Duration busy_timeout = absl::Seconds(5);
  // Test hook, 0 in production: caps the file at this many pages (PRAGMA
  // max_page_count) so tests can drive the disk-full path, where writes fail
  // with RESOURCE_EXHAUSTED and earlier data stays intact.
  int64_t max_page_count = 0;
  // Runs PRAGMA quick_check before anything is written and refuses a file
  // that fails it (DATA_LOSS quoting SQLite). Reads the whole file: the
  // controller sets it at start; tools and tests that reopen often need not.
  bool verify_on_open = false;
  // With verify_on_open, a file larger than this with no schema step
  // pending is checked in the background instead (storage/sqlite_verify.h):
  // the open returns at once, and if the check finds damage every later
  // write fails with its DATA_LOSS while reads go on. 0: always in the
  // background; negative: never.
  int64_t verify_inline_max_bytes = int64_t{1} << 30;
  // Called once, at the open, when the file (of `file_bytes`) is to be
  // checked in the background.
  std::function<void(int64_t file_bytes)> on_verify_started = nullptr;
  // Called once, from the checking thread, when a background check ends:
  // OK, DATA_LOSS (the file is damaged), or another error (it could not be
  // checked), and how long it took. Not called when the store is closed
  // first.
  std::function<void(const absl::Status&, absl::Duration)> on_verified = nullptr;
};

// Opens (creating if needed) the SQLite file and applies pending schema
// migrations. An existing file of 0 bytes (with no WAL beside it) is
// refused with FAILED_PRECONDITION rather than taken for a new history: it
// is most likely a history that was truncated (docs/storage.md).
absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStore(
    const SqliteOptions& options);

// The schema version this build migrates to.
int LatestSchemaVersion();

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_SQLITE_STORE_H_
