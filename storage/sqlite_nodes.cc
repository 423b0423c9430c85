// The SQLite store's nodes: nodes, node_labels and the node_facts history.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/stored_messages.h"
#include "storage/store.h"

namespace fleetbench::storage {

absl::Status SqliteStore::UpsertNode(const NodeRecord& node) {
  if (node.name.empty()) return absl::InvalidArgumentError("node name is empty");
  const std::string facts = SerializeDeterministic(node.facts);
  absl::MutexLock lock(&mu_);
  return InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    int64_t id = 0;
    {
      // first_seen is kept from the first upsert; the rest is replaced.
      FLEETBENCH_ASSIGN_OR_RETURN(
          Statement s,
          Prepare("INSERT INTO nodes(name, agent_version, first_seen_ms, "
                  "last_seen_ms) VALUES (?1, ?2, ?3, ?4) "
                  "ON CONFLICT(name) DO UPDATE SET "
                  "agent_version = excluded.agent_version, "
                  "last_seen_ms = excluded.last_seen_ms "
                  "RETURNING id"));
      s.BindAll(node.name, node.agent_version, ToMillis(node.first_seen),
                ToMillis(node.last_seen));
      FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("upserting node"));
      if (!row) return absl::InternalError("upserting node returned no id");
      id = s.Int(0);
    }
    FLEETBENCH_RETURN_IF_ERROR(
        RunCached("DELETE FROM node_labels WHERE node_id = ?1",
                  "replacing node labels", id));
    {
      FLEETBENCH_ASSIGN_OR_RETURN(
          Statement s, Prepare("INSERT INTO node_labels(node_id, key, value) "
                               "VALUES (?1, ?2, ?3)"));
      for (const auto& [key, value] : node.labels) {
        s.BindAll(id, key, value);
        FLEETBENCH_RETURN_IF_ERROR(s.Run("storing node label"));
        s.Reset();
      }
    }
    bool facts_changed = true;
    {
      FLEETBENCH_ASSIGN_OR_RETURN(
          Statement s,
          Prepare("SELECT facts FROM node_facts WHERE node_id = ?1 "
                  "ORDER BY id DESC LIMIT 1"));
      s.Bind(1, id);
      FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("reading node facts"));
      if (row) facts_changed = s.Blob(0) != facts;
    }
    if (facts_changed) {
      FLEETBENCH_RETURN_IF_ERROR(RunCached(
          "INSERT INTO node_facts(node_id, seen_ms, facts) VALUES (?1, ?2, ?3)",
          "storing node facts", id, ToMillis(node.last_seen), SqlBlob{facts}));
    }
    node_ids_[node.name] = id;
    return absl::OkStatus();
  });
}

