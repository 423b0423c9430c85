#include "controller/security/token_authenticator.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/token.h"
#include "controller/security/api_token.h"

namespace fleetbench::controller {
namespace {

constexpr int64_t kLastUseWriteEveryMs = 60 * 1000;

std::string FormatWhen(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", t, absl::UTCTimeZone());
}

bool IsLive(const storage::ApiTokenRecord& r, absl::Time now) {
  return r.revoked == absl::InfiniteFuture() && now < r.expires;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TokenAuthenticator>> TokenAuthenticator::Load(
    storage::Store* store, Clock* clock, std::string shared_token) {
  std::unique_ptr<TokenAuthenticator> auth(
      new TokenAuthenticator(store, clock, std::move(shared_token)));
  absl::StatusOr<std::vector<storage::ApiTokenRecord>> tokens = store->ListApiTokens();
  if (!tokens.ok()) return tokens.status();
  absl::StatusOr<std::optional<std::string>> shared = store->GetSetting(kSharedTokenSetting);
  if (!shared.ok()) return shared.status();
  absl::MutexLock lock(&auth->mu_);
  auth->shared_enabled_ = !shared->has_value() || **shared != "off";
  for (storage::ApiTokenRecord& r : *tokens) {
    auto entry = std::make_unique<Entry>();
    const int64_t used =
        r.last_used == absl::InfinitePast() ? 0 : absl::ToUnixMillis(r.last_used);
    entry->used_ms = used;
    entry->written_ms = used;
    auth->id_of_name_[r.name] = r.token_id;
    const std::string id = r.token_id;
    entry->record = std::move(r);
    auth->by_id_[id] = std::move(entry);
  }
  return auth;
}

absl::StatusOr<Principal> TokenAuthenticator::Authenticate(absl::string_view token) const {
  if (token.empty()) return absl::UnauthenticatedError("missing token");
  const absl::Time now = clock_->Now();
  if (HasApiTokenPrefix(token)) {
    absl::StatusOr<ApiTokenText> parsed = ParseApiToken(token);
    if (!parsed.ok()) return parsed.status();
    const std::string hash = HashTokenSecret(parsed->secret);
    absl::ReaderMutexLock lock(&mu_);
    auto it = by_id_.find(parsed->id);
    // Unknown and wrong read the same, so the answer does not say which
    // ids exist.
    if (it == by_id_.end() || !TokenHashesMatch(it->second->record.secret_hash, hash)) {
      return absl::UnauthenticatedError("unknown or wrong token");
    }
    const Entry& entry = *it->second;
    const storage::ApiTokenRecord& r = entry.record;
    if (r.revoked != absl::InfiniteFuture()) {
      return absl::UnauthenticatedError(
          absl::StrCat("token '", r.name, "' was revoked at ", FormatWhen(r.revoked)));
    }
    if (now >= r.expires) {
      return absl::UnauthenticatedError(
          absl::StrCat("token '", r.name, "' expired at ", FormatWhen(r.expires)));
    }
    absl::StatusOr<Role> role = ParseRole(r.role);
    if (!role.ok()) {
      return absl::UnauthenticatedError(
          absl::StrCat("token '", r.name, "' has no known role; revoke it"));
    }
    NoteUse(entry, now);
    return Principal{r.name, *role};
  }
  if (shared_token_.empty() || !TokenMatches(shared_token_, std::string(token))) {
    return absl::UnauthenticatedError("wrong token");
  }
  absl::ReaderMutexLock lock(&mu_);
  if (!shared_enabled_) {
    return absl::UnauthenticatedError(
        "the shared token is turned off on this controller: use an API token "
        "(fleetbench token create, docs/security.md)");
  }
  return Principal{kSharedTokenPrincipal, Role::kAdmin};
}

void TokenAuthenticator::NoteUse(const Entry& entry, absl::Time now) const {
  const int64_t now_ms = absl::ToUnixMillis(now);
  std::atomic<int64_t>& used = entry.used_ms;
  int64_t seen = used.load();
  while (seen < now_ms && !used.compare_exchange_weak(seen, now_ms)) {
  }
  std::atomic<int64_t>& written = entry.written_ms;
  int64_t last = written.load();
  if (now_ms - last < kLastUseWriteEveryMs) return;
  // One caller wins the write; the others go on.
  if (!written.compare_exchange_strong(last, now_ms)) return;
  if (absl::Status s = store_->TouchApiToken(entry.record.name, now); !s.ok()) {
    LOG(WARNING) << "cannot note the use of token '" << entry.record.name << "': " << s;
  }
}

storage::ApiTokenRecord TokenAuthenticator::Snapshot(const Entry& entry) {
  storage::ApiTokenRecord r = entry.record;
  const int64_t used = entry.used_ms.load();
  if (used > 0) r.last_used = std::max(r.last_used, absl::FromUnixMillis(used));
  return r;
}

absl::StatusOr<TokenAuthenticator::Created> TokenAuthenticator::Create(const std::string& name,
                                                                       Role role,
                                                                       absl::Duration ttl) {
  if (absl::Status s = CheckTokenName(name); !s.ok()) return s;
  if (role == Role::kEnroll) {
    if (ttl < kMinTokenTtl || ttl > kMaxEnrollTtl) {
      return absl::InvalidArgumentError(
          "an enrollment token needs a ttl from 1m to 7d, e.g. --ttl 1h");
    }
  } else if (ttl != absl::ZeroDuration() && (ttl < kMinTokenTtl || ttl > kMaxTokenTtl)) {
    return absl::InvalidArgumentError("a token's ttl is from 1m to 3650d (none: never expires)");
  }
  absl::StatusOr<ApiTokenText> text = NewApiToken();
  if (!text.ok()) return text.status();
  const absl::Time now = clock_->Now();
  Created created;
  storage::ApiTokenRecord& r = created.record;
  r.name = name;
  r.token_id = text->id;
  r.secret_hash = HashTokenSecret(text->secret);
  r.role = std::string(RoleName(role));
  // Milliseconds, as the store keeps them, so what is answered now is what
  // a restart reads.
  r.created = absl::FromUnixMillis(absl::ToUnixMillis(now));
  r.expires = ttl == absl::ZeroDuration() ? absl::InfiniteFuture()
                                          : absl::FromUnixMillis(absl::ToUnixMillis(now + ttl));
  absl::MutexLock change(&change_mu_);
  {
    absl::ReaderMutexLock lock(&mu_);
    int live = 0;
    for (const auto& [id, e] : by_id_) live += IsLive(e->record, now) ? 1 : 0;
    if (live >= kMaxLiveTokens) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "at most ", kMaxLiveTokens, " live tokens; revoke some first"));
    }
  }
  if (absl::Status s = store_->CreateApiToken(r, now); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  // The store freed a dead token's name: the cache drops it too.
  if (auto old = id_of_name_.find(name); old != id_of_name_.end()) {
    by_id_.erase(old->second);
  }
  auto entry = std::make_unique<Entry>();
  entry->record = r;
  id_of_name_[name] = r.token_id;
  by_id_[r.token_id] = std::move(entry);
  created.secret = std::move(text->text);
  return created;
}

std::vector<storage::ApiTokenRecord> TokenAuthenticator::List() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<storage::ApiTokenRecord> out;
  out.reserve(by_id_.size());
  for (const auto& [id, e] : by_id_) out.push_back(Snapshot(*e));
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

absl::StatusOr<storage::ApiTokenRecord> TokenAuthenticator::Revoke(const std::string& name) {
  if (absl::Status s = CheckTokenName(name); !s.ok()) return s;
  absl::MutexLock change(&change_mu_);
  absl::StatusOr<storage::ApiTokenRecord> revoked = store_->RevokeApiToken(name, clock_->Now());
  if (!revoked.ok()) return revoked.status();
  absl::MutexLock lock(&mu_);
  auto id = id_of_name_.find(name);
  if (id == id_of_name_.end()) return *revoked;
  auto entry = by_id_.find(id->second);
  if (entry == by_id_.end()) return *revoked;
  entry->second->record.revoked = revoked->revoked;
  return Snapshot(*entry->second);
}

absl::Status TokenAuthenticator::SetSharedTokenEnabled(bool enabled) {
  absl::MutexLock change(&change_mu_);
  if (!enabled) {
    const absl::Time now = clock_->Now();
    bool admin = false;
    {
      absl::ReaderMutexLock lock(&mu_);
      for (const auto& [id, e] : by_id_) {
        admin |= e->record.role == RoleName(Role::kAdmin) && IsLive(e->record, now);
      }
    }
    if (!admin) {
      return absl::FailedPreconditionError(
          "no live admin token: create one first (fleetbench token create NAME --role admin), "
          "or nobody could manage this controller");
    }
  }
  if (absl::Status s = store_->PutSetting(kSharedTokenSetting, enabled ? "on" : "off"); !s.ok()) {
    return s;
  }
  absl::MutexLock lock(&mu_);
  shared_enabled_ = enabled;
  return absl::OkStatus();
}

bool TokenAuthenticator::shared_token_enabled() const {
  absl::ReaderMutexLock lock(&mu_);
  return shared_enabled_;
}

}  // namespace fleetbench::controller
