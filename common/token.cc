#include "common/token.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace fleetbench {
namespace {

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read token file ", path, ": ", std::strerror(errno)));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token(absl::StripAsciiWhitespace(ss.str()));
  if (token.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("token file ", path, " is empty"));
  }
  return token;
}

}  // namespace

absl::StatusOr<std::string> LoadToken(const std::string& token_file) {
  if (!token_file.empty()) return ReadTokenFile(token_file);
  if (const char* env = std::getenv("FLEETBENCH_TOKEN"); env && *env) {
    return std::string(absl::StripAsciiWhitespace(env));
  }
  if (const char* env = std::getenv("FLEETBENCH_TOKEN_FILE"); env && *env) {
    return ReadTokenFile(env);
  }
  return absl::NotFoundError(
      "no token: pass --token-file or set FLEETBENCH_TOKEN or FLEETBENCH_TOKEN_FILE");
}

absl::StatusOr<std::string> GenerateTokenFile(const std::string& path) {
  std::random_device rd;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (int i = 0; i < 32; ++i) token += kHex[rd() % 16];
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create token file ", path, ": ", std::strerror(errno)));
  }
  const std::string line = token + "\n";
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ::close(fd);
  if (!ok) return absl::InternalError(absl::StrCat("cannot write token file ", path));
  return token;
}

bool TokenMatches(const std::string& expected, const std::string& presented) {
  if (expected.empty()) return false;
  unsigned char diff = expected.size() == presented.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    diff |= static_cast<unsigned char>(expected[i]) ^
            static_cast<unsigned char>(i < presented.size() ? presented[i] : 0);
  }
  return diff == 0;
}

std::string TokenFromAuthorizationHeader(const std::string& header) {
  constexpr char kPrefix[] = "Bearer ";
  if (header.rfind(kPrefix, 0) != 0) return "";
  return header.substr(sizeof(kPrefix) - 1);
}

}  // namespace fleetbench
