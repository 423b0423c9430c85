// controller/core/history_backup.h — a consistent copy of the whole history
// while the controller serves (docs/operations.md, `fleetbench backup`).
//
// Copy runs on the caller's thread (a gRPC worker), never the actor's: the
// store's online backup interleaves its steps with the actor's commits.
// One copy at a time, from any thread. The copy is a new file in
// `backup_dir` (the history's own folder, which only the controller
// writes) whose path is returned; the caller streams it and removes it.
// FAILED_PRECONDITION while another copy runs or without a backup_dir.
#ifndef FLEETBENCH_CONTROLLER_CORE_HISTORY_BACKUP_H_
#define FLEETBENCH_CONTROLLER_CORE_HISTORY_BACKUP_H_

#include <atomic>
#include <string>

#include "absl/status/statusor.h"
#include "storage/store.h"

namespace fleetbench::controller {

class HistoryBackup {
 public:
  // `store` must outlive this. `backup_dir` "": no backups.
  HistoryBackup(storage::Store* store, std::string backup_dir);

  absl::StatusOr<std::string> Copy();

 private:
  storage::Store* const store_;
  const std::string backup_dir_;
  std::atomic<bool> running_{false};
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_HISTORY_BACKUP_H_
