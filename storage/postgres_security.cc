// The PostgreSQL store's security and reliability tables: API tokens (as
// SHA-256 hashes), settings, the audit, node identities, and each node's
// time online and interruptions.
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/postgres_store_impl.h"
#include "storage/record_checks.h"

namespace fleetbench::storage {
namespace {

constexpr char kTokenColumns[] =
    "name, token_id, secret_hash, role, created_ms, expires_ms, revoked_ms, last_used_ms";

absl::Time TimeOr(const PgRows& rows, int i, int column, absl::Time null_means) {
  return rows.IsNull(i, column) ? null_means : PgTime(rows.Int(i, column));
}

ApiTokenRecord TokenOfRow(const PgRows& rows, int i) {
  ApiTokenRecord t;
  t.name = rows.Text(i, 0);
  t.token_id = rows.Text(i, 1);
  t.secret_hash = rows.Bytes(i, 2);
  t.role = rows.Text(i, 3);
  t.created = PgTime(rows.Int(i, 4));
  t.expires = TimeOr(rows, i, 5, absl::InfiniteFuture());
  t.revoked = TimeOr(rows, i, 6, absl::InfiniteFuture());
  t.last_used = TimeOr(rows, i, 7, absl::InfinitePast());
  return t;
}

}  // namespace

absl::Status PostgresStore::CreateApiToken(const ApiTokenRecord& token, absl::Time now) {
  FLEETBENCH_RETURN_IF_ERROR(CheckApiToken(token));
  absl::MutexLock lock(&mu_);
  absl::Status status = InTransaction("storing a token", [&]() -> absl::Status {
    // A name whose token is revoked or expired is free again; the audit
    // keeps what the old one did.
    FLEETBENCH_RETURN_IF_ERROR(
        Exec("DELETE FROM api_tokens WHERE name = $1 AND (revoked_ms IS NOT NULL OR "
             "(expires_ms IS NOT NULL AND expires_ms <= $2))",
             {PgText(token.name), PgInt(PgMillis(now))}, "freeing a dead token's name")
            .status());
    return Exec(absl::StrCat("INSERT INTO api_tokens(", kTokenColumns,
                             ") VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL)"),
                {PgText(token.name), PgText(token.token_id), PgBytes{token.secret_hash},
                 PgText(token.role), PgInt(PgMillis(token.created)),
                 PgOptionalMillis(token.expires)},
                "storing a token")
        .status();
  });
  if (absl::IsAlreadyExists(status)) {
    return absl::AlreadyExistsError(
        absl::StrCat("a live token named '", token.name, "' exists (revoke it first)"));
  }
  return status;
}

absl::StatusOr<std::vector<ApiTokenRecord>> PostgresStore::ListApiTokens() {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows, Exec(absl::StrCat("SELECT ", kTokenColumns, " FROM api_tokens ORDER BY name"),
                        {}, "listing tokens"));
  std::vector<ApiTokenRecord> out;
  for (int i = 0; i < rows.size(); ++i) out.push_back(TokenOfRow(rows, i));
  return out;
}

absl::StatusOr<ApiTokenRecord> PostgresStore::RevokeApiToken(const std::string& name,
                                                             absl::Time when) {
  absl::MutexLock lock(&mu_);
  ApiTokenRecord revoked;
  absl::Status status = InTransaction("revoking a token", [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(
        PgRows rows,
        Exec(absl::StrCat("SELECT ", kTokenColumns, " FROM api_tokens WHERE name = $1 FOR UPDATE"),
             {PgText(name)}, "looking up a token"));
    if (rows.size() == 0) return absl::NotFoundError(absl::StrCat("no token named '", name, "'"));
    revoked = TokenOfRow(rows, 0);
    if (revoked.revoked != absl::InfiniteFuture()) {
      return absl::FailedPreconditionError(absl::StrCat("token '", name, "' is already revoked"));
    }
    revoked.revoked = when;
    return Exec("UPDATE api_tokens SET revoked_ms = $2 WHERE name = $1",
                {PgText(name), PgInt(PgMillis(when))}, "revoking a token")
        .status();
  });
  if (!status.ok()) return status;
  return revoked;
}

absl::Status PostgresStore::TouchApiToken(const std::string& name, absl::Time used) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec("UPDATE api_tokens SET last_used_ms = greatest(coalesce(last_used_ms, $2), $2) "
           "WHERE name = $1",
           {PgText(name), PgInt(PgMillis(used))}, "noting a token's use"));
  if (rows.affected() == 0) return absl::NotFoundError(absl::StrCat("no token named '", name, "'"));
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> PostgresStore::GetSetting(const std::string& key) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(PgRows rows, Exec("SELECT value FROM settings WHERE key = $1",
                                                {PgText(key)}, "reading a setting"));
  if (rows.size() == 0) return std::optional<std::string>();
  return std::optional<std::string>(rows.Text(0, 0));
}

