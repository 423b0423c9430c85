// storage/sqlite_store_impl.h — the SQLite implementation of Store.
//
// One connection, guarded by one mutex: SQLite allows one writer at a time
// anyway, and the controller's calls are short. Hot statements are prepared
// once and cached for the life of the connection. Names that samples repeat
// (node, run, metric) are stored as integer keys; their name<->key maps are
// cached in memory and dropped whenever a transaction rolls back, so a cache
// never holds a key that did not commit.
//
// The store assumes it is the only writer of its file (the controller holds
// it); other processes may read.
//
// One class, its member functions defined by domain: sqlite_open.cc (opening,
// pragmas, migrations), sqlite_store.cc (connection, transactions, key
// caches, integrity), sqlite_nodes.cc, sqlite_runs.cc (runs and tasks),
// sqlite_ingest.cc (CommitReports and the ranking points it stages),
// sqlite_day_summaries.cc (the per-day summaries of those points),
// sqlite_samples.cc (sample reads, History), sqlite_rank_scan.cc,
// sqlite_metrics.cc (metric descriptors), sqlite_prices.cc (the price
// catalog), sqlite_schedules.cc (schedules and firings) and
// sqlite_security.cc (API tokens, settings, audit).
#ifndef FLEETBENCH_STORAGE_SQLITE_STORE_IMPL_H_
#define FLEETBENCH_STORAGE_SQLITE_STORE_IMPL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "storage/migrations.h"
#include "storage/ranking_points.h"
#include "storage/sample_params.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_verify.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"

// sqlite3.h stays inside the storage/sqlite_*.cc files.
struct sqlite3;

namespace fleetbench::storage {

// Times are stored as Unix milliseconds; InfinitePast and InfiniteFuture
// saturate to the int64 limits, so they bound queries as they are.
inline int64_t ToMillis(absl::Time t) { return absl::ToUnixMillis(t); }
inline absl::Time FromMillis(int64_t ms) { return absl::FromUnixMillis(ms); }

class SqliteStore final : public Store {
 public:
  // Takes ownership of `db`, an open connection already configured and
  // migrated.
  SqliteStore(sqlite3* db, std::string path);
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  absl::Status UpsertNode(const NodeRecord& node) override;
  absl::Status TouchNode(const std::string& name, absl::Time seen) override;
  absl::StatusOr<std::vector<NodeRecord>> ListNodes() override;
  absl::StatusOr<bool> RemoveNode(const std::string& name, absl::Time when) override;
  absl::StatusOr<int> CountFactsVersions(const std::string& name) override;
  absl::StatusOr<std::vector<FactsVersion>> ListFactsVersions(const std::string& name,
                                                              int limit) override;

  absl::Status CreateRun(const RunRecord& run,
                         const std::vector<TaskRecord>& tasks) override;
  absl::StatusOr<RunRecord> GetRun(const std::string& run_id) override;
  absl::StatusOr<std::vector<RunRecord>> ListRuns(
      int limit, const std::string& after_run_id) override;
  absl::Status SetRunState(const std::string& run_id, const std::string& state,
                           absl::Time finished) override;
  absl::StatusOr<std::map<std::string, int64_t>> TaskLogSizesOfRun(
      const std::string& run_id) override;
  absl::StatusOr<std::map<std::string, std::string>> TaskLogs(
      const std::vector<std::string>& task_ids) override;
  absl::StatusOr<std::vector<TaskRecord>> ListTasks(
      const std::string& run_id) override;
  absl::Status AddTasks(const std::string& run_id,
                        const std::vector<TaskRecord>& tasks) override;
  absl::StatusOr<std::vector<TaskRecord>> ListTasksInStates(
      const std::vector<v1::TaskState>& states) override;
  absl::StatusOr<TaskRecord> GetTask(const std::string& task_id) override;
  absl::Status UpdateTask(const TaskRecord& task) override;

  absl::StatusOr<int> CommitReports(
      const std::vector<ReportWrite>& reports) override;

