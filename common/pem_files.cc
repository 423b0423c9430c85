#include "common/pem_files.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace fleetbench {

absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return absl::PermissionDeniedError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  std::ostringstream out;
  out << in.rdbuf();
  // Certificates and keys are a few KiB; anything this large is not one.
  if (out.tellp() > (1 << 20)) return absl::InvalidArgumentError(absl::StrCat(path, ": too large"));
  return out.str();
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& content, int mode) {
  const std::string temp = path + ".tmp";
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return absl::InternalError(absl::StrCat(temp, ": ", std::strerror(errno)));
  // umask may have taken bits off; a key must not be readable by others,
  // and a certificate must be readable.
  fchmod(fd, mode);
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      close(fd);
      return absl::InternalError(absl::StrCat(temp, ": ", why));
    }
    done += n;
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    return absl::InternalError(absl::StrCat(temp, ": ", std::strerror(errno)));
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    return absl::InternalError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status EnsureDir(const std::string& dir, int mode) {
  if (mkdir(dir.c_str(), mode) == 0 || errno == EEXIST) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(dir, ": ", std::strerror(errno)));
}

bool FileExists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

}  // namespace fleetbench
