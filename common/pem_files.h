// common/pem_files.h — reading and writing the small files TLS needs
// (certificates, keys): a key is written 0600, atomically (a crash leaves
// the old file or the new one, never half of one).
#ifndef FLEETBENCH_COMMON_PEM_FILES_H_
#define FLEETBENCH_COMMON_PEM_FILES_H_

#include <string>

#include "absl/status/statusor.h"

namespace fleetbench {

// The whole file; NOT_FOUND when it does not exist, one line naming the path else.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path);
// Writes `path` through a temporary file and rename, with `mode`.
absl::Status WriteFileAtomically(const std::string& path, const std::string& content, int mode);
// Creates `dir` (one level) with `mode` when missing.
absl::Status EnsureDir(const std::string& dir, int mode);
bool FileExists(const std::string& path);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_PEM_FILES_H_
