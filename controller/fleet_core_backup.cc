// FleetCore: a copy of the history for `fleetbench backup`. The store's
// online backup runs on the caller's thread (a gRPC worker), never the
// actor's: its steps interleave with the actor's commits on the store.
// The copy is a new file in backup_dir (the history's own folder, which
// only the controller writes), named so that a leftover from a crash is
// recognisable: .fleetbench-backup-*.
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "controller/fleet_core.h"

namespace fleetbench::controller {
namespace {

// Pages per backup step: 256 of the store's 8 KiB pages, 2 MiB, so a step
// holds the store for a few milliseconds.
constexpr int kBackupPagesPerStep = 256;

}  // namespace

absl::StatusOr<std::string> FleetCore::BackupHistory() {
  if (options_.backup_dir.empty()) {
    return absl::FailedPreconditionError("this controller has no folder for backups");
  }
  if (backup_running_.exchange(true)) {
    return absl::FailedPreconditionError("a backup is already running; try again when it ends");
  }
  // mkstemp picks a name no one has; the store wants to create the file
  // itself, so the placeholder goes before it does.
  std::string path = absl::StrCat(options_.backup_dir, "/.fleetbench-backup-XXXXXX");
  const int fd = mkstemp(path.data());
  if (fd < 0) {
    backup_running_.store(false);
    return absl::InternalError(
        absl::StrCat("creating a backup file in ", options_.backup_dir, ": ", strerror(errno)));
  }
  close(fd);
  unlink(path.c_str());
  const absl::Status s = store_->BackupTo(path, kBackupPagesPerStep);
  backup_running_.store(false);
  if (!s.ok()) return s;
  return path;
}

}  // namespace fleetbench::controller
