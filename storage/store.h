// storage/store.h — the history store.
//
// Owns: nodes (identity, labels, facts history), runs, node tasks with their
// benchmark outcomes, result samples, the descriptors (unit, direction)
// the agents declare for the metrics, the price catalog, and schedules with
// their firings. Everything the controller must not
// forget lives here; everything else (who is connected, live progress) is in
// memory in the controller.
//
// This header is the contract every backend keeps, in its own terms: no
// backend's words or types. A backend is opened by its own header
// (storage/sqlite_store.h: OpenSqliteStore) and proves the contract by
// passing the store contract suite (StoreContractTest in
// storage/store_test_util.h), which runs every test once per backend.
//
// Thread safety: a Store is safe to call from several threads (a backend
// may serialise them). Calls block on I/O, so the controller never calls
// them from a gRPC reactor callback.
//
// Transactions: a call that says "in one transaction" stores all of its
// effects or none; every write is durable when it returns OK, and a failed
// write leaves nothing of the call behind. Reads see every write that
// returned before them.
//
// Paging: a call that pages takes the place where the previous page ended
// (a cursor it handed out, or the last item's id) and returns the items
// after it in one stable order, so pages neither repeat nor skip items
// stored before the first page was read.
//
// Errors: absl::Status. NOT_FOUND for a missing run or node,
// INVALID_ARGUMENT for bad input, ALREADY_EXISTS for a duplicate run or
// task id, RESOURCE_EXHAUSTED when the backend is out of space (a full
// disk), UNAVAILABLE when it cannot be reached or another process holds
// its lock past the backend's wait, DATA_LOSS when what is stored is
// damaged, INTERNAL for any other failure of the backend (with its
// message), FAILED_PRECONDITION from an open for a history written by a
// newer build.
#ifndef FLEETBENCH_STORAGE_STORE_H_
#define FLEETBENCH_STORAGE_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/value_sketch.h"
#include "fleetbench/v1/agent.pb.h"
#include "fleetbench/v1/facts.pb.h"
#include "fleetbench/v1/metric.pb.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/price.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "fleetbench/v1/result.pb.h"
#include "fleetbench/v1/schedule.pb.h"
#include "storage/history_rows.h"

