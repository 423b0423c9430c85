// The SQLite store's connection, transactions, name<->key caches and
// integrity check; the tables' calls are in sqlite_nodes.cc, sqlite_runs.cc,
// sqlite_ingest.cc, sqlite_samples.cc and sqlite_rank_scan.cc.
#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "storage/ranking_points.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/sqlite_verify.h"

namespace fleetbench::storage {

SqliteStore::SqliteStore(sqlite3* db, std::string path)
    : db_(db), path_(std::move(path)), statements_(db) {}

SqliteStore::~SqliteStore() {
  // Before the lock: a check that is ending may be waiting for it.
  verifier_.reset();
  absl::MutexLock lock(&mu_);
  statements_.Clear();  // SQLite closes no connection with statements left
  sqlite3_close(db_);
}

void SqliteStore::ForgetCaches() {
  node_ids_.clear();
  node_names_.clear();
  run_keys_.clear();
  run_ids_.clear();
  metric_ids_.clear();
  sample_kinds_.clear();
  recent_points_ = -1;
  recent_rows_ = -1;
}

absl::Status SqliteStore::InTransaction(TxnKind kind,
                                        absl::FunctionRef<absl::Status()> body) {
  if (kind == TxnKind::kWrite && !damaged_.ok()) return damaged_;
  const absl::string_view begin =
      kind == TxnKind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN";
  FLEETBENCH_RETURN_IF_ERROR(RunCached(begin, begin));
  absl::Status status = body();
  if (status.ok()) {
    status = RunCached("COMMIT", "COMMIT");
    if (status.ok()) return status;
  }
  RollBackIfOpen(db_);
  ForgetCaches();
  return status;
}

absl::StatusOr<std::optional<int64_t>> SqliteStore::CachedKeyLocked(
    absl::flat_hash_map<std::string, int64_t>& cache, absl::string_view sql,
    absl::string_view what, const std::string& name) {
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  FLEETBENCH_ASSIGN_OR_RETURN(Statement s, Prepare(sql));
  s.Bind(1, name);
  FLEETBENCH_ASSIGN_OR_RETURN(bool row,
                              s.Step(absl::StrCat("looking up ", what)));
  if (!row) return std::nullopt;
  const int64_t key = s.Int(0);
  cache.emplace(name, key);
  return key;
}

absl::StatusOr<const std::string*> SqliteStore::CachedNameLocked(
    absl::node_hash_map<int64_t, std::string>& cache, absl::string_view sql,
    absl::string_view what, absl::string_view kind, int64_t key) {
  if (auto it = cache.find(key); it != cache.end()) return &it->second;
  FLEETBENCH_ASSIGN_OR_RETURN(Statement s, Prepare(sql));
  s.Bind(1, key);
  FLEETBENCH_ASSIGN_OR_RETURN(bool row,
                              s.Step(absl::StrCat("looking up ", what)));
  if (!row) {
    return absl::DataLossError(
        absl::StrCat("sample names missing ", kind, " key ", key));
  }
  return &cache.emplace(key, s.Text(0)).first->second;
}

absl::StatusOr<int64_t> SqliteStore::NodeIdLocked(const std::string& name) {
  FLEETBENCH_ASSIGN_OR_RETURN(
      std::optional<int64_t> id,
      CachedKeyLocked(node_ids_, "SELECT id FROM nodes WHERE name = ?1", "node",
                      name));
  if (!id) return absl::NotFoundError(absl::StrCat("node ", name, " not found"));
  return *id;
}

absl::StatusOr<int64_t> SqliteStore::RunKeyLocked(const std::string& run_id) {
  FLEETBENCH_ASSIGN_OR_RETURN(
      std::optional<int64_t> key,
      CachedKeyLocked(run_keys_, "SELECT key FROM runs WHERE run_id = ?1",
                      "run", run_id));
  if (!key) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
  return *key;
}

absl::StatusOr<int64_t> SqliteStore::MetricIdLocked(const std::string& name,
                                                    bool create) {
  FLEETBENCH_ASSIGN_OR_RETURN(
      std::optional<int64_t> known,
      CachedKeyLocked(metric_ids_, "SELECT id FROM metrics WHERE name = ?1",
                      "metric", name));
  if (known) return *known;
  if (!create) return 0;
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s,
      Prepare("INSERT INTO metrics(name) VALUES (?1) RETURNING id"));
  s.Bind(1, name);
  FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("adding metric"));
  if (!row) return absl::InternalError("adding metric returned no id");
  const int64_t id = s.Int(0);
  metric_ids_.emplace(name, id);
  return id;
}

