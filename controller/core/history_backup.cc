// HistoryBackup: a copy of the history for `fleetbench backup`. The store's
// online backup runs on the caller's thread (a gRPC worker), never the
// actor's: its steps interleave with the actor's commits on the store.
// The copy is a new file in backup_dir (the history's own folder, which
// only the controller writes), named so that a leftover from a crash is
// recognisable: .fleetbench-backup-*.
#include "controller/core/history_backup.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace fleetbench::controller {
namespace {

// Pages per backup step: 256 of the store's 8 KiB pages, 2 MiB, so a step
// holds the store for a few milliseconds.
constexpr int kBackupPagesPerStep = 256;

}  // namespace

HistoryBackup::HistoryBackup(storage::Store* store, std::string backup_dir)
    : store_(store), backup_dir_(std::move(backup_dir)) {}

absl::StatusOr<std::string> HistoryBackup::Copy() {
  if (backup_dir_.empty()) {
    return absl::FailedPreconditionError("this controller has no folder for backups");
  }
  if (running_.exchange(true)) {
    return absl::FailedPreconditionError("a backup is already running; try again when it ends");
  }
  // mkstemp picks a name no one has; the store wants to create the file
  // itself, so the placeholder goes before it does.
  std::string path = absl::StrCat(backup_dir_, "/.fleetbench-backup-XXXXXX");
  const int fd = mkstemp(path.data());
  if (fd < 0) {
    running_.store(false);
    return absl::InternalError(
        absl::StrCat("creating a backup file in ", backup_dir_, ": ", strerror(errno)));
  }
  close(fd);
  unlink(path.c_str());
  const absl::Status s = store_->BackupTo(path, kBackupPagesPerStep);
  running_.store(false);
  if (!s.ok()) return s;
  return path;
}

}  // namespace fleetbench::controller