absl::Status PostgresStore::PutSetting(const std::string& key, const std::string& value) {
  if (key.empty()) return absl::InvalidArgumentError("a setting needs a key");
  absl::MutexLock lock(&mu_);
  return Exec("INSERT INTO settings(key, value) VALUES ($1, $2) "
              "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
              {PgText(key), PgText(value)}, "storing a setting")
      .status();
}

absl::StatusOr<int64_t> PostgresStore::AppendAudit(const AuditRecord& r, int64_t keep) {
  if (keep <= 0) return absl::InvalidArgumentError("AppendAudit wants keep above 0");
  absl::MutexLock lock(&mu_);
  int64_t id = 0;
  absl::Status status = InTransaction("storing an audit row", [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(
        PgRows added,
        Exec("INSERT INTO audit(time_ms, principal, role, rpc, target, code, message) "
             "VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
             {PgInt(PgMillis(r.time)), PgText(r.principal), PgText(r.role), PgText(r.rpc),
              PgText(r.target), PgInt(r.code), PgText(r.message)},
             "storing an audit row"));
    id = added.Int(0, 0);
    // A sequence may skip ids (a rolled back insert takes one), so the
    // bound is the `keep`-th newest id, not id - keep.
    return Exec("DELETE FROM audit WHERE id < (SELECT min(id) FROM "
                "(SELECT id FROM audit ORDER BY id DESC LIMIT $1) AS newest)",
                {PgInt(keep)}, "pruning the audit")
        .status();
  });
  if (!status.ok()) return status;
  return id;
}

absl::StatusOr<std::vector<AuditRecord>> PostgresStore::ListAudit(absl::Time since, int limit,
                                                                  int64_t before_id) {
  if (limit <= 0) return absl::InvalidArgumentError("ListAudit wants a limit above 0");
  const int64_t since_ms = PgMillis(since);
  const int64_t before = before_id > 0 ? before_id : std::numeric_limits<int64_t>::max();
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec("SELECT id, time_ms, principal, role, rpc, target, code, message FROM audit "
           "WHERE time_ms >= $1 AND id < $2 ORDER BY id DESC LIMIT $3",
           {PgInt(since_ms), PgInt(before), PgInt(limit)}, "listing the audit"));
  std::vector<AuditRecord> out;
  for (int i = 0; i < rows.size(); ++i) {
    AuditRecord& a = out.emplace_back();
    a.id = rows.Int(i, 0);
    a.time = PgTime(rows.Int(i, 1));
    a.principal = rows.Text(i, 2);
    a.role = rows.Text(i, 3);
    a.rpc = rows.Text(i, 4);
    a.target = rows.Text(i, 5);
    a.code = static_cast<int>(rows.Int(i, 6));
    a.message = rows.Text(i, 7);
  }
  return out;
}

absl::Status PostgresStore::EnrollNodeIdentity(const NodeIdentityRecord& r) {
  if (r.node.empty() || r.fingerprint.empty()) {
    return absl::InvalidArgumentError("a node identity needs a node and a fingerprint");
  }
  absl::MutexLock lock(&mu_);
  // One statement decides: a new name, or a revoked one, takes the row; a
  // live identity keeps it (no row changed).
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec("INSERT INTO node_identities(node, serial, fingerprint, not_after_ms, enrolled_ms, "
           "enrolled_by, revoked_ms) VALUES ($1, $2, $3, $4, $5, $6, NULL) "
           "ON CONFLICT (node) DO UPDATE SET serial = excluded.serial, "
           "fingerprint = excluded.fingerprint, not_after_ms = excluded.not_after_ms, "
           "enrolled_ms = excluded.enrolled_ms, enrolled_by = excluded.enrolled_by, "
           "revoked_ms = NULL WHERE node_identities.revoked_ms IS NOT NULL",
           {PgText(r.node), PgText(r.serial), PgText(r.fingerprint), PgInt(PgMillis(r.not_after)),
            PgInt(PgMillis(r.enrolled)), PgText(r.enrolled_by)},
           "storing a node identity"));
  if (rows.affected() == 0) {
    return absl::AlreadyExistsError(absl::StrCat(
        "node ", r.node, " is already enrolled; revoke it first (fleetbench nodes revoke ", r.node,
        ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<NodeIdentityRecord>> PostgresStore::GetNodeIdentity(
    const std::string& node) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows, Exec("SELECT serial, fingerprint, not_after_ms, enrolled_ms, enrolled_by, "
                        "revoked_ms FROM node_identities WHERE node = $1",
                        {PgText(node)}, "reading a node identity"));
  std::optional<NodeIdentityRecord> out;
  if (rows.size() == 0) return out;
  NodeIdentityRecord& r = out.emplace();
  r.node = node;
  r.serial = rows.Text(0, 0);
  r.fingerprint = rows.Text(0, 1);
  r.not_after = PgTime(rows.Int(0, 2));
  r.enrolled = PgTime(rows.Int(0, 3));
  r.enrolled_by = rows.Text(0, 4);
  if (!rows.IsNull(0, 5)) r.revoked = PgTime(rows.Int(0, 5));
  return out;
}

absl::StatusOr<bool> PostgresStore::RevokeNodeIdentity(const std::string& node, absl::Time when) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows, Exec("UPDATE node_identities SET revoked_ms = $2 "
                        "WHERE node = $1 AND revoked_ms IS NULL",
                        {PgText(node), PgInt(PgMillis(when))}, "revoking a node identity"));
  return rows.affected() > 0;
}

