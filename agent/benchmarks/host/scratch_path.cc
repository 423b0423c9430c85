#include "agent/benchmarks/host/scratch_path.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <random>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/units.h"

namespace fleetbench::agent {
namespace {

absl::Status Refuse(const std::string& dir, const std::string& why) {
  return absl::FailedPreconditionError(
      absl::StrCat("disk: scratch dir '", dir, "' ", why));
}

// "/a//b/" -> "/a/b"; components are checked separately.
std::string CollapseSlashes(const std::string& path) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(path, '/', absl::SkipEmpty());
  return absl::StrCat("/", absl::StrJoin(parts, "/"));
}

absl::StatusOr<std::string> RealPath(const std::string& path) {
  char buffer[PATH_MAX];
  if (realpath(path.c_str(), buffer) == nullptr) {
    return absl::ErrnoToStatus(errno, absl::StrCat("realpath ", path));
  }
  return std::string(buffer);
}

bool IsInside(const std::string& path, const std::string& dir) {
  return absl::StartsWith(path, dir) && path.size() > dir.size() &&
         (dir == "/" || path[dir.size()] == '/');
}

}  // namespace

absl::StatusOr<std::string> ResolveScratchTarget(const std::string& scratch_dir,
                                                 const std::string& file_name) {
  if (scratch_dir.empty()) {
    return absl::FailedPreconditionError(
        "disk: no scratch dir is configured; the disk benchmark writes only "
        "there");
  }
  if (scratch_dir[0] != '/') return Refuse(scratch_dir, "is not absolute");
  for (absl::string_view part : absl::StrSplit(scratch_dir, '/')) {
    if (part == "..") return Refuse(scratch_dir, "contains '..'");
    if (part == ".") return Refuse(scratch_dir, "contains '.'");
  }
  struct stat st;
  if (stat(scratch_dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return Refuse(scratch_dir, "does not exist");
    return absl::ErrnoToStatus(errno, absl::StrCat("disk: stat ", scratch_dir));
  }
  if (!S_ISDIR(st.st_mode)) return Refuse(scratch_dir, "is not a directory");
  const std::string dir = CollapseSlashes(scratch_dir);
  absl::StatusOr<std::string> real = RealPath(dir);
  if (!real.ok()) return real.status();
  if (*real != dir) {
    return Refuse(scratch_dir,
                  absl::StrCat("goes through a symlink and resolves to '",
                               *real, "'; configure that path instead"));
  }

  if (file_name.empty() || file_name == "." || file_name == ".." ||
      absl::StrContains(file_name, '/')) {
    return absl::InvalidArgumentError(absl::StrCat(
        "disk: test file name '", file_name, "' is not one path component"));
  }
  const std::string target = dir == "/" ? absl::StrCat("/", file_name)
                                        : absl::StrCat(dir, "/", file_name);
  if (lstat(target.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      absl::StatusOr<std::string> leads_to = RealPath(target);
      if (!leads_to.ok() || !IsInside(*leads_to, dir)) {
        return absl::FailedPreconditionError(
            absl::StrCat("disk: '", target,
                         "' is a symlink that leads outside the scratch "
                         "dir (to '",
                         leads_to.ok() ? *leads_to : "a missing target",
                         "'); refusing to write through it"));
      }
    }
    return absl::AlreadyExistsError(
        absl::StrCat("disk: '", target, "' already exists; not reusing it"));
  }
  if (errno != ENOENT) {
    return absl::ErrnoToStatus(errno, absl::StrCat("disk: lstat ", target));
  }
  return target;
}

std::string RandomDiskFileName() {
  std::random_device device;
  const uint64_t bits = (static_cast<uint64_t>(device()) << 32) ^ device();
  return absl::StrFormat("fleetbench-disk-%016x.dat", bits);
}

bool IsDiskFileName(const std::string& name) {
  constexpr absl::string_view kPrefix = "fleetbench-disk-";
  constexpr absl::string_view kSuffix = ".dat";
  if (name.size() != kPrefix.size() + 16 + kSuffix.size() ||
      !absl::StartsWith(name, kPrefix) || !absl::EndsWith(name, kSuffix)) {
    return false;
  }
  for (size_t i = kPrefix.size(); i < kPrefix.size() + 16; ++i) {
    const char c = name[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

absl::StatusOr<int> RemoveStaleScratchFiles(const std::string& dir) {
  const int dir_fd =
      open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("disk: open ", dir));
  }
  DIR* listing = fdopendir(dup(dir_fd));
  if (listing == nullptr) {
    const int error = errno;
    close(dir_fd);
    return absl::ErrnoToStatus(error, absl::StrCat("disk: list ", dir));
  }
  int removed = 0;
  while (const dirent* entry = readdir(listing)) {
    const std::string name = entry->d_name;
    if (!IsDiskFileName(name)) continue;
    const int fd = openat(dir_fd, name.c_str(),
                          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        unlinkat(dir_fd, name.c_str(), 0) == 0) {
      ++removed;
    }
    close(fd);
  }
  closedir(listing);
  close(dir_fd);
  return removed;
}

absl::Status CheckFreeSpace(const std::string& dir, uint64_t available_bytes,
                            uint64_t file_bytes) {
  const uint64_t needed = file_bytes + file_bytes / 10;
  if (available_bytes >= needed) return absl::OkStatus();
  const auto mib = [](uint64_t bytes) {
    return static_cast<double>(bytes) / kMiB;
  };
  return absl::FailedPreconditionError(absl::StrFormat(
      "disk: scratch dir '%s' has %.1f MiB free; a %.1f MiB test file needs "
      "%.1f MiB (the file + 10%%); lower file_mib or free space",
      dir, mib(available_bytes), mib(file_bytes), mib(needed)));
}

absl::StatusOr<uint64_t> AvailableBytes(const std::string& dir) {
  struct statvfs st;
  if (statvfs(dir.c_str(), &st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("disk: statvfs ", dir));
  }
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

absl::StatusOr<std::unique_ptr<ScratchFile>> ScratchFile::Create(
    const std::string& dir, const std::string& file_name) {
  const int dir_fd =
      open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("disk: open ", dir));
  }
  const int fd =
      openat(dir_fd, file_name.c_str(),
             O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int error = errno;
    close(dir_fd);
    return absl::ErrnoToStatus(
        error, absl::StrCat("disk: create ", dir, "/", file_name));
  }
  // Tells RemoveStaleScratchFiles in another process that this file is live.
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    unlinkat(dir_fd, file_name.c_str(), 0);
    close(fd);
    close(dir_fd);
    return absl::ErrnoToStatus(
        error, absl::StrCat("disk: lock ", dir, "/", file_name));
  }
  return std::unique_ptr<ScratchFile>(
      new ScratchFile(dir_fd, fd, file_name,
                      dir == "/" ? absl::StrCat("/", file_name)
                                 : absl::StrCat(dir, "/", file_name)));
}

absl::StatusOr<int> ScratchFile::Reopen(int extra_flags) {
  if (reopened_fd_ >= 0) {
    close(reopened_fd_);
    reopened_fd_ = -1;
  }
  const int fd = openat(dir_fd_, name_.c_str(),
                        O_RDWR | O_NOFOLLOW | O_CLOEXEC | extra_flags);
  if (fd < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("disk: reopen ", path_));
  }
  // The name must still be the file created: nothing may have replaced it.
  struct stat mine, now;
  if (fstat(fd_, &mine) != 0 || fstat(fd, &now) != 0 ||
      mine.st_ino != now.st_ino || mine.st_dev != now.st_dev) {
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(
        "disk: '", path_, "' was replaced while the benchmark ran"));
  }
  reopened_fd_ = fd;
  return fd;
}

ScratchFile::~ScratchFile() {
  // Unlink while still holding the lock, so no sweeper sees it unlocked.
  unlinkat(dir_fd_, name_.c_str(), 0);
  if (reopened_fd_ >= 0) close(reopened_fd_);
  close(fd_);
  close(dir_fd_);
}

}  // namespace fleetbench::agent
