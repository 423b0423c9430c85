// storage/postgres_store_impl.h — the PostgreSQL implementation of Store.
//
// One connection, guarded by one mutex, as SQLite's: a controller's calls
// are short, and several controllers each hold their own. Names that
// samples repeat (node, run, metric) are integer keys, resolved by the
// server in the statements themselves (no client-side cache: another
// controller may write). Messages and lists are stored as their bytes
// (storage/stored_messages.h). Text keys that are listed in order are
// COLLATE "C", so the order is bytes', whatever the database's locale, as
// SQLite's.
//
// One class, its member functions defined by domain: postgres_store.cc
// (opening, migrating, the leader lease, transactions, integrity; the
// schema's steps are postgres_schema.h), postgres_nodes.cc,
// postgres_runs.cc (runs, tasks, task logs), postgres_samples.cc (reports,
// sample reads, ranking points, day summaries, retention),
// postgres_catalog.cc (metric descriptors, prices, schedules) and
// postgres_security.cc (API tokens, settings, audit, node identities,
// reliability).
#ifndef FLEETBENCH_STORAGE_POSTGRES_STORE_IMPL_H_
#define FLEETBENCH_STORAGE_POSTGRES_STORE_IMPL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "storage/postgres_connection.h"
#include "storage/postgres_store.h"
#include "storage/store.h"

namespace fleetbench::storage {

class PostgresStore final : public Store {
 public:
  explicit PostgresStore(std::unique_ptr<PgConnection> conn);
  ~PostgresStore() override;
  PostgresStore(const PostgresStore&) = delete;
  PostgresStore& operator=(const PostgresStore&) = delete;

  // Creates or migrates the schema (OpenPostgresStore calls it).
  absl::Status Migrate();
  // Takes the leader lease as `options` say, and keeps it: taken again on
  // each reconnect, checked every lease_check_interval (OpenPostgresStore
  // calls it when options.lead).
  absl::Status Lead(const PostgresOptions& options);

  absl::Status UpsertNode(const NodeRecord& node) override;
  absl::Status TouchNode(const std::string& name, absl::Time seen) override;
  absl::StatusOr<std::vector<NodeRecord>> ListNodes() override;
  absl::StatusOr<bool> RemoveNode(const std::string& name, absl::Time when) override;
  absl::StatusOr<int> CountFactsVersions(const std::string& name) override;
  absl::StatusOr<std::vector<FactsVersion>> ListFactsVersions(const std::string& name,
                                                              int limit) override;

  absl::Status CreateRun(const RunRecord& run, const std::vector<TaskRecord>& tasks) override;
  absl::StatusOr<RunRecord> GetRun(const std::string& run_id) override;
  absl::StatusOr<std::vector<RunRecord>> ListRuns(int limit,
                                                  const std::string& after_run_id) override;
  absl::Status SetRunState(const std::string& run_id, const std::string& state,
                           absl::Time finished) override;
  absl::StatusOr<std::map<std::string, int64_t>> TaskLogSizesOfRun(
      const std::string& run_id) override;
  absl::StatusOr<std::map<std::string, std::string>> TaskLogs(
      const std::vector<std::string>& task_ids) override;
  absl::StatusOr<std::vector<TaskRecord>> ListTasks(const std::string& run_id) override;
  absl::Status AddTasks(const std::string& run_id, const std::vector<TaskRecord>& tasks) override;
  absl::StatusOr<std::vector<TaskRecord>> ListTasksInStates(
      const std::vector<v1::TaskState>& states) override;
  absl::StatusOr<TaskRecord> GetTask(const std::string& task_id) override;
  absl::Status UpdateTask(const TaskRecord& task) override;

  absl::StatusOr<int> CommitReports(const std::vector<ReportWrite>& reports) override;

  absl::StatusOr<std::vector<v1::Sample>> ListSamplesForRun(const std::string& run_id) override;
  absl::StatusOr<std::vector<v1::Sample>> ListSamplesForRunPage(
      const std::string& run_id, int limit, const std::optional<RunSampleCursor>& after,
      std::vector<RunSampleCursor>* cursors) override;
  absl::StatusOr<std::vector<v1::Sample>> History(
      const std::string& node, const std::string& metric, int limit,
      const std::optional<SampleCursor>& after) override;
  absl::StatusOr<std::vector<MetricPoint>> MetricPointsSince(const std::string& metric,
                                                             absl::Time since) override;
  absl::StatusOr<MetricPointTable> MetricPointTableSince(const std::string& metric,
                                                         absl::Time since) override;
  absl::StatusOr<MetricPointTable> MetricPointTableBetween(const std::string& metric,
                                                           absl::Time since,
                                                           absl::Time until) override;
  absl::StatusOr<MetricPointTable> MetricPointTableOfNewestRuns(const std::string& metric,
                                                                absl::Time since,
                                                                int max_runs_per_node,
                                                                size_t fleet_nodes) override;
  absl::StatusOr<DaySummaryTable> DaySummariesSince(const std::string& metric,
                                                    int64_t first_day) override;
  absl::StatusOr<int64_t> CountSamples() override;
  absl::Status CheckIntegrity() override;
  absl::Status BackupTo(const std::string& dest_path, int step_size) override;
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
  absl::StatusOr<std::vector<v1::MetricDescriptor>> ListMetricDescriptors() override;
  absl::StatusOr<v1::MetricDescriptor> GetMetricDescriptor(const std::string& name) override;

  absl::StatusOr<PriceImport> ImportPrices(const std::vector<v1::CatalogPrice>& prices,
                                           absl::Time imported) override;
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
  // One statement; `what` labels a failure.
  absl::StatusOr<PgRows> Exec(absl::string_view sql, const std::vector<PgParam>& params,
                              absl::string_view what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (lead_lost_) return LostLeadError();
    return conn_->Exec(sql, params, what);
  }
  static absl::Status LostLeadError();
  // Runs `body` between BEGIN and COMMIT; rolls back when either fails.
  absl::Status InTransaction(absl::string_view what, absl::FunctionRef<absl::Status()> body)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The run's key; NOT_FOUND for an unknown run.
  absl::StatusOr<int64_t> RunKeyLocked(const std::string& run_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status InsertTasksLocked(int64_t run_key, const std::vector<TaskRecord>& tasks)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status UpdateTaskLocked(const TaskRecord& task) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The points of `metric` in [since, until), as a table.
  absl::StatusOr<MetricPointTable> PointTableLocked(const std::string& metric, int64_t since_ms,
                                                    std::optional<int64_t> until_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Whether this connection holds the lease: pg_try_advisory_lock.
  static absl::StatusOr<bool> TryLease(PgConnection& conn);
  void LostLead();

  absl::Mutex mu_;
  const std::unique_ptr<PgConnection> conn_ ABSL_PT_GUARDED_BY(mu_);
  // The lease's check, while leading.
  std::function<void()> lost_lead_;
  std::atomic<bool> lead_lost_ = false;
  absl::Notification stop_;
  std::thread lease_checker_;
};

// Times are stored as Unix milliseconds; InfinitePast and InfiniteFuture
// saturate to the int64 limits, so they bound queries as they are.
inline int64_t PgMillis(absl::Time t) { return absl::ToUnixMillis(t); }
inline absl::Time PgTime(int64_t ms) { return absl::FromUnixMillis(ms); }
// NULL for an absent time (InfinitePast / InfiniteFuture by the record's
// convention), the milliseconds otherwise.
PgParam PgOptionalMillis(std::optional<absl::Time> t);

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_POSTGRES_STORE_IMPL_H_
