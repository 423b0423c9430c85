// storage/sqlite_verify.h — checking a history file's b-trees
// (PRAGMA quick_check), before serving or beside it.
//
// The controller refuses a damaged history rather than serve it as a smaller
// one. quick_check reads the whole file: about 3 minutes for a
// 16.9 GB history on a cold disk, which a controller restart
// should not cost. So a file above SqliteOptions::verify_inline_max_bytes is
// checked by a HistoryVerifier: its own read-only connection on its own
// thread, while the store serves; the store refuses every write once it
// reports damage (sqlite_store_impl.h, MarkDamaged).
#ifndef FLEETBENCH_STORAGE_SQLITE_VERIFY_H_
#define FLEETBENCH_STORAGE_SQLITE_VERIFY_H_

#include <sqlite3.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "storage/sqlite_store.h"

namespace fleetbench::storage {

// DATA_LOSS saying that `path` is corrupt, quoting what SQLite found, with
// what to do about it.
absl::Status CorruptError(const std::string& path, absl::string_view found);

// PRAGMA quick_check on `db` (the b-trees and their pages, not each blob's
// contents). OK, or CorruptError with up to five of SQLite's findings.
absl::Status QuickCheck(sqlite3* db, const std::string& path);

// Runs QuickCheck of `path` once, on a thread and a read-only connection of
// its own, then calls `done` (on that thread) with the result and how long
// it took. Destroying it stops a check under way (sqlite3_interrupt) and
// waits for the thread; `done` is not called then.
class HistoryVerifier {
 public:
  using Done = std::function<void(const absl::Status&, absl::Duration)>;
  HistoryVerifier(std::string path, Done done);
  ~HistoryVerifier();
  HistoryVerifier(const HistoryVerifier&) = delete;
  HistoryVerifier& operator=(const HistoryVerifier&) = delete;

 private:
  void Run();

  const std::string path_;
  const Done done_;
  std::atomic<bool> stopping_{false};
  absl::Mutex mu_;
  // The checking connection while it is open, for sqlite3_interrupt.
  sqlite3* db_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_SQLITE_VERIFY_H_
