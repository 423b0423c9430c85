// agent/benchmarks/disk_common/scratch_path.h — where the disk benchmark may put
// its test file, and the file itself.
//
// The runner gives each benchmark one scratch folder; nothing outside it may
// be written. ScratchDir opens the folder once, one path component at a
// time from "/" with O_NOFOLLOW, and refuses a folder that is missing, not a
// folder, relative, or not canonical (".", ".." or a symlink anywhere in
// it: whatever it resolves to is not what the operator configured).
// Everything the benchmark then does there — sweeping stale files, asking
// for free space, creating its test file (O_EXCL, O_NOFOLLOW) — is relative
// to that open handle, never to the path again, so swapping the folder or
// any ancestor for a symlink after the check cannot put a byte outside it.
// ScratchFile removes its file when destroyed: after a normal run, a
// failure or a cancellation alike. CreateScratchDirs makes the folder at
// agent start-up the same way, never creating through a symlink.
//
// Errors: FAILED_PRECONDITION (the node cannot run the benchmark as
// configured; the runner reports it as skipped, with the reason) for every
// scratch problem including too little free space; ALREADY_EXISTS when the
// test file name is taken; errno codes mapped by absl::ErrnoToStatus.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_DISK_COMMON_SCRATCH_PATH_H_
#define FLEETBENCH_AGENT_BENCHMARKS_DISK_COMMON_SCRATCH_PATH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fleetbench::agent {

// An open handle on a checked scratch folder (see above). Thread-compatible;
// fd() may be used from any thread while it lives.
class ScratchDir {
 public:
  // FAILED_PRECONDITION, saying what is wrong with `path`, for every reason
  // above.
  static absl::StatusOr<std::unique_ptr<ScratchDir>> Open(const std::string& path);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // O_RDONLY | O_DIRECTORY, on the folder as it was when opened.
  int fd() const { return fd_; }
  // The path as checked, slashes collapsed: for messages, never reopened.
  const std::string& path() const { return path_; }
  // <path>/<name>, for messages.
  std::string Join(const std::string& name) const;
  // OK when `file_name` is one plain component that does not exist in the
  // folder yet; ALREADY_EXISTS when it does (FAILED_PRECONDITION for a
  // symlink there that leads outside); INVALID_ARGUMENT for a path.
  absl::Status CheckNewName(const std::string& file_name) const;

 private:
  ScratchDir(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
};

// Creates `path` and its missing parents (mode 0755 less the umask) the way
// ScratchDir opens it: one component at a time from "/", refusing a
// symlink anywhere instead of creating through it. FAILED_PRECONDITION
// saying which component is a symlink or not a folder.
absl::Status CreateScratchDirs(const std::string& path);

// <scratch_dir>/<file_name> after ScratchDir::Open and CheckNewName. For
// callers that only check; a writer keeps the ScratchDir instead.
absl::StatusOr<std::string> ResolveScratchTarget(const std::string& scratch_dir,
                                                 const std::string& file_name);

// "fleetbench-disk-<16 hex digits>.dat", random each call.
std::string RandomDiskFileName();
// True for names RandomDiskFileName makes.
bool IsDiskFileName(const std::string& name);

// Removes test files in `dir` that no live process holds: a ScratchFile
// keeps an exclusive flock on its file, so one that can be locked was left
// by a run that was killed (SIGKILL, OOM, power loss) before it could clean
// up. Symlinks and other names are never touched. Returns how many files
// were removed.
absl::StatusOr<int> RemoveStaleScratchFiles(const ScratchDir& dir);
// The same, opening `dir` as ScratchDir::Open does.
absl::StatusOr<int> RemoveStaleScratchFiles(const std::string& dir);

// OK when `available_bytes` covers the file plus 10%; FAILED_PRECONDITION
// with both numbers otherwise. Pure.
absl::Status CheckFreeSpace(const std::string& dir, uint64_t available_bytes,
                            uint64_t file_bytes);
// Bytes an unprivileged user may still write in `dir` (fstatvfs f_bavail).
absl::StatusOr<uint64_t> AvailableBytes(const ScratchDir& dir);
absl::StatusOr<uint64_t> AvailableBytes(const std::string& dir);

// A file this process created and will remove. Not thread-safe; fd() may be
// used from any thread while the object lives.
class ScratchFile {
 public:
  // Creates `file_name` (mode 0600) in the open folder `dir` and holds an
  // exclusive flock on it while it lives. Fails if the name exists, symlink
  // or not.
  static absl::StatusOr<std::unique_ptr<ScratchFile>> Create(
      const ScratchDir& dir, const std::string& file_name);
  // The same, opening `dir` as ScratchDir::Open does.
  static absl::StatusOr<std::unique_ptr<ScratchFile>> Create(
      const std::string& dir, const std::string& file_name);
  // Unlinks the file, then closes every descriptor (releasing the lock).
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Read-write descriptor opened without O_DIRECT.
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // A second read-write descriptor on the same file with `extra_flags`
  // (e.g. O_DIRECT), owned by this object. Fails with the errno of open(2),
  // e.g. INVALID_ARGUMENT when the filesystem refuses O_DIRECT.
  absl::StatusOr<int> Reopen(int extra_flags);

 private:
  ScratchFile(int dir_fd, int fd, std::string name, std::string path)
      : dir_fd_(dir_fd),
        fd_(fd),
        name_(std::move(name)),
        path_(std::move(path)) {}

  int dir_fd_;
  int fd_;
  int reopened_fd_ = -1;
  std::string name_;
  std::string path_;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_DISK_COMMON_SCRATCH_PATH_H_
