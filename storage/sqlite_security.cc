// The SQLite store's security tables (schema version 9): API tokens kept
// as SHA-256 hashes, a few controller settings, and the audit of mutating
// calls, bounded by row count (docs/security.md).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "storage/record_checks.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/store.h"

namespace fleetbench::storage {
namespace {

constexpr char kTokenColumns[] =
    "name, token_id, secret_hash, role, created_ms, expires_ms, revoked_ms, last_used_ms";

// NULL for a time that stands for "never" (either infinity).
std::optional<int64_t> OptionalMillis(absl::Time t) {
  if (t == absl::InfiniteFuture() || t == absl::InfinitePast()) return std::nullopt;
  return ToMillis(t);
}

absl::Time TimeOrDefault(const Statement& s, int col, absl::Time null_means) {
  return s.IsNull(col) ? null_means : FromMillis(s.Int(col));
}

ApiTokenRecord TokenOfRow(const Statement& s) {
  ApiTokenRecord t;
  t.name = s.Text(0);
  t.token_id = s.Text(1);
  t.secret_hash = std::string(s.Blob(2));
  t.role = s.Text(3);
  t.created = FromMillis(s.Int(4));
  t.expires = TimeOrDefault(s, 5, absl::InfiniteFuture());
  t.revoked = TimeOrDefault(s, 6, absl::InfiniteFuture());
  t.last_used = TimeOrDefault(s, 7, absl::InfinitePast());
  return t;
}

}  // namespace

absl::Status SqliteStore::CreateApiToken(const ApiTokenRecord& token, absl::Time now) {
  FLEETBENCH_RETURN_IF_ERROR(CheckApiToken(token));
  const std::optional<int64_t> expires = OptionalMillis(token.expires);
  const int64_t now_ms = ToMillis(now);
  absl::MutexLock lock(&mu_);
  absl::Status status = InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    // A name whose token is revoked or expired is free again; the audit
    // keeps what the old one did.
    FLEETBENCH_RETURN_IF_ERROR(RunCached(
        "DELETE FROM api_tokens WHERE name = ?1 AND (revoked_ms IS NOT NULL OR "
        "(expires_ms IS NOT NULL AND expires_ms <= ?2))",
        "freeing a dead token's name", token.name, now_ms));
    return RunCached(absl::StrCat("INSERT INTO api_tokens(", kTokenColumns,
                                  ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, NULL)"),
                     "storing a token", token.name, token.token_id, SqlBlob{token.secret_hash},
                     token.role, ToMillis(token.created), expires);
  });
  if (absl::IsAlreadyExists(status)) {
    return absl::AlreadyExistsError(
        absl::StrCat("a live token named '", token.name, "' exists (revoke it first)"));
  }
  return status;
}

absl::StatusOr<std::vector<ApiTokenRecord>> SqliteStore::ListApiTokens() {
  absl::MutexLock lock(&mu_);
  std::vector<ApiTokenRecord> out;
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s, Prepare(absl::StrCat("SELECT ", kTokenColumns, " FROM api_tokens ORDER BY name")));
  while (true) {
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("listing tokens"));
    if (!row) break;
    out.push_back(TokenOfRow(s));
  }
  return out;
}

absl::StatusOr<ApiTokenRecord> SqliteStore::RevokeApiToken(const std::string& name,
                                                           absl::Time when) {
  const int64_t when_ms = ToMillis(when);
  absl::MutexLock lock(&mu_);
  ApiTokenRecord revoked;
  absl::Status status = InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    {
      FLEETBENCH_ASSIGN_OR_RETURN(
          Statement s,
          Prepare(absl::StrCat("SELECT ", kTokenColumns, " FROM api_tokens WHERE name = ?1")));
      s.BindAll(name);
      FLEETBENCH_ASSIGN_OR_RETURN(bool found, s.Step("looking up a token"));
      if (!found) return absl::NotFoundError(absl::StrCat("no token named '", name, "'"));
      revoked = TokenOfRow(s);
    }
    if (revoked.revoked != absl::InfiniteFuture()) {
      return absl::FailedPreconditionError(
          absl::StrCat("token '", name, "' is already revoked"));
    }
    revoked.revoked = when;
    return RunCached("UPDATE api_tokens SET revoked_ms = ?2 WHERE name = ?1", "revoking a token",
                     name, when_ms);
  });
  if (!status.ok()) return status;
  return revoked;
}