namespace fleetbench::storage {

struct NodeRecord {
  std::string name;
  std::map<std::string, std::string> labels;
  v1::NodeFacts facts;
  std::string agent_version;
  absl::Time first_seen;
  absl::Time last_seen;
  // Taken out of the fleet (RemoveNode) but kept for its history. Only
  // ListNodes sets it; the node list users see leaves such nodes out.
  bool removed = false;
};

// One stored version of a node's facts and when it was first seen (the
// hello that brought it).
struct FactsVersion {
  absl::Time seen;
  v1::NodeFacts facts;
};

// Where a page of History ended: its last sample's time and id.
struct SampleCursor {
  int64_t time_ms = 0;
  std::string id;
};

// Where a page of a run's samples ended, in the store's own order (the
// keys it gave the node and the metric, then time and id). Valid for the
// store that made it; callers carry it, they do not read it.
struct RunSampleCursor {
  int64_t node_key = 0;
  int64_t metric_key = 0;
  int64_t time_ms = 0;
  std::string id;
};

struct RunRecord {
  std::string run_id;
  std::string state;  // queued, running, succeeded, failed, cancelled
  absl::Time created;
  absl::Time finished;  // absl::InfinitePast() while not finished
  std::vector<v1::BenchmarkSpec> benchmarks;
  uint32_t max_parallel = 0;
  std::string suite;
  // A group run (docs/collectives.md): its options, and the nodes it was started on in
  // their stable order (what the next pass of groups is planned over).
  v1::GroupOptions group;
  std::vector<std::string> group_nodes;
};

struct TaskRecord {
  std::string task_id;
  std::string run_id;
  std::string node;
  v1::TaskState state = v1::TASK_STATE_QUEUED;
  std::string reason;
  std::vector<v1::BenchmarkOutcome> outcomes;
  absl::Time updated;
  // The task's own benchmarks; empty means the run's. Set for the two
  // halves of a pairwise benchmark (role=server / role=client).
  std::vector<v1::BenchmarkSpec> benchmarks;
  // For a pair: the other half's task id.
  std::string peer_task_id;
  // For a member of a group task: its group, its rank, the
  // member nodes in rank order and the pass that planned the group (these
  // never change); group_id is empty for any other task.
  std::string group_id;
  int group_rank = 0;
  std::vector<std::string> group_members;
  int group_pass = 0;
  // Rank 0 of a group: the first `.busbw_GBps` sample its reports carried
  // (the group's headline); "" / 0 until one came. Updated with the task.
  std::string group_metric;
  double group_value = 0;
};

// One value per (node, run) for ranking: a node's sample for the metric.
struct MetricPoint {
  std::string node;
  std::string run_id;
  double value = 0;
  absl::Time time;
};

// MetricPointsSince without two strings per point: each node name and run id
// is stored once and points refer to them by index. For a window of a million
// points this skips two million string copies, most of the time of
// MetricPointsSince (docs/storage.md).
struct MetricPointTable {
  struct Point {
    uint32_t node = 0;  // index into `nodes`
    uint32_t run = 0;   // index into `run_ids`
    double value = 0;
    absl::Time time;
  };
  std::vector<std::string> nodes;
  std::vector<std::string> run_ids;
  std::vector<Point> points;
};

// Days of the history's day summaries: UTC days since 1970-01-01.
inline constexpr int64_t kMillisPerDay = 86'400'000;

inline int64_t UtcDayOf(int64_t unix_ms) {
  return unix_ms >= 0 ? unix_ms / kMillisPerDay : -((-unix_ms - 1) / kMillisPerDay) - 1;
}

// One node's values of one metric on one UTC day (docs/storage.md, Day
// summaries): their sketch (exact count, min, max; percentiles within
// ValueSketch::kRelativeAccuracy) and when the first and last were measured.
struct DaySummary {
  uint32_t node = 0;  // index into DaySummaryTable::nodes
  int64_t day = 0;    // UtcDayOf
  ValueSketch values;
  absl::Time first;
  absl::Time last;
};
struct DaySummaryTable {
  std::vector<std::string> nodes;
  std::vector<DaySummary> days;  // one per (node, day), in no particular order
};

// An API token as stored (docs/security.md): never its secret, only the
// secret's SHA-256. The role is its name (controller/security/auth.h RoleName);
// the store does not interpret it.
struct ApiTokenRecord {
  std::string name;
  std::string token_id;     // the public lookup part of the token text
  std::string secret_hash;  // 32 bytes
  std::string role;
  absl::Time created;
  absl::Time expires = absl::InfiniteFuture();
  absl::Time revoked = absl::InfiniteFuture();    // InfiniteFuture: not revoked
  absl::Time last_used = absl::InfinitePast();    // InfinitePast: never used
};

// One mutating call of the user API: who, what, on what, how it ended.
struct AuditRecord {
  int64_t id = 0;  // set by the store, increasing in call order
  absl::Time time;
  std::string principal;
  std::string role;
  std::string rpc;
  std::string target;
  int code = 0;  // grpc/absl status code, 0 for OK
  std::string message;
};

// Reliability (docs/reliability.md): a node's time online on one UTC day,
// and one interruption of a node. The store does not interpret `kind`
// (common/api_enums.h InterruptionKindName names them).
struct NodeUptime {
  std::string node;
  int64_t day = 0;        // UtcDayOf
  int64_t online_ms = 0;  // >= 0
};
struct InterruptionRecord {
  std::string node;
  absl::Time time;
  std::string kind;
  std::string detail;  // what happened, for people
};

// A node's certificate identity (docs/security.md): what the CA issued to it.
struct NodeIdentityRecord {
  std::string node;
  std::string serial;       // hex
  std::string fingerprint;  // sha256:HEX
  absl::Time not_after;
  absl::Time enrolled;
  std::string enrolled_by;
  std::optional<absl::Time> revoked;
};

class Store {
 public:
  virtual ~Store() = default;

  // Creates or updates the node; appends its facts to the facts history when
  // they differ from the last stored facts.
  virtual absl::Status UpsertNode(const NodeRecord& node) = 0;
  virtual absl::Status TouchNode(const std::string& name, absl::Time seen) = 0;
  // Every node, removed ones included (for their results' labels).
  virtual absl::StatusOr<std::vector<NodeRecord>> ListNodes() = 0;
  // Takes a node out of the fleet (`fleetbench nodes rm`, node expiry).
  // Its facts history is deleted. A node that ever had a task keeps its row
  // and labels, marked removed at `when`, so its runs, samples and rankings
  // stay readable under its name: returns true. One that never had a task
  // (and so has no samples) is deleted whole: returns false. NOT_FOUND for
  // an unknown or already removed node. UpsertNode brings a node back.
  virtual absl::StatusOr<bool> RemoveNode(const std::string& name, absl::Time when) = 0;
  // Number of facts versions stored for the node (1 after the first hello).
  virtual absl::StatusOr<int> CountFactsVersions(const std::string& name) = 0;
  // The node's newest `limit` facts versions (all when limit <= 0), newest
  // first. NOT_FOUND for an unknown node.
  virtual absl::StatusOr<std::vector<FactsVersion>> ListFactsVersions(
      const std::string& name, int limit) = 0;

