// controller/security/token_authenticator.h — the controller's Authenticator: API
// tokens with a role from the store, and the shared token (admin) while it
// is switched on (docs/security.md).
//
// Contract: Authenticate never reads SQLite to answer: the
// tokens (hashes only) are cached in memory, loaded at start and changed
// here only after the store has taken the change (Create, Revoke,
// SetSharedTokenEnabled), so a revoked token is refused from the call
// after Revoke returns. Expiry is judged against the injected Clock. A
// token with the fbt1. prefix is judged only as an API token; anything
// else is compared with the shared token, which is refused once an admin
// turned it off (persisted in the store's settings, so a restart keeps it
// off). Messages say what is wrong (malformed, unknown, wrong, revoked,
// expired, shared token off) and never echo a token. Last use is kept in
// memory and written to the store at most once a minute per token.
// Thread-safe.
#ifndef FLEETBENCH_CONTROLLER_SECURITY_TOKEN_AUTHENTICATOR_H_
#define FLEETBENCH_CONTROLLER_SECURITY_TOKEN_AUTHENTICATOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "controller/security/auth.h"
#include "storage/store.h"

namespace fleetbench::controller {

// An enrollment token lives at most this long; role tokens at most
// kMaxTokenTtl (0 for never is allowed for them).
inline constexpr absl::Duration kMaxEnrollTtl = absl::Hours(24 * 7);
inline constexpr absl::Duration kMaxTokenTtl = absl::Hours(24 * 3650);
inline constexpr absl::Duration kMinTokenTtl = absl::Minutes(1);
// Live (not revoked, not expired) tokens at most, so a script gone wrong
// cannot grow the table and the cache without bound.
inline constexpr int kMaxLiveTokens = 10000;
// The settings key of the shared-token switch ("on" / "off").
inline constexpr char kSharedTokenSetting[] = "shared_token";

class TokenAuthenticator final : public Authenticator {
 public:
  // Loads the tokens and the switch from `store`. `shared_token` may be
  // empty: then only API tokens authenticate. Both must outlive it.
  static absl::StatusOr<std::unique_ptr<TokenAuthenticator>> Load(storage::Store* store,
                                                                   Clock* clock,
                                                                   std::string shared_token);

  absl::StatusOr<Principal> Authenticate(absl::string_view token) const override;

  struct Created {
    storage::ApiTokenRecord record;
    std::string secret;  // the full token text, fbt1.<id>.<secret>
  };
  // A new token. INVALID_ARGUMENT for a bad name or ttl (enroll needs
  // 1 min..7 d; the others 0 for never or 1 min..10 y); ALREADY_EXISTS for
  // a live token's name; RESOURCE_EXHAUSTED past kMaxLiveTokens.
  absl::StatusOr<Created> Create(const std::string& name, Role role, absl::Duration ttl);
  // Every stored token by name (revoked and expired ones included), with
  // last use as this process knows it.
  std::vector<storage::ApiTokenRecord> List() const;
  // NOT_FOUND, or FAILED_PRECONDITION when already revoked.
  absl::StatusOr<storage::ApiTokenRecord> Revoke(const std::string& name);
  // Turning it off needs a live admin token to exist (FAILED_PRECONDITION
  // otherwise), so nobody is locked out of the controller.
  absl::Status SetSharedTokenEnabled(bool enabled);
  bool shared_token_enabled() const;

 private:
  struct Entry {
    storage::ApiTokenRecord record;
    // Unix ms of the newest use seen / written; atomics so Authenticate
    // needs only the reader lock.
    mutable std::atomic<int64_t> used_ms{0};
    mutable std::atomic<int64_t> written_ms{0};
  };

  TokenAuthenticator(storage::Store* store, Clock* clock, std::string shared_token)
      : store_(store), clock_(clock), shared_token_(std::move(shared_token)) {}
  // Notes a use; writes it when the stored one is a minute old.
  void NoteUse(const Entry& entry, absl::Time now) const;
  static storage::ApiTokenRecord Snapshot(const Entry& entry);

  storage::Store* const store_;
  Clock* const clock_;
  const std::string shared_token_;
  // Serialises the changes (store, then cache) against each other.
  absl::Mutex change_mu_;
  mutable absl::Mutex mu_;
  // By token id; by name to the id.
  absl::flat_hash_map<std::string, std::unique_ptr<Entry>> by_id_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> id_of_name_ ABSL_GUARDED_BY(mu_);
  bool shared_enabled_ ABSL_GUARDED_BY(mu_) = true;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_SECURITY_TOKEN_AUTHENTICATOR_H_
