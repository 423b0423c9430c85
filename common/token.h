// common/token.h — the shared secret that agents and CLI clients present to
// the controller ("authorization: Bearer <token>" metadata).
//
// Where a token comes from, first match wins: an explicit file, the
// FLEETBENCH_TOKEN environment variable, the file named by
// FLEETBENCH_TOKEN_FILE. The controller may generate one (GenerateTokenFile).
#ifndef FLEETBENCH_COMMON_TOKEN_H_
#define FLEETBENCH_COMMON_TOKEN_H_

#include <string>

#include "absl/status/statusor.h"

namespace fleetbench {

inline constexpr char kAuthMetadataKey[] = "authorization";

// NOT_FOUND when no source names a token.
absl::StatusOr<std::string> LoadToken(const std::string& token_file);
// Writes a new random token to `path` with mode 0600 and returns it.
absl::StatusOr<std::string> GenerateTokenFile(const std::string& path);
// Compares in time independent of where the first difference is.
bool TokenMatches(const std::string& expected, const std::string& presented);
// "Bearer <token>" -> token; empty when malformed.
std::string TokenFromAuthorizationHeader(const std::string& header);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_TOKEN_H_