absl::Status PostgresStore::RenewNodeIdentity(const NodeIdentityRecord& r,
                                              const std::string& current_fingerprint) {
  if (r.node.empty() || r.fingerprint.empty()) {
    return absl::InvalidArgumentError("a renewed identity needs a node and a fingerprint");
  }
  absl::MutexLock lock(&mu_);
  // Compare and swap on the fingerprint: a revoke or another renewal that
  // won the race leaves this one nothing to change.
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec("UPDATE node_identities SET serial = $2, fingerprint = $3, not_after_ms = $4 "
           "WHERE node = $1 AND fingerprint = $5 AND revoked_ms IS NULL",
           {PgText(r.node), PgText(r.serial), PgText(r.fingerprint), PgInt(PgMillis(r.not_after)),
            PgText(current_fingerprint)},
           "renewing a node identity"));
  if (rows.affected() == 0) {
    return absl::AbortedError(
        absl::StrCat("node ", r.node, " was revoked, re-enrolled or renewed meanwhile"));
  }
  return absl::OkStatus();
}

absl::Status PostgresStore::RecordReliability(const std::vector<NodeUptime>& uptime,
                                              const std::vector<InterruptionRecord>& interruptions) {
  FLEETBENCH_RETURN_IF_ERROR(CheckReliability(uptime, interruptions));
  absl::MutexLock lock(&mu_);
  return InTransaction("storing reliability", [&]() -> absl::Status {
    for (const NodeUptime& u : uptime) {
      FLEETBENCH_RETURN_IF_ERROR(
          Exec("INSERT INTO node_uptime(node, day, online_ms) VALUES ($1, $2, $3) "
               "ON CONFLICT (node, day) DO UPDATE SET "
               "online_ms = node_uptime.online_ms + excluded.online_ms",
               {PgText(u.node), PgInt(u.day), PgInt(u.online_ms)}, "storing time online")
              .status());
    }
    for (const InterruptionRecord& i : interruptions) {
      FLEETBENCH_RETURN_IF_ERROR(Exec("INSERT INTO interruptions(node, time_ms, kind, detail) "
                                      "VALUES ($1, $2, $3, $4)",
                                      {PgText(i.node), PgInt(PgMillis(i.time)), PgText(i.kind),
                                       PgText(i.detail)},
                                      "storing an interruption")
                                     .status());
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::map<std::string, int64_t>> PostgresStore::UptimeSince(int64_t first_day) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows, Exec("SELECT node, sum(online_ms) FROM node_uptime WHERE day >= $1 "
                        "GROUP BY node",
                        {PgInt(first_day)}, "reading time online"));
  std::map<std::string, int64_t> out;
  for (int i = 0; i < rows.size(); ++i) out[rows.Text(i, 0)] = rows.Int(i, 1);
  return out;
}

absl::StatusOr<std::map<std::string, std::map<std::string, int64_t>>>
PostgresStore::InterruptionCountsSince(absl::Time since) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows, Exec("SELECT node, kind, count(*) FROM interruptions WHERE time_ms >= $1 "
                        "GROUP BY node, kind",
                        {PgInt(PgMillis(since))}, "counting interruptions"));
  std::map<std::string, std::map<std::string, int64_t>> out;
  for (int i = 0; i < rows.size(); ++i) out[rows.Text(i, 0)][rows.Text(i, 1)] = rows.Int(i, 2);
  return out;
}

absl::StatusOr<std::vector<InterruptionRecord>> PostgresStore::InterruptionsSince(
    absl::Time since, int limit) {
  if (limit <= 0) return absl::InvalidArgumentError("a limit must be > 0");
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows, Exec("SELECT node, time_ms, kind, detail FROM interruptions "
                        "WHERE time_ms >= $1 ORDER BY time_ms DESC, id DESC LIMIT $2",
                        {PgInt(PgMillis(since)), PgInt(limit)}, "listing interruptions"));
  std::vector<InterruptionRecord> out;
  for (int i = 0; i < rows.size(); ++i) {
    InterruptionRecord& r = out.emplace_back();
    r.node = rows.Text(i, 0);
    r.time = PgTime(rows.Int(i, 1));
    r.kind = rows.Text(i, 2);
    r.detail = rows.Text(i, 3);
  }
  return out;
}

}  // namespace fleetbench::storage
