// The SQLite store's online backup (Store::BackupTo): sqlite3_backup_* from
// the store's own connection into a new file, a few pages per step with the
// store's mutex released between steps, so ingest goes on while it copies.
// Writes made through this connection meanwhile are applied to the copy by
// SQLite itself (the backup does not restart for them).
#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <system_error>
#include "absl/time/clock.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"

namespace fleetbench::storage {
namespace {

// Closes the copy's connection and, unless kept, deletes the copy.
class Destination {
 public:
  explicit Destination(std::string path) : path_(std::move(path)) {}
  ~Destination() {
    if (db_ != nullptr) sqlite3_close(db_);
    if (!keep_) {
      std::error_code ignored;
      std::filesystem::remove(path_, ignored);
      std::filesystem::remove(path_ + "-journal", ignored);
    }
  }
  absl::Status Open() {
    const int rc = sqlite3_open_v2(path_.c_str(), &db_,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    return rc == SQLITE_OK ? absl::OkStatus()
                           : SqliteStatus(db_, rc, absl::StrCat("creating ", path_));
  }
  absl::Status Close() {
    const int rc = sqlite3_close(db_);
    db_ = nullptr;
    return rc == SQLITE_OK ? absl::OkStatus()
                           : absl::InternalError(absl::StrCat("closing ", path_, ": rc ", rc));
  }
  sqlite3* db() const { return db_; }
  void Keep() { keep_ = true; }

 private:
  const std::string path_;
  sqlite3* db_ = nullptr;
  bool keep_ = false;
};

}  // namespace

absl::Status SqliteStore::BackupTo(const std::string& dest_path, int pages_per_step) {
  if (pages_per_step <= 0) {
    return absl::InvalidArgumentError("a backup step needs at least one page");
  }
  std::error_code error;
  if (std::filesystem::exists(dest_path, error) || error) {
    return absl::AlreadyExistsError(
        absl::StrCat("backup destination ", dest_path, " exists; not overwriting it"));
  }
  Destination dest(dest_path);
  FLEETBENCH_RETURN_IF_ERROR(dest.Open());
  sqlite3_backup* backup = nullptr;
  {
    absl::MutexLock lock(&mu_);
    backup = sqlite3_backup_init(dest.db(), "main", db_, "main");
  }
  if (backup == nullptr) {
    return SqliteStatus(dest.db(), sqlite3_errcode(dest.db()), "starting the backup");
  }
  int rc = SQLITE_OK;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      rc = sqlite3_backup_step(backup, pages_per_step);
    }
    if (rc == SQLITE_DONE) break;
    if (rc == SQLITE_OK) continue;
    // Another process (a reader such as the sqlite3 shell) holds a lock:
    // let it finish, as busy_timeout would.
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
      absl::SleepFor(absl::Milliseconds(5));
      continue;
    }
    break;
  }
  {
    absl::MutexLock lock(&mu_);
    sqlite3_backup_finish(backup);
  }
  if (rc != SQLITE_DONE) {
    return SqliteStatus(dest.db(), rc, absl::StrCat("copying the history to ", dest_path));
  }
  // The pages say WAL, as the source does; a backup is better one file.
  FLEETBENCH_RETURN_IF_ERROR(
      Exec(dest.db(), "PRAGMA journal_mode = DELETE", "making the backup one file"));
  FLEETBENCH_RETURN_IF_ERROR(dest.Close());
  dest.Keep();
  return absl::OkStatus();
}

}  // namespace fleetbench::storage
