// The PostgreSQL store's nodes: nodes, node_labels and the node_facts
// history.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/postgres_store_impl.h"
#include "storage/stored_messages.h"

namespace fleetbench::storage {

absl::Status PostgresStore::UpsertNode(const NodeRecord& node) {
  if (node.name.empty()) return absl::InvalidArgumentError("node name is empty");
  const std::string facts = SerializeDeterministic(node.facts);
  absl::MutexLock lock(&mu_);
  return InTransaction("storing a node", [&]() -> absl::Status {
    // first_seen is kept from the first upsert; the rest is replaced.
    FLEETBENCH_ASSIGN_OR_RETURN(
        PgRows upserted,
        Exec("INSERT INTO nodes(name, agent_version, first_seen_ms, last_seen_ms) "
             "VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO UPDATE SET "
             "agent_version = excluded.agent_version, last_seen_ms = excluded.last_seen_ms "
             "RETURNING id",
             {PgText(node.name), PgText(node.agent_version), PgInt(PgMillis(node.first_seen)),
              PgInt(PgMillis(node.last_seen))},
             "upserting node"));
    const int64_t id = upserted.Int(0, 0);
    FLEETBENCH_RETURN_IF_ERROR(Exec("DELETE FROM node_labels WHERE node_id = $1", {PgInt(id)},
                                    "replacing node labels")
                                   .status());
    for (const auto& [key, value] : node.labels) {
      FLEETBENCH_RETURN_IF_ERROR(
          Exec("INSERT INTO node_labels(node_id, key, value) VALUES ($1, $2, $3)",
               {PgInt(id), PgText(key), PgText(value)}, "storing node label")
              .status());
    }
    FLEETBENCH_ASSIGN_OR_RETURN(
        PgRows last,
        Exec("SELECT facts FROM node_facts WHERE node_id = $1 ORDER BY id DESC LIMIT 1",
             {PgInt(id)}, "reading node facts"));
    if (last.size() == 0 || last.Bytes(0, 0) != facts) {
      FLEETBENCH_RETURN_IF_ERROR(
          Exec("INSERT INTO node_facts(node_id, seen_ms, facts) VALUES ($1, $2, $3)",
               {PgInt(id), PgInt(PgMillis(node.last_seen)), PgBytes{facts}}, "storing node facts")
              .status());
    }
    return absl::OkStatus();
  });
}

absl::Status PostgresStore::TouchNode(const std::string& name, absl::Time seen) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows, Exec("UPDATE nodes SET last_seen_ms = $1 WHERE name = $2",
                        {PgInt(PgMillis(seen)), PgText(name)}, "touching node"));
  if (rows.affected() == 0) return absl::NotFoundError(absl::StrCat("node ", name, " not found"));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<NodeRecord>> PostgresStore::ListNodes() {
  absl::MutexLock lock(&mu_);
  std::vector<NodeRecord> nodes;
  absl::Status status = InTransaction("listing nodes", [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(
        PgRows rows,
        Exec("SELECT n.id, n.name, n.agent_version, n.first_seen_ms, n.last_seen_ms, "
             "(SELECT f.facts FROM node_facts f WHERE f.node_id = n.id "
             "ORDER BY f.id DESC LIMIT 1), coalesce(n.removed_ms >= n.last_seen_ms, FALSE) "
             "FROM nodes n ORDER BY n.name",
             {}, "listing nodes"));
    std::map<int64_t, size_t> index_of;
    for (int i = 0; i < rows.size(); ++i) {
      NodeRecord& node = nodes.emplace_back();
      index_of[rows.Int(i, 0)] = nodes.size() - 1;
      node.name = rows.Text(i, 1);
      node.agent_version = rows.Text(i, 2);
      node.first_seen = PgTime(rows.Int(i, 3));
      node.last_seen = PgTime(rows.Int(i, 4));
      node.removed = rows.Text(i, 6) == "t";
      if (!node.facts.ParseFromString(rows.Bytes(i, 5))) {
        return absl::DataLossError(absl::StrCat("cannot parse stored facts of node ", node.name));
      }
    }
    FLEETBENCH_ASSIGN_OR_RETURN(
        PgRows labels, Exec("SELECT node_id, key, value FROM node_labels", {}, "listing labels"));
    for (int i = 0; i < labels.size(); ++i) {
      auto it = index_of.find(labels.Int(i, 0));
      if (it != index_of.end()) nodes[it->second].labels.emplace(labels.Text(i, 1),
                                                                  labels.Text(i, 2));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return nodes;
}

absl::StatusOr<bool> PostgresStore::RemoveNode(const std::string& name, absl::Time when) {
  absl::MutexLock lock(&mu_);
  bool kept = false;
  absl::Status status = InTransaction("removing a node", [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(
        PgRows found,
        Exec("SELECT id, last_seen_ms FROM nodes WHERE name = $1 AND "
             "coalesce(removed_ms < last_seen_ms, TRUE) FOR UPDATE",
             {PgText(name)}, "finding the node to remove"));
    if (found.size() == 0) return absl::NotFoundError(absl::StrCat("node ", name, " not found"));
    const int64_t id = found.Int(0, 0);
    const int64_t last_seen_ms = found.Int(0, 1);
    FLEETBENCH_RETURN_IF_ERROR(Exec("DELETE FROM node_facts WHERE node_id = $1", {PgInt(id)},
                                    "deleting the facts history")
                                   .status());
    // Samples come only from a node's tasks: no task, no samples.
    FLEETBENCH_ASSIGN_OR_RETURN(
        PgRows tasks, Exec("SELECT EXISTS (SELECT 1 FROM tasks WHERE node = $1)", {PgText(name)},
                           "looking for the node's tasks"));
    kept = tasks.Text(0, 0) == "t";
    if (kept) {
      return Exec("UPDATE nodes SET removed_ms = $1 WHERE id = $2",
                  {PgInt(std::max(PgMillis(when), last_seen_ms)), PgInt(id)},
                  "marking the node removed")
          .status();
    }
    return Exec("DELETE FROM nodes WHERE id = $1", {PgInt(id)}, "deleting the node").status();
  });
  if (!status.ok()) return status;
  return kept;
}

absl::StatusOr<int> PostgresStore::CountFactsVersions(const std::string& name) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec("SELECT (SELECT count(*) FROM node_facts f WHERE f.node_id = n.id) "
           "FROM nodes n WHERE n.name = $1",
           {PgText(name)}, "counting facts versions"));
  if (rows.size() == 0) return absl::NotFoundError(absl::StrCat("node ", name, " not found"));
  return static_cast<int>(rows.Int(0, 0));
}

absl::StatusOr<std::vector<FactsVersion>> PostgresStore::ListFactsVersions(
    const std::string& name, int limit) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows node, Exec("SELECT id FROM nodes WHERE name = $1", {PgText(name)}, "finding node"));
  if (node.size() == 0) return absl::NotFoundError(absl::StrCat("node ", name, " not found"));
  // LIMIT NULL is no limit.
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec("SELECT seen_ms, facts FROM node_facts WHERE node_id = $1 ORDER BY id DESC LIMIT $2",
           {PgInt(node.Int(0, 0)), limit > 0 ? PgInt(limit) : PgParam(std::nullopt)},
           "listing facts versions"));
  std::vector<FactsVersion> versions;
  for (int i = 0; i < rows.size(); ++i) {
    FactsVersion& v = versions.emplace_back();
    v.seen = PgTime(rows.Int(i, 0));
    if (!v.facts.ParseFromString(rows.Bytes(i, 1))) {
      return absl::DataLossError(absl::StrCat("cannot parse stored facts of node ", name));
    }
  }
  return versions;
}

}  // namespace fleetbench::storage
