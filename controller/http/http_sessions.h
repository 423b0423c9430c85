// controller/http/http_sessions.h — the dashboard's browser sessions: a random
// id (the cookie's value) stands for the token a user logged in with.
//
// Each request with the cookie authenticates the stored token again, so a
// token revoked or expired since the login ends its sessions at once. Held
// in memory only: a controller restart logs every browser out. Bounded:
// past max_sessions the one closest to expiry goes first. Thread-safe.
#ifndef FLEETBENCH_CONTROLLER_HTTP_HTTP_SESSIONS_H_
#define FLEETBENCH_CONTROLLER_HTTP_HTTP_SESSIONS_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace fleetbench::controller {

class HttpSessions {
 public:
  HttpSessions(absl::Duration lifetime, size_t max_sessions)
      : lifetime_(lifetime), max_sessions_(max_sessions > 0 ? max_sessions : 1) {}

  // A new session for `token`: its id, 64 hex digits from getrandom(2).
  std::string Create(std::string token, absl::Time now);
  // The token of a live session; nullopt for an unknown or expired id.
  std::optional<std::string> TokenOf(const std::string& id, absl::Time now);
  void Remove(const std::string& id);
  absl::Duration lifetime() const { return lifetime_; }
  size_t size();

 private:
  struct Session {
    std::string token;
    absl::Time expires;
  };
  const absl::Duration lifetime_;
  const size_t max_sessions_;
  absl::Mutex mu_;
  std::map<std::string, Session> sessions_ ABSL_GUARDED_BY(mu_);
};

// The value of cookie `name` in a Cookie header ("a=1; b=2"), "" if absent.
std::string CookieValue(const std::string& header, const std::string& name);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_HTTP_HTTP_SESSIONS_H_
