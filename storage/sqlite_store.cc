// The SQLite history store.
#include <sqlite3.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/delimited_message_util.h"
#include "storage/migrations.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/status_macros.h"
#include "storage/store.h"

namespace fleetbench::storage {
namespace {

// Page size and caches, chosen by measurement (docs/storage.md): 8 KiB pages
// beat 4 and 16 KiB on commit CPU and on reading the ranking chunks, and mmap
// lets reads use the OS page cache without a copy per page.
constexpr int kPageSize = 8192;
constexpr int64_t kCacheKib = 64 * 1024;
constexpr int64_t kMmapBytes = int64_t{1} << 30;
// A checkpoint (copying the WAL into the database, two fsyncs) runs in the
// commit that grows the WAL past this many pages: 32 MiB between checkpoints
// instead of SQLite's default 8 MiB makes the fsync stalls a quarter as
// frequent; the ingest rate rose about 15% in the measurement.
constexpr int kWalCheckpointPages = 4096;

int64_t ToMillis(absl::Time t) { return absl::ToUnixMillis(t); }
absl::Time FromMillis(int64_t ms) { return absl::FromUnixMillis(ms); }

// Repeated messages are stored as a sequence of varint-length-delimited
// messages (protobuf's delimited format), so no wrapper proto is needed.
template <typename Message>
std::string SerializeDelimited(const std::vector<Message>& messages) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    for (const Message& m : messages) {
      google::protobuf::util::SerializeDelimitedToCodedStream(m, &coded);
    }
  }
  return out;
}

