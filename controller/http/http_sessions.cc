#include "controller/http/http_sessions.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace fleetbench::controller {
namespace {

std::string RandomId() {
  uint8_t bytes[32];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
    // EINTR: try again; nothing else fails for 32 bytes after boot.
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (uint8_t b : bytes) {
    id += kHex[b >> 4];
    id += kHex[b & 15];
  }
  return id;
}

}  // namespace

std::string HttpSessions::Create(std::string token, absl::Time now) {
  std::string id = RandomId();
  absl::MutexLock lock(&mu_);
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    it = it->second.expires <= now ? sessions_.erase(it) : std::next(it);
  }
  while (sessions_.size() >= max_sessions_) {
    auto oldest = sessions_.begin();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
      if (it->second.expires < oldest->second.expires) oldest = it;
    }
    sessions_.erase(oldest);
  }
  sessions_[id] = Session{std::move(token), now + lifetime_};
  return id;
}

std::optional<std::string> HttpSessions::TokenOf(const std::string& id, absl::Time now) {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return std::nullopt;
  if (it->second.expires <= now) {
    sessions_.erase(it);
    return std::nullopt;
  }
  return it->second.token;
}

void HttpSessions::Remove(const std::string& id) {
  absl::MutexLock lock(&mu_);
  sessions_.erase(id);
}

size_t HttpSessions::size() {
  absl::MutexLock lock(&mu_);
  return sessions_.size();
}

std::string CookieValue(const std::string& header, const std::string& name) {
  for (absl::string_view part : absl::StrSplit(header, ';')) {
    part = absl::StripAsciiWhitespace(part);
    const size_t eq = part.find('=');
    if (eq == absl::string_view::npos || part.substr(0, eq) != name) continue;
    return std::string(part.substr(eq + 1));
  }
  return "";
}

}  // namespace fleetbench::controller
