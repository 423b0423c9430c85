#include "agent/benchmarks/disk_common/scratch_path.h"

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

namespace {

// One step of the walk: `name` under the open folder `parent`, never
// followed if it is a symlink. `flags` picks O_PATH (just a place to look
// things up) or O_RDONLY (the folder itself).
enum class Step { kOpened, kMissing };
absl::StatusOr<Step> OpenComponent(int parent, const std::string& name, const std::string& shown,
                                   const std::string& prefix, int flags, int* out) {
  *out = openat(parent, name.c_str(), flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (*out >= 0) return Step::kOpened;
  const int error = errno;
  if (error == ENOENT) return Step::kMissing;
  struct stat st;
  if (fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
    absl::StatusOr<std::string> real = RealPath(prefix);
    return Refuse(shown, absl::StrCat("goes through a symlink at '", prefix, "'",
                                      real.ok() ? absl::StrCat(" and resolves to '", *real, "'")
                                                : std::string(),
                                      "; configure the real path instead"));
  }
  if (error == ENOTDIR) {
    return Refuse(shown, prefix == shown ? std::string("is not a directory")
                                         : absl::StrCat("has '", prefix, "', not a directory"));
  }
  return absl::ErrnoToStatus(error, absl::StrCat("disk: open ", prefix));
}

// Opens (or with `create`, makes and opens) `path` from "/" one component
// at a time. The returned fd is O_RDONLY | O_DIRECTORY.
absl::StatusOr<std::pair<int, std::string>> WalkScratchPath(const std::string& path,
                                                            bool create) {
  if (path.empty()) {
    return absl::FailedPreconditionError(
        "disk: no scratch dir is configured; the disk benchmark writes only "
        "there");
  }
  if (path[0] != '/') return Refuse(path, "is not absolute");
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == "..") return Refuse(path, "contains '..'");
    if (part == ".") return Refuse(path, "contains '.'");
    parts.emplace_back(part);
  }
  const std::string canonical = CollapseSlashes(path);
  int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, "disk: open /");
  std::string prefix;
  for (size_t i = 0; i < parts.size(); ++i) {
    absl::StrAppend(&prefix, "/", parts[i]);
    const bool last = i + 1 == parts.size();
    const int flags = last ? O_RDONLY : O_PATH;
    int next = -1;
    absl::StatusOr<Step> step = OpenComponent(fd, parts[i], canonical, prefix, flags, &next);
    if (step.ok() && *step == Step::kMissing && create) {
      if (mkdirat(fd, parts[i].c_str(), 0755) != 0 && errno != EEXIST) {
        const int error = errno;
        close(fd);
        return absl::ErrnoToStatus(error, absl::StrCat("create ", prefix));
      }
      step = OpenComponent(fd, parts[i], canonical, prefix, flags, &next);
    }
    close(fd);
    if (!step.ok()) return step.status();
    if (*step == Step::kMissing) {
      return Refuse(canonical, prefix == canonical
                                   ? std::string("does not exist")
                                   : absl::StrCat("does not exist ('", prefix, "' is missing)"));
    }
    fd = next;
  }
  return std::make_pair(fd, canonical);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ScratchDir>> ScratchDir::Open(const std::string& path) {
  absl::StatusOr<std::pair<int, std::string>> opened = WalkScratchPath(path, false);
  if (!opened.ok()) return opened.status();
  return std::unique_ptr<ScratchDir>(new ScratchDir(opened->first, opened->second));
}

ScratchDir::~ScratchDir() { close(fd_); }

std::string ScratchDir::Join(const std::string& name) const {
  return path_ == "/" ? absl::StrCat("/", name) : absl::StrCat(path_, "/", name);
}