  absl::StatusOr<std::vector<v1::Sample>> ListSamplesForRun(
      const std::string& run_id) override;
  absl::StatusOr<std::vector<v1::Sample>> ListSamplesForRunPage(
      const std::string& run_id, int limit, const std::optional<RunSampleCursor>& after,
      std::vector<RunSampleCursor>* cursors) override;
  absl::StatusOr<std::vector<v1::Sample>> History(
      const std::string& node, const std::string& metric, int limit,
      const std::optional<SampleCursor>& after) override;
  absl::StatusOr<std::vector<MetricPoint>> MetricPointsSince(
      const std::string& metric, absl::Time since) override;
  absl::StatusOr<MetricPointTable> MetricPointTableSince(
      const std::string& metric, absl::Time since) override;
  absl::StatusOr<MetricPointTable> MetricPointTableBetween(
      const std::string& metric, absl::Time since, absl::Time until) override;
  absl::StatusOr<MetricPointTable> MetricPointTableOfNewestRuns(
      const std::string& metric, absl::Time since, int max_runs_per_node,
      size_t fleet_nodes) override;
  absl::StatusOr<DaySummaryTable> DaySummariesSince(const std::string& metric,
                                                    int64_t first_day) override;
  // Builds the day summaries from the stored chunks when a migration asked
  // for it (docs/storage.md, Day summaries); OpenSqliteStore calls it.
  absl::Status BuildPendingDaySummaries();
  // Reads which samples layout the file has (a test's older migration list
  // may stop before schema 11); OpenSqliteStore calls it.
  absl::Status ReadSamplesLayout();
  // Checks the file beside serving (storage/sqlite_verify.h); damage found
  // makes every later write fail (MarkDamaged). `done` as
  // SqliteOptions::on_verified. OpenSqliteStore calls it for a large file.
  void VerifyInBackground(std::function<void(const absl::Status&, absl::Duration)> done);
  absl::StatusOr<int64_t> CountSamples() override;
  absl::Status CheckIntegrity() override;
  absl::Status BackupTo(const std::string& dest_path, int pages_per_step) override;
  absl::Status ExportHistory(const HistorySink& sink, int batch_rows) override;
  absl::StatusOr<std::map<std::string, int64_t>> ImportHistory(
      const HistorySource& source) override;
  absl::StatusOr<int64_t> PruneSamplesBefore(absl::Time before, int max_samples) override;
  absl::StatusOr<int64_t> PruneTaskLogsBefore(absl::Time before, int max_logs) override;
  absl::Status RecordReliability(const std::vector<NodeUptime>& uptime,
                                 const std::vector<InterruptionRecord>& interruptions) override;
  absl::StatusOr<std::map<std::string, int64_t>> UptimeSince(int64_t first_day) override;
  absl::StatusOr<std::map<std::string, std::map<std::string, int64_t>>> InterruptionCountsSince(
      absl::Time since) override;
  absl::StatusOr<std::vector<InterruptionRecord>> InterruptionsSince(absl::Time since,
                                                                    int limit) override;
  absl::Status EnrollNodeIdentity(const NodeIdentityRecord& identity) override;
  absl::StatusOr<std::optional<NodeIdentityRecord>> GetNodeIdentity(
      const std::string& node) override;
  absl::StatusOr<bool> RevokeNodeIdentity(const std::string& node, absl::Time when) override;
  absl::Status RenewNodeIdentity(const NodeIdentityRecord& renewed,
                                 const std::string& current_fingerprint) override;

  absl::Status UpsertMetricDescriptors(
      const std::vector<v1::MetricDescriptor>& descriptors) override;
  absl::StatusOr<std::vector<v1::MetricDescriptor>> ListMetricDescriptors()
      override;
  absl::StatusOr<v1::MetricDescriptor> GetMetricDescriptor(
      const std::string& name) override;

  absl::StatusOr<PriceImport> ImportPrices(
      const std::vector<v1::CatalogPrice>& prices, absl::Time imported) override;
  absl::StatusOr<std::vector<v1::CatalogPrice>> ListPrices() override;

  absl::Status CreateSchedule(const ScheduleRecord& schedule) override;
  absl::StatusOr<std::vector<ScheduleRecord>> ListSchedules() override;
  absl::Status RemoveSchedule(const std::string& name) override;
  absl::Status RecordFiring(const v1::ScheduleFiring& firing,
                            std::optional<absl::Time> handled_until) override;
  absl::StatusOr<std::vector<v1::ScheduleFiring>> ListFirings(const std::string& name,
                                                              int limit) override;
  absl::StatusOr<std::optional<v1::ScheduleFiring>> FiringOfRun(
      const std::string& run_id) override;

  absl::Status CreateApiToken(const ApiTokenRecord& token, absl::Time now) override;
  absl::StatusOr<std::vector<ApiTokenRecord>> ListApiTokens() override;
  absl::StatusOr<ApiTokenRecord> RevokeApiToken(const std::string& name,
                                                absl::Time when) override;
  absl::Status TouchApiToken(const std::string& name, absl::Time used) override;
  absl::StatusOr<std::optional<std::string>> GetSetting(const std::string& key) override;
  absl::Status PutSetting(const std::string& key, const std::string& value) override;
  absl::StatusOr<int64_t> AppendAudit(const AuditRecord& record, int64_t keep) override;
  absl::StatusOr<std::vector<AuditRecord>> ListAudit(absl::Time since, int limit,
                                                     int64_t before_id) override;