template <typename Message>
absl::StatusOr<std::vector<Message>> ParseDelimited(absl::string_view bytes,
                                                    absl::string_view what) {
  std::vector<Message> out;
  google::protobuf::io::ArrayInputStream raw(bytes.data(),
                                             static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  while (true) {
    Message m;
    bool clean_eof = false;
    if (!google::protobuf::util::ParseDelimitedFromCodedStream(&m, &coded,
                                                               &clean_eof)) {
      if (clean_eof) break;
      return absl::DataLossError(absl::StrCat("cannot parse stored ", what));
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::string SerializeDeterministic(const google::protobuf::MessageLite& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
  }
  return out;
}

// A sample's params are stored as the serialization of a Sample holding only
// `params`; parsing that blob into the output Sample restores them. Written
// by hand (map entry = {1: key, 2: value}) in sorted key order so equal maps
// give equal bytes without copying the map into a carrier message.
void SerializeParams(const google::protobuf::Map<std::string, std::string>& params,
                     std::string& out) {
  out.clear();
  if (params.empty()) return;
  std::vector<const google::protobuf::Map<std::string, std::string>::value_type*>
      entries;
  entries.reserve(params.size());
  for (const auto& entry : params) entries.push_back(&entry);
  std::sort(entries.begin(), entries.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  google::protobuf::io::StringOutputStream raw(&out);
  google::protobuf::io::CodedOutputStream coded(&raw);
  constexpr uint32_t kLengthDelimited = 2;
  for (const auto* entry : entries) {
    const size_t entry_size =
        1 + google::protobuf::io::CodedOutputStream::VarintSize32(
                static_cast<uint32_t>(entry->first.size())) +
        entry->first.size() + 1 +
        google::protobuf::io::CodedOutputStream::VarintSize32(
            static_cast<uint32_t>(entry->second.size())) +
        entry->second.size();
    coded.WriteTag((v1::Sample::kParamsFieldNumber << 3) | kLengthDelimited);
    coded.WriteVarint32(static_cast<uint32_t>(entry_size));
    coded.WriteTag((1 << 3) | kLengthDelimited);
    coded.WriteVarint32(static_cast<uint32_t>(entry->first.size()));
    coded.WriteRaw(entry->first.data(), static_cast<int>(entry->first.size()));
    coded.WriteTag((2 << 3) | kLengthDelimited);
    coded.WriteVarint32(static_cast<uint32_t>(entry->second.size()));
    coded.WriteRaw(entry->second.data(), static_cast<int>(entry->second.size()));
  }
}

absl::Status NewerSchemaError(const std::string& path, int64_t version,
                              int latest) {
  return absl::FailedPreconditionError(absl::StrCat(
      "database ", path, " has schema version ", version,
      ", newer than the latest this build knows (", latest,
      "); use a newer fleetbench build or another database file"));
}

// The single integer a pragma such as user_version answers.
absl::StatusOr<int64_t> QueryInt(sqlite3* db, const char* sql,
                                 absl::string_view what) {
  FB_ASSIGN_OR_RETURN(Statement s, Statement::PrepareOnce(db, sql, what));
  FB_ASSIGN_OR_RETURN(bool row, s.Step(what));
  return row ? s.Int(0) : 0;
}

absl::StatusOr<std::string> QueryText(sqlite3* db, const char* sql,
                                      absl::string_view what) {
  FB_ASSIGN_OR_RETURN(Statement s, Statement::PrepareOnce(db, sql, what));
  FB_ASSIGN_OR_RETURN(bool row, s.Step(what));
  return row ? s.Text(0) : std::string();
}

absl::Status CheckMigrationList(const std::vector<SchemaMigration>& migrations) {
  if (migrations.empty()) {
    return absl::InvalidArgumentError("no schema migrations");
  }
  int previous = 0;
  for (const SchemaMigration& m : migrations) {
    if (m.version <= previous) {
      return absl::InvalidArgumentError(absl::StrCat(
          "schema migrations out of order at version ", m.version));
    }
    previous = m.version;
  }
  return absl::OkStatus();
}

// Applies every step newer than the file's user_version, each in its own
// transaction together with the user_version bump, so a crash mid-way leaves
// the file at the last completed version.
absl::Status Migrate(sqlite3* db, const std::string& path,
                     const std::vector<SchemaMigration>& migrations) {
  const int latest = migrations.back().version;
  FB_ASSIGN_OR_RETURN(int64_t initial,
                      QueryInt(db, "PRAGMA user_version",
                               absl::StrCat("reading ", path)));
  for (const SchemaMigration& m : migrations) {
    if (m.version <= initial) continue;
    const std::string what =
        absl::StrCat("migrating ", path, " to schema version ", m.version, " (",
                     m.description, ")");
    FB_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE", what));
    absl::Status status = [&]() -> absl::Status {
      // Read under the write lock: another process may have migrated.
      FB_ASSIGN_OR_RETURN(int64_t current,
                          QueryInt(db, "PRAGMA user_version", what));
      if (current > latest) return NewerSchemaError(path, current, latest);
      if (current >= m.version) return absl::OkStatus();
      FB_RETURN_IF_ERROR(Exec(db, m.sql, what));
      FB_RETURN_IF_ERROR(
          Exec(db, absl::StrCat("PRAGMA user_version = ", m.version), what));
      return Exec(db, "COMMIT", what);
    }();
    RollBackIfOpen(db);
    FB_RETURN_IF_ERROR(status);
  }
  return absl::OkStatus();
}

absl::Status Configure(sqlite3* db, const SqliteOptions& options, int latest) {
  const std::string& path = options.path;
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(
      db, static_cast<int>(absl::ToInt64Milliseconds(options.busy_timeout)));
  // Reading the header first: a file that is not a database fails here with
  // DATA_LOSS, and a newer schema is refused before anything is written.
  FB_ASSIGN_OR_RETURN(int64_t version,
                      QueryInt(db, "PRAGMA user_version",
                               absl::StrCat("reading ", path)));
  if (version > latest) return NewerSchemaError(path, version, latest);
  FB_ASSIGN_OR_RETURN(int64_t pages,
                      QueryInt(db, "PRAGMA page_count",
                               absl::StrCat("reading ", path)));
  if (pages == 0) {
    // Only a new, empty file can take a page size (not later in WAL mode).
    FB_RETURN_IF_ERROR(Exec(db, absl::StrCat("PRAGMA page_size = ", kPageSize),
                            "setting page size"));
  }
  FB_ASSIGN_OR_RETURN(std::string mode,
                      QueryText(db, "PRAGMA journal_mode = WAL",
                                absl::StrCat("enabling WAL on ", path)));
  if (mode != "wal") {
    return absl::FailedPreconditionError(absl::StrCat(
        "database ", path, " cannot use WAL journaling (got \"", mode,
        "\"); use a file on a local filesystem"));
  }
  FB_RETURN_IF_ERROR(Exec(db,
                          options.synchronous_full ? "PRAGMA synchronous = FULL"
                                                   : "PRAGMA synchronous = NORMAL",
                          "setting synchronous"));
  FB_RETURN_IF_ERROR(
      Exec(db, "PRAGMA foreign_keys = ON", "enabling foreign keys"));
  FB_RETURN_IF_ERROR(Exec(db, absl::StrCat("PRAGMA cache_size = -", kCacheKib),
                          "setting cache size"));
  FB_RETURN_IF_ERROR(Exec(db, absl::StrCat("PRAGMA mmap_size = ", kMmapBytes),
                          "setting mmap size"));
  FB_RETURN_IF_ERROR(
      Exec(db, "PRAGMA temp_store = MEMORY", "setting temp store"));
  FB_RETURN_IF_ERROR(Exec(
      db, absl::StrCat("PRAGMA wal_autocheckpoint = ", kWalCheckpointPages),
      "setting the WAL checkpoint interval"));
  return absl::OkStatus();
}

// The mode and pragmas of a connection, then migrations, then the test cap.
absl::StatusOr<std::unique_ptr<Store>> Open(
    const SqliteOptions& options,
    const std::vector<SchemaMigration>& migrations) {
  if (options.path.empty()) {
    return absl::InvalidArgumentError("SQLite store needs a file path");
  }
  FB_RETURN_IF_ERROR(CheckMigrationList(migrations));
  sqlite3* db = nullptr;
  // NOMUTEX: the store's own mutex serialises every use of the connection.
  const int rc = sqlite3_open_v2(
      options.path.c_str(), &db,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
      nullptr);
  if (rc != SQLITE_OK) {
    absl::Status status =
        SqliteStatus(db, rc, absl::StrCat("opening ", options.path));
    sqlite3_close(db);
    return status;
  }
  absl::Status status = Configure(db, options, migrations.back().version);
  if (status.ok()) status = Migrate(db, options.path, migrations);
  if (status.ok() && options.max_page_count > 0) {
    status = Exec(db,
                  absl::StrCat("PRAGMA max_page_count = ", options.max_page_count),
                  "setting max_page_count");
  }
  if (!status.ok()) {
    sqlite3_close(db);
    return status;
  }
  return std::make_unique<SqliteStore>(db, options.path);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStore(
    const SqliteOptions& options) {
  return Open(options, SchemaMigrations());
}

absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStoreWithMigrations(
    const SqliteOptions& options,
    const std::vector<SchemaMigration>& migrations) {
  return Open(options, migrations);
}

SqliteStore::SqliteStore(sqlite3* db, std::string path)
    : db_(db), path_(std::move(path)), statements_(db) {}

SqliteStore::~SqliteStore() {
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
  recent_points_ = -1;
  recent_rows_ = -1;
}

absl::Status SqliteStore::InTransaction(TxnKind kind,
                                        absl::FunctionRef<absl::Status()> body) {
  const absl::string_view begin =
      kind == TxnKind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN";
  FB_RETURN_IF_ERROR(RunCached(begin, begin));
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
  FB_ASSIGN_OR_RETURN(Statement s, Prepare(sql));
  s.Bind(1, name);
  FB_ASSIGN_OR_RETURN(bool row, s.Step(absl::StrCat("looking up ", what)));
  if (!row) return std::nullopt;
  const int64_t key = s.Int(0);
  cache.emplace(name, key);
  return key;
}

absl::StatusOr<const std::string*> SqliteStore::CachedNameLocked(
    absl::node_hash_map<int64_t, std::string>& cache, absl::string_view sql,
    absl::string_view what, absl::string_view kind, int64_t key) {
  if (auto it = cache.find(key); it != cache.end()) return &it->second;
  FB_ASSIGN_OR_RETURN(Statement s, Prepare(sql));
  s.Bind(1, key);
  FB_ASSIGN_OR_RETURN(bool row, s.Step(absl::StrCat("looking up ", what)));
  if (!row) {
    return absl::DataLossError(
        absl::StrCat("sample names missing ", kind, " key ", key));
  }
  return &cache.emplace(key, s.Text(0)).first->second;
}

absl::StatusOr<int64_t> SqliteStore::NodeIdLocked(const std::string& name) {
  FB_ASSIGN_OR_RETURN(
      std::optional<int64_t> id,
      CachedKeyLocked(node_ids_, "SELECT id FROM nodes WHERE name = ?1",
                      "node", name));
  if (!id) return absl::NotFoundError(absl::StrCat("node ", name, " not found"));
  return *id;
}

absl::StatusOr<int64_t> SqliteStore::RunKeyLocked(const std::string& run_id) {
  FB_ASSIGN_OR_RETURN(
      std::optional<int64_t> key,
      CachedKeyLocked(run_keys_, "SELECT key FROM runs WHERE run_id = ?1",
                      "run", run_id));
  if (!key) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
  return *key;
}

absl::StatusOr<int64_t> SqliteStore::MetricIdLocked(const std::string& name,
                                                    bool create) {
  FB_ASSIGN_OR_RETURN(
      std::optional<int64_t> known,
      CachedKeyLocked(metric_ids_, "SELECT id FROM metrics WHERE name = ?1",
                      "metric", name));
  if (known) return *known;
  if (!create) return 0;
  FB_ASSIGN_OR_RETURN(
      Statement s, Prepare("INSERT INTO metrics(name) VALUES (?1) RETURNING id"));
  s.Bind(1, name);
  FB_ASSIGN_OR_RETURN(bool row, s.Step("adding metric"));
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

// ---- nodes ----

absl::Status SqliteStore::UpsertNode(const NodeRecord& node) {
  if (node.name.empty()) return absl::InvalidArgumentError("node name is empty");
  const std::string facts = SerializeDeterministic(node.facts);
  absl::MutexLock lock(&mu_);
  return InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    int64_t id = 0;
    {
      // first_seen is kept from the first upsert; the rest is replaced.
      FB_ASSIGN_OR_RETURN(
          Statement s,
          Prepare("INSERT INTO nodes(name, agent_version, first_seen_ms, "
                  "last_seen_ms) VALUES (?1, ?2, ?3, ?4) "
                  "ON CONFLICT(name) DO UPDATE SET "
                  "agent_version = excluded.agent_version, "
                  "last_seen_ms = excluded.last_seen_ms "
                  "RETURNING id"));
      s.BindAll(node.name, node.agent_version, ToMillis(node.first_seen),
                ToMillis(node.last_seen));
      FB_ASSIGN_OR_RETURN(bool row, s.Step("upserting node"));
      if (!row) return absl::InternalError("upserting node returned no id");
      id = s.Int(0);
    }
    FB_RETURN_IF_ERROR(RunCached("DELETE FROM node_labels WHERE node_id = ?1",
                                 "replacing node labels", id));
    {
      FB_ASSIGN_OR_RETURN(Statement s,
                          Prepare("INSERT INTO node_labels(node_id, key, value) "
                                  "VALUES (?1, ?2, ?3)"));
      for (const auto& [key, value] : node.labels) {
        s.BindAll(id, key, value);
        FB_RETURN_IF_ERROR(s.Run("storing node label"));
        s.Reset();
      }
    }
    bool facts_changed = true;
    {
      FB_ASSIGN_OR_RETURN(
          Statement s, Prepare("SELECT facts FROM node_facts WHERE node_id = ?1 "
                               "ORDER BY id DESC LIMIT 1"));
      s.Bind(1, id);
      FB_ASSIGN_OR_RETURN(bool row, s.Step("reading node facts"));
      if (row) facts_changed = s.Blob(0) != facts;
    }
    if (facts_changed) {
      FB_RETURN_IF_ERROR(RunCached(
          "INSERT INTO node_facts(node_id, seen_ms, facts) VALUES (?1, ?2, ?3)",
          "storing node facts", id, ToMillis(node.last_seen), SqlBlob{facts}));
    }
    node_ids_[node.name] = id;
    return absl::OkStatus();
  });
}

absl::Status SqliteStore::TouchNode(const std::string& name, absl::Time seen) {
  absl::MutexLock lock(&mu_);
  FB_ASSIGN_OR_RETURN(
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
      FB_ASSIGN_OR_RETURN(
          Statement s,
          Prepare("SELECT n.id, n.name, n.agent_version, n.first_seen_ms, "
                  "n.last_seen_ms, (SELECT f.facts FROM node_facts f "
                  "WHERE f.node_id = n.id ORDER BY f.id DESC LIMIT 1) "
                  "FROM nodes n ORDER BY n.name"));
      while (true) {
        FB_ASSIGN_OR_RETURN(bool row, s.Step("listing nodes"));
        if (!row) break;
        NodeRecord& node = nodes.emplace_back();
        index_of[s.Int(0)] = nodes.size() - 1;
        node.name = s.Text(1);
        node.agent_version = s.Text(2);
        node.first_seen = FromMillis(s.Int(3));
        node.last_seen = FromMillis(s.Int(4));
        const absl::string_view facts = s.Blob(5);
        if (!node.facts.ParseFromArray(facts.data(),
                                       static_cast<int>(facts.size()))) {
          return absl::DataLossError(
              absl::StrCat("cannot parse stored facts of node ", node.name));
        }
      }
    }
    FB_ASSIGN_OR_RETURN(Statement s,
                        Prepare("SELECT node_id, key, value FROM node_labels"));
    while (true) {
      FB_ASSIGN_OR_RETURN(bool row, s.Step("listing node labels"));
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

absl::StatusOr<int> SqliteStore::CountFactsVersions(const std::string& name) {
  absl::MutexLock lock(&mu_);
  FB_ASSIGN_OR_RETURN(
      Statement s,
      Prepare("SELECT (SELECT count(*) FROM node_facts f WHERE f.node_id = n.id) "
              "FROM nodes n WHERE n.name = ?1"));
  s.Bind(1, name);
  FB_ASSIGN_OR_RETURN(bool row, s.Step("counting facts versions"));
  if (!row) return absl::NotFoundError(absl::StrCat("node ", name, " not found"));
  return static_cast<int>(s.Int(0));
}

// ---- runs and tasks ----

namespace {

// NULL for a run that has not finished.
std::optional<int64_t> FinishedMillis(absl::Time finished) {
  if (finished == absl::InfinitePast()) return std::nullopt;
  return ToMillis(finished);
}

constexpr char kSelectRun[] =
    "SELECT run_id, state, created_ms, finished_ms, benchmarks, max_parallel, "
    "suite FROM runs ";

absl::StatusOr<RunRecord> ReadRun(const Statement& s) {
  RunRecord run;
  run.run_id = s.Text(0);
  run.state = s.Text(1);
  run.created = FromMillis(s.Int(2));
  run.finished = s.IsNull(3) ? absl::InfinitePast() : FromMillis(s.Int(3));
  FB_ASSIGN_OR_RETURN(run.benchmarks, ParseDelimited<v1::BenchmarkSpec>(
                                          s.Blob(4), "benchmarks of a run"));
  run.max_parallel = static_cast<uint32_t>(s.Int(5));
  run.suite = s.Text(6);
  return run;
}

// Columns: task_id, run_id, node, state, reason, outcomes, updated_ms,
// benchmarks, peer_task_id.
constexpr char kSelectTask[] =
    "SELECT t.task_id, r.run_id, t.node, t.state, t.reason, t.outcomes, "
    "t.updated_ms, t.benchmarks, t.peer_task_id "
    "FROM tasks t CROSS JOIN runs r ON r.key = t.run_key ";

}  // namespace

absl::Status SqliteStore::CreateRun(const RunRecord& run,
                                    const std::vector<TaskRecord>& tasks) {
  if (run.run_id.empty()) return absl::InvalidArgumentError("run id is empty");
  for (const TaskRecord& task : tasks) {
    if (task.task_id.empty()) {
      return absl::InvalidArgumentError("task id is empty");
    }
    if (!task.run_id.empty() && task.run_id != run.run_id) {
      return absl::InvalidArgumentError(
          absl::StrCat("task ", task.task_id, " names run ", task.run_id,
                       ", not ", run.run_id));
    }
  }
  const std::string benchmarks = SerializeDelimited(run.benchmarks);
  absl::MutexLock lock(&mu_);
  return InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    int64_t key = 0;
    {
      FB_ASSIGN_OR_RETURN(
          Statement s,
          Prepare("INSERT INTO runs(run_id, state, created_ms, finished_ms, "
                  "benchmarks, max_parallel, suite) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING key"));
      s.BindAll(run.run_id, run.state, ToMillis(run.created),
                FinishedMillis(run.finished), SqlBlob{benchmarks},
                run.max_parallel, run.suite);
      absl::StatusOr<bool> row = s.Step(absl::StrCat("creating run ", run.run_id));
      if (absl::IsAlreadyExists(row.status())) {
        return absl::AlreadyExistsError(
            absl::StrCat("run ", run.run_id, " already exists"));
      }
      if (!row.ok()) return row.status();
      if (!*row) return absl::InternalError("creating run returned no key");
      key = s.Int(0);
    }
    FB_ASSIGN_OR_RETURN(
        Statement s,
        Prepare("INSERT INTO tasks(task_id, run_key, node, state, reason, "
                "outcomes, updated_ms, benchmarks, peer_task_id) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
    for (const TaskRecord& task : tasks) {
      const std::string outcomes = SerializeDelimited(task.outcomes);
      const std::string task_benchmarks = SerializeDelimited(task.benchmarks);
      s.BindAll(task.task_id, key, task.node, task.state, task.reason,
                SqlBlob{outcomes}, ToMillis(task.updated),
                SqlBlob{task_benchmarks}, task.peer_task_id);
      absl::Status status = s.Run(absl::StrCat("creating task ", task.task_id));
      if (absl::IsAlreadyExists(status)) {
        return absl::AlreadyExistsError(
            absl::StrCat("task ", task.task_id, " already exists"));
      }
      FB_RETURN_IF_ERROR(status);
      s.Reset();
    }
    run_keys_[run.run_id] = key;
    return absl::OkStatus();
  });
}

absl::StatusOr<RunRecord> SqliteStore::GetRun(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  FB_ASSIGN_OR_RETURN(Statement s,
                      Prepare(absl::StrCat(kSelectRun, "WHERE run_id = ?1")));
  s.Bind(1, run_id);
  FB_ASSIGN_OR_RETURN(bool row, s.Step("reading run"));
  if (!row) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
  return ReadRun(s);
}

absl::StatusOr<std::vector<RunRecord>> SqliteStore::ListRuns(int limit) {
  absl::MutexLock lock(&mu_);
  FB_ASSIGN_OR_RETURN(
      Statement s,
      Prepare(absl::StrCat(kSelectRun,
                           "ORDER BY created_ms DESC, key DESC LIMIT ?1")));
  s.Bind(1, limit > 0 ? limit : -1);  // SQLite: a negative LIMIT is none
  std::vector<RunRecord> runs;
  while (true) {
    FB_ASSIGN_OR_RETURN(bool row, s.Step("listing runs"));
    if (!row) break;
    FB_ASSIGN_OR_RETURN(RunRecord run, ReadRun(s));
    runs.push_back(std::move(run));
  }
  return runs;
}

absl::Status SqliteStore::SetRunState(const std::string& run_id,
                                      const std::string& state,
                                      absl::Time finished) {
  absl::MutexLock lock(&mu_);
  FB_ASSIGN_OR_RETURN(
      int changed,
      RowsChangedBy(
          "UPDATE runs SET state = ?1, finished_ms = ?2 WHERE run_id = ?3",
          "setting run state", state, FinishedMillis(finished), run_id));
  if (changed == 0) {
    return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TaskRecord>> SqliteStore::ReadTasks(Statement& s) {
  std::vector<TaskRecord> tasks;
  while (true) {
    FB_ASSIGN_OR_RETURN(bool row, s.Step("listing tasks"));
    if (!row) break;
    TaskRecord& task = tasks.emplace_back();
    task.task_id = s.Text(0);
    task.run_id = s.Text(1);
    task.node = s.Text(2);
    task.state = static_cast<v1::TaskState>(s.Int(3));
    task.reason = s.Text(4);
    FB_ASSIGN_OR_RETURN(task.outcomes, ParseDelimited<v1::BenchmarkOutcome>(
                                           s.Blob(5), "outcomes of a task"));
    task.updated = FromMillis(s.Int(6));
    FB_ASSIGN_OR_RETURN(task.benchmarks, ParseDelimited<v1::BenchmarkSpec>(
                                             s.Blob(7), "benchmarks of a task"));
    task.peer_task_id = s.Text(8);
  }
  return tasks;
}

absl::StatusOr<std::vector<TaskRecord>> SqliteStore::ListTasks(
    const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  FB_ASSIGN_OR_RETURN(int64_t key, RunKeyLocked(run_id));
  FB_ASSIGN_OR_RETURN(
      Statement s,
      Prepare(absl::StrCat(kSelectTask, "WHERE t.run_key = ?1 ORDER BY t.seq")));
  s.Bind(1, key);
  return ReadTasks(s);
}

absl::StatusOr<std::vector<TaskRecord>> SqliteStore::ListTasksInStates(
    const std::vector<v1::TaskState>& states) {
  if (states.empty()) return std::vector<TaskRecord>{};
  std::vector<std::string> placeholders;
  for (size_t i = 1; i <= states.size(); ++i) {
    placeholders.push_back(absl::StrCat("?", i));
  }
  absl::MutexLock lock(&mu_);
  // Creation order (seq) is the order the controller queued them.
  FB_ASSIGN_OR_RETURN(
      Statement s,
      Prepare(absl::StrCat(kSelectTask, "WHERE t.state IN (",
                           absl::StrJoin(placeholders, ", "),
                           ") ORDER BY t.seq")));
  for (size_t i = 0; i < states.size(); ++i) {
    s.Bind(static_cast<int>(i + 1), states[i]);
  }
  return ReadTasks(s);
}

absl::Status SqliteStore::UpdateTaskLocked(const TaskRecord& task) {
  const std::string outcomes = SerializeDelimited(task.outcomes);
  // A pair's client learns its peer's address only once the server
  // listens, so a task's benchmarks can change after it was created.
  const std::string task_benchmarks = SerializeDelimited(task.benchmarks);
  FB_ASSIGN_OR_RETURN(
      int changed,
      RowsChangedBy("UPDATE tasks SET state = ?1, reason = ?2, outcomes = ?3, "
                    "updated_ms = ?4, benchmarks = ?6 WHERE task_id = ?5",
                    "updating task", task.state, task.reason, SqlBlob{outcomes},
                    ToMillis(task.updated), task.task_id,
                    SqlBlob{task_benchmarks}));
  if (changed == 0) {
    return absl::NotFoundError(absl::StrCat("task ", task.task_id, " not found"));
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::UpdateTask(const TaskRecord& task) {
  absl::MutexLock lock(&mu_);
  return UpdateTaskLocked(task);
}

// ---- samples ----

namespace {

constexpr char kInsertSample[] =
    "INSERT OR IGNORE INTO samples(id, run_key, node_id, metric_id, benchmark, "
    "value, unit, params, time_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";

// A packed ranking point: metric id, node id, run key, value bits, time in
// ms; each 8 bytes little-endian.
constexpr size_t kPointBytes = 40;
// recent_points is folded into per-metric chunks when it holds this many
// points or rows: it bounds what every ranking query scans on top of the
// metric's own chunks (about 2.5 MiB), while a typical commit only appends one
// row to it.
constexpr int64_t kFoldPoints = 65536;
constexpr int64_t kFoldRows = 256;
// Chunks grow by merging up to this many points (2.5 MiB).
constexpr int64_t kMaxChunkPoints = 65536;

struct RankingPoint {
  int64_t metric_id;
  int64_t node_id;
  int64_t run_key;
  double value;
  int64_t time_ms;
};

void PutU64(char* out, uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  std::memcpy(out, &v, sizeof v);
}
uint64_t GetU64(const char* in) {
  uint64_t v;
  std::memcpy(&v, in, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

void PackPoint(const RankingPoint& p, char* out) {
  uint64_t value_bits;
  std::memcpy(&value_bits, &p.value, sizeof value_bits);
  PutU64(out, static_cast<uint64_t>(p.metric_id));
  PutU64(out + 8, static_cast<uint64_t>(p.node_id));
  PutU64(out + 16, static_cast<uint64_t>(p.run_key));
  PutU64(out + 24, value_bits);
  PutU64(out + 32, static_cast<uint64_t>(p.time_ms));
}

RankingPoint PointAt(absl::string_view packed, size_t i) {
  const char* p = packed.data() + i * kPointBytes;
  RankingPoint point;
  point.metric_id = static_cast<int64_t>(GetU64(p));
  point.node_id = static_cast<int64_t>(GetU64(p + 8));
  point.run_key = static_cast<int64_t>(GetU64(p + 16));
  const uint64_t value_bits = GetU64(p + 24);
  std::memcpy(&point.value, &value_bits, sizeof point.value);
  point.time_ms = static_cast<int64_t>(GetU64(p + 32));
  return point;
}

absl::Status CheckPacked(absl::string_view packed) {
  if (packed.size() % kPointBytes != 0) {
    return absl::DataLossError(absl::StrCat(
        "stored ranking points have ", packed.size(),
        " bytes, not a multiple of ", kPointBytes));
  }
  return absl::OkStatus();
}

}  // namespace

void SqliteStore::PendingPoints::Add(absl::string_view point, int64_t time_ms) {
  if (count == 0) {
    min_time_ms = max_time_ms = time_ms;
  } else {
    min_time_ms = std::min(min_time_ms, time_ms);
    max_time_ms = std::max(max_time_ms, time_ms);
  }
  ++count;
  packed.append(point.data(), point.size());
}

absl::Status SqliteStore::InsertSampleLocked(Statement& insert,
                                             const v1::Sample& sample,
                                             std::string& params_buffer,
                                             PendingPoints& points,
                                             int& inserted) {
  if (sample.id().empty()) {
    return absl::InvalidArgumentError("a sample has no id");
  }
  if (sample.metric().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sample ", sample.id(), " has no metric"));
  }
  absl::StatusOr<int64_t> run_key = RunKeyLocked(sample.run_id());
  if (!run_key.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sample ", sample.id(), " names run \"", sample.run_id(),
        "\", which does not exist: ", run_key.status().message()));
  }
  absl::StatusOr<int64_t> node_id = NodeIdLocked(sample.node());
  if (!node_id.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sample ", sample.id(), " names node \"", sample.node(),
        "\", which does not exist: ", node_id.status().message()));
  }
  FB_ASSIGN_OR_RETURN(int64_t metric_id, MetricIdLocked(sample.metric(), true));
  SerializeParams(sample.params(), params_buffer);

  // No params are stored as NULL, not as an empty blob.
  std::optional<SqlBlob> params;
  if (!params_buffer.empty()) params = SqlBlob{params_buffer};
  insert.BindAll(sample.id(), *run_key, *node_id, metric_id, sample.benchmark(),
                 sample.value(), sample.unit(), params, sample.time_unix_ms());
  FB_RETURN_IF_ERROR(insert.Run("storing sample"));
  const int changed = insert.Changes();
  insert.Reset();
  if (changed == 0) return absl::OkStatus();  // stored before
  ++inserted;
  char packed[kPointBytes];
  PackPoint({metric_id, *node_id, *run_key, sample.value(),
             sample.time_unix_ms()},
            packed);
  points.Add(absl::string_view(packed, kPointBytes), sample.time_unix_ms());
  return absl::OkStatus();
}

absl::Status SqliteStore::StagePointsLocked(const PendingPoints& points) {
  if (points.count == 0) return absl::OkStatus();
  if (recent_points_ < 0) {
    FB_ASSIGN_OR_RETURN(Statement s,
                        Prepare("SELECT count(*), coalesce(sum(n_points), 0) "
                                "FROM recent_points"));
    FB_ASSIGN_OR_RETURN(bool row, s.Step("sizing recent points"));
    recent_rows_ = row ? s.Int(0) : 0;
    recent_points_ = row ? s.Int(1) : 0;
  }
  FB_RETURN_IF_ERROR(
      RunCached("INSERT INTO recent_points(n_points, points) VALUES (?1, ?2)",
                "storing ranking points", points.count, SqlBlob{points.packed}));
  recent_points_ += points.count;
  ++recent_rows_;
  if (recent_points_ < kFoldPoints && recent_rows_ < kFoldRows) {
    return absl::OkStatus();
  }
  return FoldRecentPointsLocked();
}

absl::Status SqliteStore::FoldRecentPointsLocked() {
  absl::flat_hash_map<int64_t, PendingPoints> by_metric;
  {
    FB_ASSIGN_OR_RETURN(Statement s,
                        Prepare("SELECT points FROM recent_points ORDER BY id"));
    while (true) {
      FB_ASSIGN_OR_RETURN(bool row, s.Step("reading recent points"));
      if (!row) break;
      const absl::string_view packed = s.Blob(0);
      FB_RETURN_IF_ERROR(CheckPacked(packed));
      for (size_t i = 0; i < packed.size() / kPointBytes; ++i) {
        const RankingPoint p = PointAt(packed, i);
        by_metric[p.metric_id].Add(packed.substr(i * kPointBytes, kPointBytes),
                                   p.time_ms);
      }
    }
  }
  FB_RETURN_IF_ERROR(
      RunCached("DELETE FROM recent_points", "DELETE FROM recent_points"));
  recent_points_ = 0;
  recent_rows_ = 0;
  for (auto& [metric_id, points] : by_metric) {
    FB_RETURN_IF_ERROR(WriteChunkLocked(metric_id, std::move(points)));
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::WriteChunkLocked(int64_t metric_id,
                                           PendingPoints points) {
  // Merge like a binary counter: the newest chunk joins the new points while
  // it is no larger than them, so chunk sizes stay roughly geometric and each
  // point is rewritten O(log kMaxChunkPoints) times at most.
  while (true) {
    int64_t newest_id = 0;
    int64_t newest_count = 0;
    {
      FB_ASSIGN_OR_RETURN(
          Statement s,
          Prepare("SELECT id, n_points FROM metric_points "
                  "INDEXED BY metric_points_by_metric WHERE metric_id = ?1 "
                  "ORDER BY id DESC LIMIT 1"));
      s.Bind(1, metric_id);
      FB_ASSIGN_OR_RETURN(bool row, s.Step("reading newest ranking chunk"));
      if (!row) break;
      newest_id = s.Int(0);
      newest_count = s.Int(1);
    }
    if (newest_count > points.count ||
        newest_count + points.count > kMaxChunkPoints) {
      break;
    }
    FB_ASSIGN_OR_RETURN(
        Statement s, Prepare("DELETE FROM metric_points WHERE id = ?1 "
                             "RETURNING min_time_ms, max_time_ms, points"));
    s.Bind(1, newest_id);
    FB_ASSIGN_OR_RETURN(bool row, s.Step("merging ranking chunks"));
    if (!row) return absl::InternalError("ranking chunk vanished while merging");
    const absl::string_view older = s.Blob(2);
    FB_RETURN_IF_ERROR(CheckPacked(older));
    points.packed.insert(0, older.data(), older.size());
    points.count += static_cast<int64_t>(older.size() / kPointBytes);
    points.min_time_ms = std::min(points.min_time_ms, s.Int(0));
    points.max_time_ms = std::max(points.max_time_ms, s.Int(1));
    // RETURNING rows must be stepped to the end for the delete to finish.
    FB_ASSIGN_OR_RETURN(bool more, s.Step("merging ranking chunks"));
    if (more) return absl::InternalError("ranking chunk id not unique");
  }
  return RunCached(
      "INSERT INTO metric_points(metric_id, min_time_ms, max_time_ms, "
      "n_points, points) VALUES (?1, ?2, ?3, ?4, ?5)",
      "storing ranking chunk", metric_id, points.min_time_ms, points.max_time_ms,
      points.count, SqlBlob{points.packed});
}

absl::Status SqliteStore::ScanPointsLocked(
    int64_t metric_id, int64_t since_ms,
    absl::FunctionRef<absl::Status(absl::string_view packed)> visit,
    absl::FunctionRef<bool(int64_t chunk_max_time_ms)> keep_going) {
  {
    FB_ASSIGN_OR_RETURN(Statement s, Prepare("SELECT points FROM recent_points"));
    while (true) {
      FB_ASSIGN_OR_RETURN(bool row, s.Step("reading recent points"));
      if (!row) break;
      const absl::string_view packed = s.Blob(0);
      FB_RETURN_IF_ERROR(CheckPacked(packed));
      FB_RETURN_IF_ERROR(visit(packed));
    }
  }
  struct Chunk {
    int64_t id;
    int64_t max_time_ms;
  };
  std::vector<Chunk> chunks;
  {
    FB_ASSIGN_OR_RETURN(
        Statement s, Prepare("SELECT id, max_time_ms FROM metric_points "
                             "INDEXED BY metric_points_by_metric "
                             "WHERE metric_id = ?1 AND max_time_ms >= ?2"));
    s.BindAll(metric_id, since_ms);
    while (true) {
      FB_ASSIGN_OR_RETURN(bool row, s.Step("listing ranking chunks"));
      if (!row) break;
      chunks.push_back({s.Int(0), s.Int(1)});
    }
  }
  std::sort(chunks.begin(), chunks.end(), [](const Chunk& a, const Chunk& b) {
    return a.max_time_ms > b.max_time_ms;
  });
  FB_ASSIGN_OR_RETURN(Statement s,
                      Prepare("SELECT points FROM metric_points WHERE id = ?1"));
  for (const Chunk& chunk : chunks) {
    if (!keep_going(chunk.max_time_ms)) break;
    s.Bind(1, chunk.id);
    FB_ASSIGN_OR_RETURN(bool row, s.Step("reading ranking chunk"));
    if (row) {
      const absl::string_view packed = s.Blob(0);
      FB_RETURN_IF_ERROR(CheckPacked(packed));
      FB_RETURN_IF_ERROR(visit(packed));
    }
    s.Reset();
  }
  return absl::OkStatus();
}

absl::StatusOr<int> SqliteStore::CommitReports(
    const std::vector<ReportWrite>& reports) {
  absl::MutexLock lock(&mu_);
  int inserted = 0;
  std::string params_buffer;
  PendingPoints points;
  absl::Status status = InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    FB_ASSIGN_OR_RETURN(Statement insert, Prepare(kInsertSample));
    for (const ReportWrite& report : reports) {
      for (const v1::Sample& sample : report.samples) {
        FB_RETURN_IF_ERROR(
            InsertSampleLocked(insert, sample, params_buffer, points, inserted));
      }
      if (report.task != nullptr) {
        FB_RETURN_IF_ERROR(UpdateTaskLocked(*report.task));
      }
    }
    return StagePointsLocked(points);
  });
  if (!status.ok()) return status;
  return inserted;
}

// Columns: id, run_id, node, benchmark, metric, value, unit, params, time_ms.
absl::StatusOr<std::vector<v1::Sample>> SqliteStore::ReadSamples(Statement& s) {
  std::vector<v1::Sample> samples;
  while (true) {
    FB_ASSIGN_OR_RETURN(bool row, s.Step("reading samples"));
    if (!row) break;
    v1::Sample& sample = samples.emplace_back();
    const absl::string_view params = s.Blob(7);
    if (!params.empty() &&
        !sample.ParseFromArray(params.data(), static_cast<int>(params.size()))) {
      return absl::DataLossError(
          absl::StrCat("cannot parse stored params of sample ", s.Text(0)));
    }
    sample.set_id(s.Text(0));
    sample.set_run_id(s.Text(1));
    sample.set_node(s.Text(2));
    sample.set_benchmark(s.Text(3));
    sample.set_metric(s.Text(4));
    sample.set_value(s.Double(5));
    sample.set_unit(s.Text(6));
    sample.set_time_unix_ms(s.Int(8));
  }
  return samples;
}

absl::StatusOr<std::vector<v1::Sample>> SqliteStore::ListSamplesForRun(
    const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  FB_ASSIGN_OR_RETURN(int64_t key, RunKeyLocked(run_id));
  // CROSS JOIN fixes the loop order: walk the run's index entries, then look
  // up each name by key. Rows come in index order: by node, metric, time.
  FB_ASSIGN_OR_RETURN(
      Statement s,
      Prepare("SELECT s.id, ?2, n.name, s.benchmark, m.name, s.value, s.unit, "
              "s.params, s.time_ms FROM samples s INDEXED BY samples_by_run "
              "CROSS JOIN nodes n ON n.id = s.node_id "
              "CROSS JOIN metrics m ON m.id = s.metric_id "
              "WHERE s.run_key = ?1"));
  s.BindAll(key, run_id);
  return ReadSamples(s);
}

absl::StatusOr<std::vector<v1::Sample>> SqliteStore::History(
    const std::string& node, const std::string& metric, int limit) {
  absl::MutexLock lock(&mu_);
  std::vector<v1::Sample> samples;
  absl::Status status = InTransaction(TxnKind::kRead, [&]() -> absl::Status {
    FB_ASSIGN_OR_RETURN(int64_t node_id, NodeIdLocked(node));
    FB_ASSIGN_OR_RETURN(int64_t metric_id, MetricIdLocked(metric, false));
    if (metric_id == 0) return absl::OkStatus();

    // 1. The times and runs of the node's newest `limit` points, from the
    //    ranking points, newest chunks first, stopping at the first chunk
    //    that is all older than the newest `limit` found so far. There is no
    //    node-major sample index: it would cost a page write per node per
    //    commit, the one thing the ingest path cannot afford.
    std::vector<std::pair<int64_t, int64_t>> found;  // (time_ms, run_key)
    const size_t wanted = limit > 0 ? static_cast<size_t>(limit) : SIZE_MAX;
    FB_RETURN_IF_ERROR(ScanPointsLocked(
        metric_id, std::numeric_limits<int64_t>::min(),
        [&](absl::string_view packed) {
          for (size_t i = 0; i < packed.size() / kPointBytes; ++i) {
            const RankingPoint p = PointAt(packed, i);
            if (p.metric_id == metric_id && p.node_id == node_id) {
              found.emplace_back(p.time_ms, p.run_key);
            }
          }
          return absl::OkStatus();
        },
        [&](int64_t chunk_max_time_ms) {
          if (found.size() < wanted) return true;
          std::nth_element(found.begin(), found.begin() + (wanted - 1),
                           found.end(), std::greater<>());
          return chunk_max_time_ms >= found[wanted - 1].first;
        }));
    if (found.empty()) return absl::OkStatus();
    std::sort(found.begin(), found.end(), std::greater<>());
    // Rows at the boundary time are all read; ties are cut after sorting.
    const int64_t oldest = found[std::min(wanted, found.size()) - 1].first;

    // 2. The full rows, per run through the run-major index.
    absl::flat_hash_map<int64_t, bool> runs;
    for (const auto& [time_ms, run_key] : found) {
      if (time_ms >= oldest) runs[run_key] = true;
    }
    FB_ASSIGN_OR_RETURN(
        Statement s,
        Prepare("SELECT s.id, r.run_id, ?5, s.benchmark, ?6, s.value, s.unit, "
                "s.params, s.time_ms FROM samples s "
                "INDEXED BY samples_by_run "
                "CROSS JOIN runs r ON r.key = s.run_key "
                "WHERE s.run_key = ?1 AND s.node_id = ?2 AND s.metric_id = ?3 "
                "AND s.time_ms >= ?4"));
    for (const auto& [run_key, unused] : runs) {
      s.BindAll(run_key, node_id, metric_id, oldest, node, metric);
      FB_ASSIGN_OR_RETURN(std::vector<v1::Sample> rows, ReadSamples(s));
      for (v1::Sample& row : rows) samples.push_back(std::move(row));
      s.Reset();
    }
    std::sort(samples.begin(), samples.end(),
              [](const v1::Sample& a, const v1::Sample& b) {
                if (a.time_unix_ms() != b.time_unix_ms()) {
                  return a.time_unix_ms() > b.time_unix_ms();
                }
                return a.id() > b.id();
              });
    if (samples.size() > wanted) samples.resize(wanted);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return samples;
}

absl::StatusOr<MetricPointTable> SqliteStore::MetricPointTableSince(
    const std::string& metric, absl::Time since) {
  const int64_t since_ms = since == absl::InfinitePast()
                               ? std::numeric_limits<int64_t>::min()
                               : ToMillis(since);
  absl::MutexLock lock(&mu_);
  MetricPointTable table;
  absl::Status status = InTransaction(TxnKind::kRead, [&]() -> absl::Status {
    FB_ASSIGN_OR_RETURN(int64_t metric_id, MetricIdLocked(metric, false));
    if (metric_id == 0) return absl::OkStatus();
    {
      // Sized first (an upper bound) so the points never move.
      FB_ASSIGN_OR_RETURN(
          Statement s,
          Prepare("SELECT (SELECT coalesce(sum(n_points), 0) FROM metric_points "
                  "INDEXED BY metric_points_by_metric "
                  "WHERE metric_id = ?1 AND max_time_ms >= ?2), "
                  "(SELECT coalesce(sum(n_points), 0) FROM recent_points)"));
      s.BindAll(metric_id, since_ms);
      FB_ASSIGN_OR_RETURN(bool row, s.Step("sizing metric points"));
      if (row) table.points.reserve(static_cast<size_t>(s.Int(0) + s.Int(1)));
    }
    // Node ids are small and dense (rowids of a table with a row per
    // machine): a plain array maps them to table indexes. Runs change
    // rarely from one point to the next, so a hash map behind a one-entry
    // memo does for them.
    constexpr int64_t kDenseNodeIds = 1 << 20;
    constexpr uint32_t kUnset = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> node_index;
    absl::flat_hash_map<int64_t, uint32_t> sparse_node_index;
    absl::flat_hash_map<int64_t, uint32_t> run_index;
    int64_t last_run = -1;
    uint32_t last_run_index = 0;
    auto index_of_node = [&](int64_t node_id) -> absl::StatusOr<uint32_t> {
      uint32_t* slot = nullptr;
      if (node_id >= 0 && node_id < kDenseNodeIds) {
        const auto i = static_cast<size_t>(node_id);
        if (i >= node_index.size()) node_index.resize(i + 1, kUnset);
        slot = &node_index[i];
      } else {
        slot = &sparse_node_index.try_emplace(node_id, kUnset).first->second;
      }
      if (*slot == kUnset) {
        FB_ASSIGN_OR_RETURN(const std::string* name, NodeNameLocked(node_id));
        *slot = static_cast<uint32_t>(table.nodes.size());
        table.nodes.push_back(*name);
      }
      return *slot;
    };
    return ScanPointsLocked(
        metric_id, since_ms,
        [&](absl::string_view packed) -> absl::Status {
          for (size_t i = 0; i < packed.size() / kPointBytes; ++i) {
            const RankingPoint p = PointAt(packed, i);
            if (p.metric_id != metric_id || p.time_ms < since_ms) continue;
            FB_ASSIGN_OR_RETURN(uint32_t node, index_of_node(p.node_id));
            if (p.run_key != last_run) {
              auto [it, added] = run_index.try_emplace(
                  p.run_key, static_cast<uint32_t>(table.run_ids.size()));
              if (added) {
                FB_ASSIGN_OR_RETURN(const std::string* run_id,
                                    RunIdLocked(p.run_key));
                table.run_ids.push_back(*run_id);
              }
              last_run = p.run_key;
              last_run_index = it->second;
            }
            table.points.push_back(
                {node, last_run_index, p.value, FromMillis(p.time_ms)});
          }
          return absl::OkStatus();
        },
        [](int64_t) { return true; });
  });
  if (!status.ok()) return status;
  return table;
}

absl::StatusOr<std::vector<MetricPoint>> SqliteStore::MetricPointsSince(
    const std::string& metric, absl::Time since) {
  FB_ASSIGN_OR_RETURN(MetricPointTable table,
                      MetricPointTableSince(metric, since));
  // Nearly all of this call's time for a large window: two string copies
  // per point (MetricPointTableSince skips them).
  std::vector<MetricPoint> points;
  points.reserve(table.points.size());
  for (const MetricPointTable::Point& p : table.points) {
    points.push_back(
        {table.nodes[p.node], table.run_ids[p.run], p.value, p.time});
  }
  return points;
}

absl::StatusOr<int64_t> SqliteStore::CountSamples() {
  absl::MutexLock lock(&mu_);
  FB_ASSIGN_OR_RETURN(Statement s, Prepare("SELECT count(*) FROM samples"));
  FB_ASSIGN_OR_RETURN(bool row, s.Step("counting samples"));
  return row ? s.Int(0) : 0;
}

absl::Status SqliteStore::CheckIntegrity() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> problems;
  absl::Status status = InTransaction(TxnKind::kRead, [&]() -> absl::Status {
    {
      FB_ASSIGN_OR_RETURN(Statement s, Prepare("PRAGMA integrity_check"));
      while (true) {
        FB_ASSIGN_OR_RETURN(bool row, s.Step("checking integrity"));
        if (!row) break;
        if (s.Text(0) != "ok" && problems.size() < 10) {
          problems.push_back(s.Text(0));
        }
      }
    }
    {
      FB_ASSIGN_OR_RETURN(Statement s, Prepare("PRAGMA foreign_key_check"));
      while (true) {
        FB_ASSIGN_OR_RETURN(bool row, s.Step("checking foreign keys"));
        if (!row) break;
        if (problems.size() < 10) {
          problems.push_back(absl::StrCat("row ", s.Int(1), " of ", s.Text(0),
                                          " references a missing ", s.Text(2)));
        }
      }
    }
    // The ranking points are derived from samples in the same transactions:
    // there must be exactly one per sample.
    FB_ASSIGN_OR_RETURN(
        Statement s,
        Prepare(absl::StrCat(
            "SELECT (SELECT count(*) FROM samples), "
            "(SELECT coalesce(sum(n_points), 0) FROM metric_points) + "
            "(SELECT coalesce(sum(n_points), 0) FROM recent_points), "
            "(SELECT count(*) FROM metric_points WHERE length(points) != "
            "n_points * ", kPointBytes, ") + "
            "(SELECT count(*) FROM recent_points WHERE length(points) != "
            "n_points * ", kPointBytes, ")")));
    FB_ASSIGN_OR_RETURN(bool row, s.Step("checking ranking points"));
    if (row && (s.Int(0) != s.Int(1) || s.Int(2) != 0)) {
      problems.push_back(absl::StrCat(
          s.Int(0), " samples but ", s.Int(1), " ranking points (", s.Int(2),
          " malformed chunks)"));
    }
    return absl::OkStatus();
  });
  FB_RETURN_IF_ERROR(status);
  if (problems.empty()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(path_, " failed its integrity check: ",
                                          absl::StrJoin(problems, "; ")));
}

}  // namespace fleetbench::storage