  // A run and its tasks, created in one transaction.
  virtual absl::Status CreateRun(const RunRecord& run,
                                 const std::vector<TaskRecord>& tasks) = 0;
  virtual absl::StatusOr<RunRecord> GetRun(const std::string& run_id) = 0;
  // Newest first; limit <= 0 lists all. With `after_run_id`, only the runs
  // that come after that one in this order (the next page); NOT_FOUND when
  // it names no run.
  virtual absl::StatusOr<std::vector<RunRecord>> ListRuns(
      int limit, const std::string& after_run_id = "") = 0;
  virtual absl::Status SetRunState(const std::string& run_id,
                                   const std::string& state,
                                   absl::Time finished) = 0;
  // In creation order.
  virtual absl::StatusOr<std::vector<TaskRecord>> ListTasks(
      const std::string& run_id) = 0;
  // Adds tasks to an existing run in one transaction (a group run's next
  // pass). NOT_FOUND for an unknown run, ALREADY_EXISTS for a task id that
  // is taken; INVALID_ARGUMENT for a task naming another run.
  virtual absl::Status AddTasks(const std::string& run_id,
                                const std::vector<TaskRecord>& tasks) = 0;
  // Tasks in any of `states`, oldest first, across all runs.
  virtual absl::StatusOr<std::vector<TaskRecord>> ListTasksInStates(
      const std::vector<v1::TaskState>& states) = 0;
  // The size in bytes of each log stored for the run's tasks
  // (CommitReports' task_log), by task id; tasks without one are absent.
  // NOT_FOUND for an unknown run. Reads no log text.
  virtual absl::StatusOr<std::map<std::string, int64_t>> TaskLogSizesOfRun(
      const std::string& run_id) = 0;
  // The logs of these tasks, by task id; a task without one is absent.
  virtual absl::StatusOr<std::map<std::string, std::string>> TaskLogs(
      const std::vector<std::string>& task_ids) = 0;
  // One task by id, whatever its run; NOT_FOUND when there is none.
  virtual absl::StatusOr<TaskRecord> GetTask(const std::string& task_id) = 0;
  // Replaces state, reason, outcomes, benchmarks, updated and the group
  // headline (group_metric, group_value) of the task with this task_id
  // (run, node, peer and group membership never change). NOT_FOUND when there is
  // none.
  virtual absl::Status UpdateTask(const TaskRecord& task) = 0;

  // Commits a report in one transaction: inserts samples whose id is new
  // (ids already stored are ignored), and when `task` is set, updates it
  // and stores `task_log` as its log when not empty (replacing one stored
  // before), dated task->updated. Returns how many samples were new.
  // Durable when it returns OK.
  // Every sample must name an existing run and node (INVALID_ARGUMENT
  // otherwise); a task that does not exist is NOT_FOUND. On any error nothing
  // of the call is stored. A full disk is RESOURCE_EXHAUSTED.
  struct ReportWrite {
    std::vector<v1::Sample> samples;
    const TaskRecord* task = nullptr;  // optional task update
    std::string task_log = "";         // with `task`: the end of its output
  };
  virtual absl::StatusOr<int> CommitReports(
      const std::vector<ReportWrite>& reports) = 0;

