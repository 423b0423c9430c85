#include "storage/sqlite_verify.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "storage/sqlite_statement.h"

namespace fleetbench::storage {

absl::Status CorruptError(const std::string& path, absl::string_view found) {
  return absl::DataLossError(absl::StrCat(
      "database ", path, " is corrupt (", found,
      "); restore it from a backup, or salvage what is readable with `sqlite3 ", path,
      " .recover`"));
}

absl::Status QuickCheck(sqlite3* db, const std::string& path) {
  const std::string what = absl::StrCat("checking ", path);
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s, Statement::PrepareOnce(db, "PRAGMA quick_check(5)", what));
  std::vector<std::string> problems;
  while (true) {
    absl::StatusOr<bool> row = s.Step(what);
    if (!row.ok()) {
      return CorruptError(path, absl::StrCat("quick_check: ", row.status().message()));
    }
    if (!*row) break;
    if (s.Text(0) != "ok") problems.push_back(s.Text(0));
  }
  if (problems.empty()) return absl::OkStatus();
  return CorruptError(path, absl::StrCat("quick_check: ", absl::StrJoin(problems, "; ")));
}

HistoryVerifier::HistoryVerifier(std::string path, Done done)
    : path_(std::move(path)), done_(std::move(done)), thread_([this] { Run(); }) {}

HistoryVerifier::~HistoryVerifier() {
  stopping_ = true;
  {
    absl::MutexLock lock(&mu_);
    if (db_ != nullptr) sqlite3_interrupt(db_);
  }
  thread_.join();
}

void HistoryVerifier::Run() {
  const absl::Time start = absl::Now();
  sqlite3* db = nullptr;
  // Read-only: the check never writes, and as a WAL reader it sees one
  // snapshot while the store goes on committing.
  int rc = sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  absl::Status status;
  if (rc != SQLITE_OK) {
    status = SqliteStatus(db, rc, absl::StrCat("opening ", path_, " to check it"));
  } else {
    // A small page cache: the check reads every page once, and a large
    // cache would only grow the controller's memory.
    status = Exec(db, "PRAGMA cache_size = -8192", "setting the check's cache size");
    if (status.ok()) {
      {
        absl::MutexLock lock(&mu_);
        db_ = db;
      }
      if (!stopping_) status = QuickCheck(db, path_);
      absl::MutexLock lock(&mu_);
      db_ = nullptr;
    }
  }
  sqlite3_close(db);
  if (stopping_) return;
  done_(status, absl::Now() - start);
}

}  // namespace fleetbench::storage
