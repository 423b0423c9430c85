#include "controller/history_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fleetbench::controller {

absl::StatusOr<HistoryLock> HistoryLock::Take(const std::string& db_path) {
  // Beside the file itself, however it is reached: a history named through
  // a symbolic link or by another spelling is the same history.
  std::error_code error_code;
  const std::filesystem::path real = std::filesystem::weakly_canonical(db_path, error_code);
  const std::string path = (error_code ? db_path : real.string()) + ".lock";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot open ", path, " to own the history: ", std::strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    // The holder wrote its pid; a short read leaves the message without it.
    char buf[32] = {};
    const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    if (error != EWOULDBLOCK) {
      return absl::UnavailableError(
          absl::StrCat("cannot lock ", path, ": ", std::strerror(error)));
    }
    int pid = 0;
    const bool named = n > 0 && absl::SimpleAtoi(absl::StripAsciiWhitespace(buf), &pid);
    return absl::FailedPreconditionError(absl::StrCat(
        "another controller", named ? absl::StrCat(" (pid ", pid, ")") : "",
        " serves the history ", db_path, " (it holds ", path,
        "); stop it first, or give this one another --db"));
  }
  const std::string pid = absl::StrCat(getpid(), "\n");
  const bool noted = ftruncate(fd, 0) == 0 &&
                     pwrite(fd, pid.data(), pid.size(), 0) == static_cast<ssize_t>(pid.size());
  (void)noted;  // the lock is what counts; the pid only makes a refusal clearer
  return HistoryLock(fd);
}

HistoryLock::HistoryLock(HistoryLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

HistoryLock& HistoryLock::operator=(HistoryLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

HistoryLock::~HistoryLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace fleetbench::controller