absl::Status ScratchDir::CheckNewName(const std::string& file_name) const {
  if (file_name.empty() || file_name == "." || file_name == ".." ||
      absl::StrContains(file_name, '/')) {
    return absl::InvalidArgumentError(absl::StrCat(
        "disk: test file name '", file_name, "' is not one path component"));
  }
  const std::string target = Join(file_name);
  struct stat st;
  if (fstatat(fd_, file_name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) {
      absl::StatusOr<std::string> leads_to = RealPath(target);
      if (!leads_to.ok() || !IsInside(*leads_to, path_)) {
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
  return absl::OkStatus();
}

absl::Status CreateScratchDirs(const std::string& path) {
  absl::StatusOr<std::pair<int, std::string>> made = WalkScratchPath(path, true);
  if (!made.ok()) return made.status();
  close(made->first);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ResolveScratchTarget(const std::string& scratch_dir,
                                                 const std::string& file_name) {
  absl::StatusOr<std::unique_ptr<ScratchDir>> dir = ScratchDir::Open(scratch_dir);
  if (!dir.ok()) return dir.status();
  if (absl::Status s = (*dir)->CheckNewName(file_name); !s.ok()) return s;
  return (*dir)->Join(file_name);
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

absl::StatusOr<int> RemoveStaleScratchFiles(const ScratchDir& dir) {
  const int dir_fd = dir.fd();
  // opendir takes ownership of its fd and rewinds it: give it its own,
  // opened afresh relative to the folder (".", never the path).
  const int list_fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* listing = list_fd >= 0 ? fdopendir(list_fd) : nullptr;
  if (listing == nullptr) {
    const int error = errno;
    if (list_fd >= 0) close(list_fd);
    return absl::ErrnoToStatus(error, absl::StrCat("disk: list ", dir.path()));
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
  return removed;
}

absl::StatusOr<int> RemoveStaleScratchFiles(const std::string& dir) {
  absl::StatusOr<std::unique_ptr<ScratchDir>> opened = ScratchDir::Open(dir);
  if (!opened.ok()) return opened.status();
  return RemoveStaleScratchFiles(**opened);
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

absl::StatusOr<uint64_t> AvailableBytes(const ScratchDir& dir) {
  struct statvfs st;
  if (fstatvfs(dir.fd(), &st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("disk: statvfs ", dir.path()));
  }
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

absl::StatusOr<uint64_t> AvailableBytes(const std::string& dir) {
  absl::StatusOr<std::unique_ptr<ScratchDir>> opened = ScratchDir::Open(dir);
  if (!opened.ok()) return opened.status();
  return AvailableBytes(**opened);
}

absl::StatusOr<std::unique_ptr<ScratchFile>> ScratchFile::Create(
    const ScratchDir& dir, const std::string& file_name) {
  if (file_name.empty() || file_name == "." || file_name == ".." ||
      absl::StrContains(file_name, '/')) {
    return absl::InvalidArgumentError(absl::StrCat(
        "disk: test file name '", file_name, "' is not one path component"));
  }
  // Its own handle on the same folder (not the path): the file is removed
  // relative to it however long the ScratchDir lives.
  const int dir_fd = fcntl(dir.fd(), F_DUPFD_CLOEXEC, 0);
  if (dir_fd < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("disk: dup ", dir.path()));
  }
  const int fd =
      openat(dir_fd, file_name.c_str(),
             O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int error = errno;
    close(dir_fd);
    return absl::ErrnoToStatus(
        error, absl::StrCat("disk: create ", dir.Join(file_name)));
  }
  // Tells RemoveStaleScratchFiles in another process that this file is live.
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    unlinkat(dir_fd, file_name.c_str(), 0);
    close(fd);
    close(dir_fd);
    return absl::ErrnoToStatus(
        error, absl::StrCat("disk: lock ", dir.Join(file_name)));
  }
  return std::unique_ptr<ScratchFile>(
      new ScratchFile(dir_fd, fd, file_name, dir.Join(file_name)));
}

absl::StatusOr<std::unique_ptr<ScratchFile>> ScratchFile::Create(
    const std::string& dir, const std::string& file_name) {
  absl::StatusOr<std::unique_ptr<ScratchDir>> opened = ScratchDir::Open(dir);
  if (!opened.ok()) return opened.status();
  return Create(**opened, file_name);
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