  // Grouped by node, then metric, each group in time order.
  virtual absl::StatusOr<std::vector<v1::Sample>> ListSamplesForRun(
      const std::string& run_id) = 0;
  // One page of the same: at most `limit` samples (> 0) that come after
  // `after` in that order, and in `cursors` each one's place (the cursor to
  // pass as `after` for the page that follows it). NOT_FOUND for an unknown
  // run.
  virtual absl::StatusOr<std::vector<v1::Sample>> ListSamplesForRunPage(
      const std::string& run_id, int limit, const std::optional<RunSampleCursor>& after,
      std::vector<RunSampleCursor>* cursors) = 0;
  // The node's newest `limit` samples of the metric (all when limit <= 0),
  // newest first (time, then id, descending). With `after`, only those
  // that come after it in this order (the next page). NOT_FOUND for an
  // unknown node; empty for an unknown metric.
  virtual absl::StatusOr<std::vector<v1::Sample>> History(
      const std::string& node, const std::string& metric, int limit,
      const std::optional<SampleCursor>& after = std::nullopt) = 0;
  // Every sample of `metric` with time >= since, for ranking, in no
  // particular order (InfinitePast: all of them).
  virtual absl::StatusOr<std::vector<MetricPoint>> MetricPointsSince(
      const std::string& metric, absl::Time since) = 0;
  // The same points as MetricPointsSince, in the compact form. The default
  // builds it from MetricPointsSince; a backend may read it directly.
  virtual absl::StatusOr<MetricPointTable> MetricPointTableSince(
      const std::string& metric, absl::Time since) {
    absl::StatusOr<std::vector<MetricPoint>> points =
        MetricPointsSince(metric, since);
    if (!points.ok()) return points.status();
    MetricPointTable table;
    std::map<std::string, uint32_t> nodes;
    std::map<std::string, uint32_t> runs;
    for (const MetricPoint& p : *points) {
      auto node =
          nodes.try_emplace(p.node, static_cast<uint32_t>(nodes.size())).first;
      if (node->second == table.nodes.size()) table.nodes.push_back(p.node);
      auto run =
          runs.try_emplace(p.run_id, static_cast<uint32_t>(runs.size())).first;
      if (run->second == table.run_ids.size()) table.run_ids.push_back(p.run_id);
      table.points.push_back({node->second, run->second, p.value, p.time});
    }
    return table;
  }
  // MetricPointTableSince bounded above too: the points with
  // since <= time < until.
  virtual absl::StatusOr<MetricPointTable> MetricPointTableBetween(
      const std::string& metric, absl::Time since, absl::Time until) = 0;
  // The points of `metric` with time >= since from each node's newest
  // `max_runs_per_node` runs, for judging (findings, variance, exposition)
  // in memory bounded by nodes x runs whatever the history's size. Points
  // are read newest-written first and a node's runs are the first
  // `max_runs_per_node` distinct runs met, which are its newest unless
  // samples of an older run were stored later. With `fleet_nodes` > 0 the
  // read stops once that many nodes have all their runs and what is left
  // was written a day before the oldest of them (a run's samples come
  // within its day). INVALID_ARGUMENT for max_runs_per_node < 1.
  virtual absl::StatusOr<MetricPointTable> MetricPointTableOfNewestRuns(
      const std::string& metric, absl::Time since, int max_runs_per_node,
      size_t fleet_nodes) = 0;
  // Every value of `metric` ever stored, samples removed by retention
  // included, summarised per node and UTC day, for days >= first_day:
  // O(nodes x days) rows whatever the number of samples. Values that are
  // not finite are counted in no sketch (ranking leaves them out too).
  virtual absl::StatusOr<DaySummaryTable> DaySummariesSince(const std::string& metric,
                                                            int64_t first_day) = 0;
  virtual absl::StatusOr<int64_t> CountSamples() = 0;

  // What the agents' plugins declare their metrics to be (name, unit,
  // direction, description, benchmark), as the newest declaration said.
  // Creates or replaces each descriptor by name, all in one transaction.
  // INVALID_ARGUMENT, with nothing stored, for an empty name, unit or
  // benchmark, or a direction that is neither higher- nor lower-is-better.
  virtual absl::Status UpsertMetricDescriptors(
      const std::vector<v1::MetricDescriptor>& descriptors) = 0;
  // Every declared metric, by name.
  virtual absl::StatusOr<std::vector<v1::MetricDescriptor>>
  ListMetricDescriptors() = 0;
  // NOT_FOUND when no plugin declared the metric (it may still have
  // samples: names are not descriptors).
  virtual absl::StatusOr<v1::MetricDescriptor> GetMetricDescriptor(
      const std::string& name) = 0;

