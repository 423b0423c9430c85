// The SQLite store's node identities: one row per node name with
// the certificate the controller's CA issued to it (docs/security.md).
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/store.h"

namespace fleetbench::storage {

absl::Status SqliteStore::EnrollNodeIdentity(const NodeIdentityRecord& r) {
  if (r.node.empty() || r.fingerprint.empty()) {
    return absl::InvalidArgumentError("a node identity needs a node and a fingerprint");
  }
  absl::MutexLock lock(&mu_);
  return InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    // One statement decides: a new name, or a revoked one, takes the row; a
    // live identity keeps it (changes() == 0).
    FLEETBENCH_ASSIGN_OR_RETURN(
        int changed,
        RowsChangedBy(
            "INSERT INTO node_identities(node, serial, fingerprint, not_after_ms, enrolled_ms, "
            "enrolled_by, revoked_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL) "
            "ON CONFLICT(node) DO UPDATE SET serial = excluded.serial, "
            "fingerprint = excluded.fingerprint, not_after_ms = excluded.not_after_ms, "
            "enrolled_ms = excluded.enrolled_ms, enrolled_by = excluded.enrolled_by, "
            "revoked_ms = NULL WHERE node_identities.revoked_ms IS NOT NULL",
            "storing a node identity", r.node, r.serial, r.fingerprint, ToMillis(r.not_after),
            ToMillis(r.enrolled), r.enrolled_by));
    if (changed == 0) {
      return absl::AlreadyExistsError(absl::StrCat(
          "node ", r.node, " is already enrolled; revoke it first (fleetbench nodes revoke ",
          r.node, ")"));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::optional<NodeIdentityRecord>> SqliteStore::GetNodeIdentity(
    const std::string& node) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s, Prepare("SELECT serial, fingerprint, not_after_ms, enrolled_ms, enrolled_by, "
                           "revoked_ms FROM node_identities WHERE node = ?1"));
  s.BindAll(node);
  absl::StatusOr<bool> row = s.Step("reading a node identity");
  std::optional<NodeIdentityRecord> out;
  if (row.ok() && *row) {
    NodeIdentityRecord& r = out.emplace();
    r.node = node;
    r.serial = s.Text(0);
    r.fingerprint = s.Text(1);
    r.not_after = FromMillis(s.Int(2));
    r.enrolled = FromMillis(s.Int(3));
    r.enrolled_by = s.Text(4);
    if (!s.IsNull(5)) r.revoked = FromMillis(s.Int(5));
  }
  s.Reset();
  if (!row.ok()) return row.status();
  return out;
}

absl::StatusOr<bool> SqliteStore::RevokeNodeIdentity(const std::string& node, absl::Time when) {
  absl::MutexLock lock(&mu_);
  bool revoked = false;
  absl::Status status = InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(
        int changed, RowsChangedBy("UPDATE node_identities SET revoked_ms = ?2 "
                                   "WHERE node = ?1 AND revoked_ms IS NULL",
                                   "revoking a node identity", node, ToMillis(when)));
    revoked = changed > 0;
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return revoked;
}

absl::Status SqliteStore::RenewNodeIdentity(const NodeIdentityRecord& r,
                                            const std::string& current_fingerprint) {
  if (r.node.empty() || r.fingerprint.empty()) {
    return absl::InvalidArgumentError("a renewed identity needs a node and a fingerprint");
  }
  absl::MutexLock lock(&mu_);
  return InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    // Compare and swap on the fingerprint: a revoke or another renewal
    // that won the race leaves this one nothing to change.
    FLEETBENCH_ASSIGN_OR_RETURN(
        int changed,
        RowsChangedBy("UPDATE node_identities SET serial = ?2, fingerprint = ?3, "
                      "not_after_ms = ?4 WHERE node = ?1 AND fingerprint = ?5 "
                      "AND revoked_ms IS NULL",
                      "renewing a node identity", r.node, r.serial, r.fingerprint,
                      ToMillis(r.not_after), current_fingerprint));
    if (changed == 0) {
      return absl::AbortedError(absl::StrCat("node ", r.node,
                                             " was revoked, re-enrolled or renewed meanwhile"));
    }
    return absl::OkStatus();
  });
}

}  // namespace fleetbench::storage