absl::StatusOr<const std::string*> SqliteStore::NodeNameLocked(int64_t id) {
  return CachedNameLocked(node_names_, "SELECT name FROM nodes WHERE id = ?1",
                          "node name", "node", id);
}

absl::StatusOr<const std::string*> SqliteStore::RunIdLocked(int64_t key) {
  return CachedNameLocked(run_ids_, "SELECT run_id FROM runs WHERE key = ?1",
                          "run id", "run", key);
}

absl::Status SqliteStore::CheckIntegrity() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> problems;
  absl::Status status = InTransaction(TxnKind::kRead, [&]() -> absl::Status {
    {
      FLEETBENCH_ASSIGN_OR_RETURN(Statement s,
                                  Prepare("PRAGMA integrity_check"));
      while (true) {
        FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("checking integrity"));
        if (!row) break;
        if (s.Text(0) != "ok" && problems.size() < 10) {
          problems.push_back(s.Text(0));
        }
      }
    }
    {
      FLEETBENCH_ASSIGN_OR_RETURN(Statement s,
                                  Prepare("PRAGMA foreign_key_check"));
      while (true) {
        FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("checking foreign keys"));
        if (!row) break;
        if (problems.size() < 10) {
          problems.push_back(absl::StrCat("row ", s.Int(1), " of ", s.Text(0),
                                          " references a missing ", s.Text(2)));
        }
      }
    }
    // The ranking points are derived from samples in the same transactions:
    // there must be exactly one per sample.
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement s,
        Prepare(absl::StrCat(
            "SELECT (SELECT count(*) FROM samples), "
            "(SELECT coalesce(sum(n_points), 0) FROM metric_points) + "
            "(SELECT coalesce(sum(n_points), 0) FROM recent_points), "
            "(SELECT count(*) FROM metric_points WHERE length(points) != "
            "n_points * ",
            kPointBytes,
            ") + "
            "(SELECT count(*) FROM recent_points WHERE length(points) != "
            "n_points * ",
            kPointBytes, ")")));
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("checking ranking points"));
    if (row && (s.Int(0) != s.Int(1) || s.Int(2) != 0)) {
      problems.push_back(absl::StrCat(
          s.Int(0), " samples but ", s.Int(1), " ranking points (", s.Int(2),
          " malformed chunks)"));
    }
    return absl::OkStatus();
  });
  FLEETBENCH_RETURN_IF_ERROR(status);
  if (problems.empty()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(path_, " failed its integrity check: ",
                                          absl::StrJoin(problems, "; ")));
}

void SqliteStore::VerifyInBackground(
    std::function<void(const absl::Status&, absl::Duration)> done) {
  verifier_ = std::make_unique<HistoryVerifier>(
      path_, [this, done = std::move(done)](const absl::Status& status, absl::Duration took) {
        if (status.code() == absl::StatusCode::kDataLoss) MarkDamaged(status);
        if (done) done(status, took);
      });
}

void SqliteStore::MarkDamaged(const absl::Status& damage) {
  absl::MutexLock lock(&mu_);
  damaged_ = damage;
  // Best effort: damaged_ already refuses the store's write paths.
  (void)Exec(db_, "PRAGMA query_only = ON", "refusing writes to a damaged history");
}

}  // namespace fleetbench::storage