absl::Status SqliteStore::TouchApiToken(const std::string& name, absl::Time used) {
  const int64_t used_ms = ToMillis(used);
  absl::MutexLock lock(&mu_);
  return InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(
        int changed, RowsChangedBy("UPDATE api_tokens SET last_used_ms = max(coalesce("
                                   "last_used_ms, ?2), ?2) WHERE name = ?1",
                                   "noting a token's use", name, used_ms));
    if (changed == 0) return absl::NotFoundError(absl::StrCat("no token named '", name, "'"));
    return absl::OkStatus();
  });
}

absl::StatusOr<std::optional<std::string>> SqliteStore::GetSetting(const std::string& key) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(Statement s, Prepare("SELECT value FROM settings WHERE key = ?1"));
  s.BindAll(key);
  FLEETBENCH_ASSIGN_OR_RETURN(bool found, s.Step("reading a setting"));
  if (!found) return std::optional<std::string>();
  return std::optional<std::string>(s.Text(0));
}

absl::Status SqliteStore::PutSetting(const std::string& key, const std::string& value) {
  if (key.empty()) return absl::InvalidArgumentError("a setting needs a key");
  absl::MutexLock lock(&mu_);
  return InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    return RunCached(
        "INSERT INTO settings(key, value) VALUES (?1, ?2) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        "storing a setting", key, value);
  });
}

absl::StatusOr<int64_t> SqliteStore::AppendAudit(const AuditRecord& r, int64_t keep) {
  if (keep <= 0) return absl::InvalidArgumentError("AppendAudit wants keep above 0");
  const int64_t time_ms = ToMillis(r.time);
  const int64_t code = r.code;
  absl::MutexLock lock(&mu_);
  int64_t id = 0;
  absl::Status status = InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    {
      FLEETBENCH_ASSIGN_OR_RETURN(
          Statement s,
          Prepare("INSERT INTO audit(time_ms, principal, role, rpc, target, code, message) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id"));
      s.BindAll(time_ms, r.principal, r.role, r.rpc, r.target, code, r.message);
      FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("storing an audit row"));
      if (!row) return absl::InternalError("storing an audit row returned no id");
      id = s.Int(0);
      FLEETBENCH_ASSIGN_OR_RETURN(bool more, s.Step("storing an audit row"));
      if (more) return absl::InternalError("storing an audit row returned two ids");
    }
    // Ids grow by one per row, so the bound is one indexed range delete;
    // it deletes nothing until the table passes `keep`.
    const int64_t oldest_kept = id - keep + 1;
    return RunCached("DELETE FROM audit WHERE id < ?1", "pruning the audit", oldest_kept);
  });
  if (!status.ok()) return status;
  return id;
}

absl::StatusOr<std::vector<AuditRecord>> SqliteStore::ListAudit(absl::Time since, int limit,
                                                                int64_t before_id) {
  if (limit <= 0) return absl::InvalidArgumentError("ListAudit wants a limit above 0");
  const int64_t since_ms = ToMillis(since);
  const int64_t before = before_id > 0 ? before_id : INT64_MAX;
  const int64_t n = limit;
  absl::MutexLock lock(&mu_);
  std::vector<AuditRecord> out;
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s,
      Prepare("SELECT id, time_ms, principal, role, rpc, target, code, message FROM audit "
              "WHERE time_ms >= ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3"));
  s.BindAll(since_ms, before, n);
  while (true) {
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("listing the audit"));
    if (!row) break;
    AuditRecord& r = out.emplace_back();
    r.id = s.Int(0);
    r.time = FromMillis(s.Int(1));
    r.principal = s.Text(2);
    r.role = s.Text(3);
    r.rpc = s.Text(4);
    r.target = s.Text(5);
    r.code = static_cast<int>(s.Int(6));
    r.message = s.Text(7);
  }
  return out;
}

}  // namespace fleetbench::storage