  // The price catalog (docs/ranking.md). A row's key is (provider, region,
  // instance_type, effective_from). ImportPrices stores every row in one
  // transaction: a row whose key is stored replaces it, a new key is added,
  // stored rows not in the call stay (a later effective_from supersedes an
  // earlier one from that date; nothing is ever deleted by an import).
  // INVALID_ARGUMENT, with nothing stored, for an empty key field, a price
  // that is not finite and > 0, a currency that is not 3 letters, or a key
  // given twice in the call. imported_unix_ms is set to `imported`.
  struct PriceImport {
    int added = 0;
    int replaced = 0;
    int unchanged = 0;
  };
  virtual absl::StatusOr<PriceImport> ImportPrices(
      const std::vector<v1::CatalogPrice>& prices, absl::Time imported) = 0;
  // Every stored row, by provider, region, instance_type, effective_from.
  virtual absl::StatusOr<std::vector<v1::CatalogPrice>> ListPrices() = 0;

  // Schedules (docs/schedules.md): a definition, the newest cron time the
  // controller handled and the run of its newest started firing; and the
  // firings. CreateSchedule: ALREADY_EXISTS for a name taken,
  // INVALID_ARGUMENT for an empty name or cron. RemoveSchedule removes its
  // firings too; NOT_FOUND for an unknown name.
  struct ScheduleRecord {
    // name, cron, timezone, run and created_unix_ms.
    v1::Schedule schedule;
    absl::Time handled_until;
    std::string last_run_id;
  };
  virtual absl::Status CreateSchedule(const ScheduleRecord& schedule) = 0;
  // By name.
  virtual absl::StatusOr<std::vector<ScheduleRecord>> ListSchedules() = 0;
  virtual absl::Status RemoveSchedule(const std::string& name) = 0;
  // Stores a firing and, in the same transaction, moves the schedule's
  // handled_until to `handled_until` when given (never backwards) and its
  // last_run_id to the firing's run when it STARTED one. NOT_FOUND for an
  // unknown schedule.
  virtual absl::Status RecordFiring(const v1::ScheduleFiring& firing,
                                    std::optional<absl::Time> handled_until) = 0;
  // The schedule's newest `limit` firings (> 0), newest first. NOT_FOUND
  // for an unknown schedule.
  virtual absl::StatusOr<std::vector<v1::ScheduleFiring>> ListFirings(const std::string& name,
                                                                      int limit) = 0;
  // The firing that started the run; nullopt when none did (a run started
  // by hand, or one whose schedule was removed).
  virtual absl::StatusOr<std::optional<v1::ScheduleFiring>> FiringOfRun(
      const std::string& run_id) = 0;

  // API tokens (docs/security.md). CreateApiToken: INVALID_ARGUMENT for
  // an empty name, id or role or a hash that is not 32 bytes; a name held
  // by a revoked or expired token (at `now`) is taken over (its row is
  // replaced), one held by a live token is ALREADY_EXISTS, as is a token id
  // in use. RevokeApiToken: NOT_FOUND for an unknown name,
  // FAILED_PRECONDITION when already revoked; returns the revoked record.
  virtual absl::Status CreateApiToken(const ApiTokenRecord& token, absl::Time now) = 0;
  // By name.
  virtual absl::StatusOr<std::vector<ApiTokenRecord>> ListApiTokens() = 0;
  virtual absl::StatusOr<ApiTokenRecord> RevokeApiToken(const std::string& name,
                                                        absl::Time when) = 0;
  // Moves last_used forward (never back); NOT_FOUND for an unknown name.
  virtual absl::Status TouchApiToken(const std::string& name, absl::Time used) = 0;

  // Controller settings, a few small named values. nullopt when unset.
  virtual absl::StatusOr<std::optional<std::string>> GetSetting(const std::string& key) = 0;
  virtual absl::Status PutSetting(const std::string& key, const std::string& value) = 0;

  // The audit of mutating calls. AppendAudit stores `record` (its id is
  // assigned) and then keeps only the newest `keep` rows (keep > 0);
  // returns the id. ListAudit: rows with time >= since, newest first, at
  // most `limit` (> 0), only those with id < before_id when before_id > 0
  // (the next page).
  virtual absl::StatusOr<int64_t> AppendAudit(const AuditRecord& record, int64_t keep) = 0;
  virtual absl::StatusOr<std::vector<AuditRecord>> ListAudit(absl::Time since, int limit,
                                                             int64_t before_id = 0) = 0;
  // Writes a consistent copy of the whole history to `dest_path`, a file
  // that must not exist yet (ALREADY_EXISTS otherwise), that this backend
  // opens as a history. It copies in steps of `step_size` of its own units
  // (> 0; SQLite: pages), the store's other calls running between steps;
  // writes made meanwhile through this store are carried into the copy, so
  // it is the history as of its end. A failure removes what was written of
  // it. UNIMPLEMENTED for a backend whose copies its server's own tools make.
  virtual absl::Status BackupTo(const std::string& dest_path, int step_size) = 0;