absl::Status SqliteStore::TouchNode(const std::string& name, absl::Time seen) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      int changed,
      RowsChangedBy("UPDATE nodes SET last_seen_ms = ?1 WHERE name = ?2",
                    "touching node", ToMillis(seen), name));
  if (changed == 0) {
    return absl::NotFoundError(absl::StrCat("node ", name, " not found"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<NodeRecord>> SqliteStore::ListNodes() {
  absl::MutexLock lock(&mu_);
  std::vector<NodeRecord> nodes;
  absl::Status status = InTransaction(TxnKind::kRead, [&]() -> absl::Status {
    absl::flat_hash_map<int64_t, size_t> index_of;
    {
      FLEETBENCH_ASSIGN_OR_RETURN(
          Statement s,
          Prepare("SELECT n.id, n.name, n.agent_version, n.first_seen_ms, "
                  "n.last_seen_ms, (SELECT f.facts FROM node_facts f "
                  "WHERE f.node_id = n.id ORDER BY f.id DESC LIMIT 1), "
                  "coalesce(n.removed_ms >= n.last_seen_ms, 0) "
                  "FROM nodes n ORDER BY n.name"));
      while (true) {
        FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("listing nodes"));
        if (!row) break;
        NodeRecord& node = nodes.emplace_back();
        index_of[s.Int(0)] = nodes.size() - 1;
        node.name = s.Text(1);
        node.agent_version = s.Text(2);
        node.first_seen = FromMillis(s.Int(3));
        node.last_seen = FromMillis(s.Int(4));
        node.removed = s.Int(6) != 0;
        const absl::string_view facts = s.Blob(5);
        if (!node.facts.ParseFromArray(facts.data(),
                                       static_cast<int>(facts.size()))) {
          return absl::DataLossError(
              absl::StrCat("cannot parse stored facts of node ", node.name));
        }
      }
    }
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement s, Prepare("SELECT node_id, key, value FROM node_labels"));
    while (true) {
      FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("listing node labels"));
      if (!row) break;
      auto it = index_of.find(s.Int(0));
      if (it == index_of.end()) continue;
      nodes[it->second].labels.emplace(s.Text(1), s.Text(2));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return nodes;
}

absl::StatusOr<bool> SqliteStore::RemoveNode(const std::string& name,
                                             absl::Time when) {
  absl::MutexLock lock(&mu_);
  bool kept = false;
  absl::Status status = InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    int64_t id = 0;
    int64_t last_seen_ms = 0;
    {
      FLEETBENCH_ASSIGN_OR_RETURN(
          Statement s,
          Prepare("SELECT id, last_seen_ms FROM nodes WHERE name = ?1 AND "
                  "coalesce(removed_ms < last_seen_ms, 1)"));
      s.Bind(1, name);
      FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("finding the node to remove"));
      if (!row) return absl::NotFoundError(absl::StrCat("node ", name, " not found"));
      id = s.Int(0);
      last_seen_ms = s.Int(1);
    }
    FLEETBENCH_RETURN_IF_ERROR(RunCached("DELETE FROM node_facts WHERE node_id = ?1",
                                         "deleting the facts history", id));
    // Samples come only from a node's tasks: no task, no samples, so the
    // small tasks table answers for both.
    {
      FLEETBENCH_ASSIGN_OR_RETURN(
          Statement s, Prepare("SELECT EXISTS (SELECT 1 FROM tasks WHERE node = ?1)"));
      s.Bind(1, name);
      FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("looking for the node's tasks"));
      kept = row && s.Int(0) != 0;
    }
    if (kept) {
      // Removed until it is seen after this (see migration 5).
      return RunCached("UPDATE nodes SET removed_ms = ?1 WHERE id = ?2",
                       "marking the node removed",
                       std::max(ToMillis(when), last_seen_ms), id);
    }
    // Labels go with the row (ON DELETE CASCADE).
    FLEETBENCH_RETURN_IF_ERROR(
        RunCached("DELETE FROM nodes WHERE id = ?1", "deleting the node", id));
    node_ids_.erase(name);
    node_names_.erase(id);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return kept;
}

absl::StatusOr<int> SqliteStore::CountFactsVersions(const std::string& name) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s,
      Prepare(
          "SELECT (SELECT count(*) FROM node_facts f WHERE f.node_id = n.id) "
          "FROM nodes n WHERE n.name = ?1"));
  s.Bind(1, name);
  FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("counting facts versions"));
  if (!row) return absl::NotFoundError(absl::StrCat("node ", name, " not found"));
  return static_cast<int>(s.Int(0));
}

absl::StatusOr<std::vector<FactsVersion>> SqliteStore::ListFactsVersions(
    const std::string& name, int limit) {
  absl::MutexLock lock(&mu_);
  std::vector<FactsVersion> versions;
  absl::Status status = InTransaction(TxnKind::kRead, [&]() -> absl::Status {
    int64_t id = 0;
    {
      FLEETBENCH_ASSIGN_OR_RETURN(Statement s, Prepare("SELECT id FROM nodes WHERE name = ?1"));
      s.Bind(1, name);
      FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("finding node"));
      if (!row) return absl::NotFoundError(absl::StrCat("node ", name, " not found"));
      id = s.Int(0);
    }
    // LIMIT -1 is SQLite's "no limit".
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement s, Prepare("SELECT seen_ms, facts FROM node_facts WHERE node_id = ?1 "
                             "ORDER BY id DESC LIMIT ?2"));
    s.BindAll(id, static_cast<int64_t>(limit > 0 ? limit : -1));
    while (true) {
      FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("listing facts versions"));
      if (!row) break;
      FactsVersion& v = versions.emplace_back();
      v.seen = FromMillis(s.Int(0));
      const absl::string_view facts = s.Blob(1);
      if (!v.facts.ParseFromArray(facts.data(), static_cast<int>(facts.size()))) {
        return absl::DataLossError(absl::StrCat("cannot parse stored facts of node ", name));
      }
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return versions;
}

}  // namespace fleetbench::storage