 private:
  // ---- sqlite_store.cc and the statement helpers ----
  enum class TxnKind { kRead, kWrite };

  // Runs `body` inside BEGIN [IMMEDIATE] ... COMMIT; rolls back (and forgets
  // the caches) when the body or the commit fails.
  absl::Status InTransaction(TxnKind kind, absl::FunctionRef<absl::Status()> body)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The cached prepared statement for `sql`, prepared on first use.
  absl::StatusOr<Statement> Prepare(absl::string_view sql)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return statements_.Get(sql);
  }
  // Prepares `sql` (cached), binds `args` to ?1, ?2, ... and steps it once:
  // for statements that return no rows. `what` labels a failure.
  template <typename... Args>
  absl::Status RunCached(absl::string_view sql, absl::string_view what,
                         const Args&... args) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::StatusOr<Statement> s = Prepare(sql);
    if (!s.ok()) return s.status();
    s->BindAll(args...);
    return s->Run(what);
  }
  // RunCached, answering how many rows the statement changed.
  template <typename... Args>
  absl::StatusOr<int> RowsChangedBy(absl::string_view sql, absl::string_view what,
                                    const Args&... args)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!damaged_.ok()) return damaged_;
    absl::StatusOr<Statement> s = Prepare(sql);
    if (!s.ok()) return s.status();
    s->BindAll(args...);
    if (absl::Status status = s->Run(what); !status.ok()) return status;
    return s->Changes();
  }
  void ForgetCaches() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // From the background check: `damage` (DATA_LOSS) is every later write's
  // answer, and the connection becomes query_only, so that a write path
  // that does not ask damaged_ is refused by SQLite too.
  void MarkDamaged(const absl::Status& damage) ABSL_LOCKS_EXCLUDED(mu_);

  // One cached name -> key lookup through `sql` (?1 the name, one integer
  // column); nullopt when there is no such row. `what` labels the step.
  absl::StatusOr<std::optional<int64_t>> CachedKeyLocked(
      absl::flat_hash_map<std::string, int64_t>& cache, absl::string_view sql,
      absl::string_view what, const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One cached key -> name lookup through `sql` (?1 the key, one text
  // column); DATA_LOSS naming `kind` when a sample's key has no row.
  absl::StatusOr<const std::string*> CachedNameLocked(
      absl::node_hash_map<int64_t, std::string>& cache, absl::string_view sql,
      absl::string_view what, absl::string_view kind, int64_t key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Name -> key lookups. NOT_FOUND when the node or run does not exist.
  absl::StatusOr<int64_t> NodeIdLocked(const std::string& name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<int64_t> RunKeyLocked(const std::string& run_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Returns 0 when the metric is unknown and `create` is false.
  absl::StatusOr<int64_t> MetricIdLocked(const std::string& name, bool create)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Key -> name lookups for reads.
  absl::StatusOr<const std::string*> NodeNameLocked(int64_t id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<const std::string*> RunIdLocked(int64_t key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- sqlite_runs.cc ----
  absl::Status UpdateTaskLocked(const TaskRecord& task)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Inserts `tasks` into the run with this key (inside a transaction).
  absl::Status InsertTasksLocked(int64_t run_key, const std::vector<TaskRecord>& tasks)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Every row of a bound task query, stepped to its end.
  absl::StatusOr<std::vector<TaskRecord>> ReadTasks(Statement& s)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- sqlite_ingest.cc ----
  // Packed ranking points (storage/ranking_points.h) not yet stored.
  struct PendingPoints {
    std::string packed;
    int64_t count = 0;
    int64_t min_time_ms = 0;
    int64_t max_time_ms = 0;
    void Add(absl::string_view point, int64_t time_ms);
  };
  // Inserts the sample unless it is stored; adds its ranking point to
  // `points` when it was new.
  absl::Status InsertSampleLocked(Statement& insert, const v1::Sample& sample,
                                  SplitParams& params,
                                  PendingPoints& points, int& inserted)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A row of sample_kinds: its id and the measured values its samples
  // store as NULL.
  struct SampleKind {
    int64_t id = 0;
    std::string measured_default;
  };
  // The kind of (benchmark, unit, kind params, measured keys) in their
  // stored forms (storage/sample_params.h), added when new with
  // `measured_values` as its default. Valid until the next call.
  absl::StatusOr<const SampleKind*> SampleKindLocked(const std::string& benchmark,
                                                     const std::string& unit,
                                                     const std::string& params,
                                                     const std::string& measured_keys,
                                                     const std::string& measured_values)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Appends a commit's points to recent_points, and folds recent_points into
  // per-metric chunks once they have grown past the thresholds.
  absl::Status StagePointsLocked(const PendingPoints& points)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status FoldRecentPointsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Stores one metric's points as a chunk, first merging the metric's newest
  // chunks into it while they are no larger than it.
  absl::Status WriteChunkLocked(int64_t metric_id, PendingPoints points)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- sqlite_day_summaries.cc ----
  // Values to add to the day summaries, by (metric, day, node).
  struct DayKey {
    int64_t metric_id;
    int64_t day;
    int64_t node_id;
    bool operator==(const DayKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const DayKey& k) {
      return H::combine(std::move(h), k.metric_id, k.day, k.node_id);
    }
  };
  struct DayAggregate {
    ValueSketch values;
    int64_t first_ms = INT64_MAX;
    int64_t last_ms = INT64_MIN;
  };
  using DayAggregates = absl::flat_hash_map<DayKey, DayAggregate>;
  static void AddToDays(const RankingPoint& point, DayAggregates& days);
  // Merges `days` into the stored summaries (inside a write transaction).
  absl::Status MergeDaySummariesLocked(const DayAggregates& days)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- sqlite_samples.cc ----
  // Every row of a bound sample query, stepped to its end.
  absl::StatusOr<std::vector<v1::Sample>> ReadSamples(Statement& s)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The same, calling `also(statement)` after each row is read (for columns
  // past the sample's nine).
  absl::StatusOr<std::vector<v1::Sample>> ReadSamples(
      Statement& s, const std::function<void(Statement&)>& also)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- sqlite_rank_scan.cc ----
  // The points of `metric_id` in [since_ms, until_ms) into `table`; with
  // max_runs_per_node > 0 only each node's first that many runs met
  // (MetricPointTableOfNewestRuns), newest-written first.
  absl::Status PointTableLocked(int64_t metric_id, int64_t since_ms, int64_t until_ms,
                                int max_runs_per_node, size_t fleet_nodes,
                                MetricPointTable& table) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Calls `visit` with every recent point (newest row first), then with the
  // packed points of `metric_id` in chunks whose newest point is at or after
  // `since_ms` and oldest before `until_ms`, newest chunk first; `keep_going`
  // is asked before each chunk with that chunk's newest time.
  absl::Status ScanPointsLocked(
      int64_t metric_id, int64_t since_ms, int64_t until_ms,
      absl::FunctionRef<absl::Status(absl::string_view packed)> visit,
      absl::FunctionRef<bool(int64_t chunk_max_time_ms)> keep_going)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  sqlite3* const db_;
  const std::string path_;
  // OK until a background check finds the file damaged.
  absl::Status damaged_ ABSL_GUARDED_BY(mu_);
  StatementCache statements_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int64_t> node_ids_ ABSL_GUARDED_BY(mu_);
  // node_hash_map: readers hold pointers to the names across insertions.
  absl::node_hash_map<int64_t, std::string> node_names_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int64_t> run_keys_ ABSL_GUARDED_BY(mu_);
  absl::node_hash_map<int64_t, std::string> run_ids_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int64_t> metric_ids_ ABSL_GUARDED_BY(mu_);
  // (benchmark, unit, params, measured keys) -> sample_kinds id; the key is
  // the four joined with their lengths, built in kind_key_.
  absl::flat_hash_map<std::string, SampleKind> sample_kinds_ ABSL_GUARDED_BY(mu_);
  std::string kind_key_ ABSL_GUARDED_BY(mu_);
  // A sample's stored measured values, bound until its insert has run.
  std::string measured_ ABSL_GUARDED_BY(mu_);
  // Size of recent_points; -1 when not known (read on next use).
  int64_t recent_points_ ABSL_GUARDED_BY(mu_) = -1;
  int64_t recent_rows_ ABSL_GUARDED_BY(mu_) = -1;
  // Whether the schema has metric_day_summaries (a test's older migration
  // list may not); set by BuildPendingDaySummaries.
  bool has_day_summaries_ ABSL_GUARDED_BY(mu_) = false;
  // Whether samples has the compact layout (sample_kinds, measured values;
  // schema 12); false only under a test's older migration list, whose files
  // the ingest path then writes in the layout before schema 11. Set by
  // ReadSamplesLayout, which refuses schema 11 itself.
  bool compact_samples_ ABSL_GUARDED_BY(mu_) = false;
  // The background check, if one was started; stopped first on destruction
  // (it calls MarkDamaged).
  std::unique_ptr<HistoryVerifier> verifier_;
};

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_SQLITE_STORE_IMPL_H_
