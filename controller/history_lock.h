// controller/history_lock.h — one controller per history file.
//
// Two controllers on one history would both dispatch to the same agents,
// fire every schedule twice, prune and back up the same file, and the
// second would take over the first's local socket (DB.sock). The first to
// start holds an exclusive flock(2) on DB.lock for its whole life; a second
// is refused at start with the holder's pid. The kernel drops the lock when
// the holder exits, however it exits, so a killed controller leaves nothing
// to clean up. The lock is on a file of its own: SQLite locks the history
// with fcntl(2) byte ranges, which any close of another descriptor on that
// file would release.
#ifndef FLEETBENCH_CONTROLLER_HISTORY_LOCK_H_
#define FLEETBENCH_CONTROLLER_HISTORY_LOCK_H_

#include <string>

#include "absl/status/statusor.h"

namespace fleetbench::controller {

class HistoryLock {
 public:
  // Takes DB.lock beside the real path of `db_path` (a history reached
  // through a symbolic link is the same history), without waiting.
  // FAILED_PRECONDITION naming the holder's pid when another process holds it.
  static absl::StatusOr<HistoryLock> Take(const std::string& db_path);

  HistoryLock(HistoryLock&& other) noexcept;
  HistoryLock& operator=(HistoryLock&& other) noexcept;
  HistoryLock(const HistoryLock&) = delete;
  HistoryLock& operator=(const HistoryLock&) = delete;
  ~HistoryLock();

 private:
  explicit HistoryLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_HISTORY_LOCK_H_