  // Retention: removes at most `max_samples` (> 0) samples dated before
  // `before`, with what ranking reads of them, in one transaction, oldest
  // first, at a cost per call bounded whatever the history's size (SQLite:
  // from one ranking chunk of at most 65,536 points). Returns how many it
  // removed; 0 when none older is left. Runs, tasks, nodes and the day
  // summaries stay.
  virtual absl::StatusOr<int64_t> PruneSamplesBefore(absl::Time before, int max_samples) = 0;
  // The same for task logs: removes at most `max_logs` (> 0) logs dated
  // before `before` (a log is as old as its task's end), oldest first, in
  // one transaction; returns how many, 0 when none older is left.
  virtual absl::StatusOr<int64_t> PruneTaskLogsBefore(absl::Time before, int max_logs) = 0;

  // Reliability: adds each span's online_ms to its node's (node, day) and
  // stores the interruptions, all in one transaction. Nodes are names: a
  // node need not be stored, and removing one keeps its record.
  // INVALID_ARGUMENT, with nothing stored, for an empty node or kind or a
  // negative online_ms. Retention leaves both alone (a few rows per node
  // and day).
  virtual absl::Status RecordReliability(const std::vector<NodeUptime>& uptime,
                                         const std::vector<InterruptionRecord>& interruptions) = 0;
  // Each node's time online summed over the days >= first_day, in ms.
  virtual absl::StatusOr<std::map<std::string, int64_t>> UptimeSince(int64_t first_day) = 0;
  // How many interruptions of each kind each node had with time >= since:
  // node -> kind -> count.
  virtual absl::StatusOr<std::map<std::string, std::map<std::string, int64_t>>>
  InterruptionCountsSince(absl::Time since) = 0;
  // The interruptions with time >= since, newest first, at most `limit`
  // (> 0).
  virtual absl::StatusOr<std::vector<InterruptionRecord>> InterruptionsSince(absl::Time since,
                                                                            int limit) = 0;

  // The backend's whole check of what it stores (SQLite: integrity_check,
  // foreign_key_check, and its ranking points against the samples): OK, or
  // DATA_LOSS listing what failed. Reads the whole history.
  virtual absl::Status CheckIntegrity() = 0;

  // --- Node identities (docs/security.md). ---
  // Stores `identity` unless its node has a live (unrevoked) identity:
  // ALREADY_EXISTS then, in one transaction, so two enrollments racing for
  // one name cannot both win. A revoked row is replaced.
  virtual absl::Status EnrollNodeIdentity(const NodeIdentityRecord& identity) = 0;
  // The node's identity row, live or revoked; nullopt when it never enrolled.
  virtual absl::StatusOr<std::optional<NodeIdentityRecord>> GetNodeIdentity(
      const std::string& node) = 0;
  // Marks the live identity revoked at `when`; false when there is none.
  virtual absl::StatusOr<bool> RevokeNodeIdentity(const std::string& node, absl::Time when) = 0;
  // A renewal: `renewed` (its serial, fingerprint, not_after) becomes the
  // node's certificate when its live identity's certificate is still
  // `current_fingerprint`, in one statement; ABORTED otherwise (revoked,
  // re-enrolled or renewed meanwhile). Enrollment time and token stay.
  virtual absl::Status RenewNodeIdentity(const NodeIdentityRecord& renewed,
                                         const std::string& current_fingerprint) = 0;

  // --- Moving a history to another backend (storage/history_rows.h). ---
  // Hands the whole history to `sink`, table by table in HistoryTables()'
  // order, in batches of at most `batch_rows` (> 0) rows, as of one moment
  // (one read transaction). UNIMPLEMENTED for a backend that cannot.
  virtual absl::Status ExportHistory(const HistorySink& sink, int batch_rows) = 0;
  // Stores everything `source` hands over, in one transaction, into a
  // history that holds nothing yet: FAILED_PRECONDITION naming a table
  // that has rows. A failure (of the source too) stores none of it. The
  // store's own numbering goes on after the copied keys. Returns the rows
  // stored per table. UNIMPLEMENTED for a backend that cannot.
  virtual absl::StatusOr<std::map<std::string, int64_t>> ImportHistory(
      const HistorySource& source) = 0;
};

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_STORE_H_
