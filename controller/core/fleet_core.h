// controller/core/fleet_core.h — the controller's domain core.
//
// Owns the registry of nodes (online/offline by heartbeat), the run
// lifecycle (queued -> dispatched -> running -> succeeded | failed | skipped
// | cancelled | lost) and the ingest of results into the Store. Knows nothing
// of gRPC: the services in agent_gateway_service.* and fleet_service.* turn
// wire calls into calls here.
//
// Layout: FleetCore is the actor, the facade users and agents call, and
// the one place where the parts meet. It holds no domain state of its own:
// each part is a class with its contract in its header, its own state and
// its own tests, and knows no other part; FleetCore's handlers combine
// them. The parts:
//   the live fleet, on the actor thread: node_sessions.h (who is
//     connected, online, and what their hellos said), declared_metrics.h
//     (the metric descriptors agents declare), live_runs.h (unfinished
//     runs and tasks, what each waits for, the ends not yet stored),
//     running_groups.h (groups with a member not ended, each with its
//     group_rendezvous.h relay), store_retry.h (the store-failure episode
//     and the reports it holds);
//   the read views, over the store only, any thread: history_view.h (runs,
//     a node's samples, facts history), rank_view.h (rank, cost of work),
//     findings_view.h (findings, variance), exposition_view.h (/metrics);
//   reliability_ledger.h (time online and interruptions, on their way to
//     the store), run_interruptions.h (those an ended run implies) and
//     reliability_view.h (their read);
//   price_book.h (the price catalog), schedule_book.h (schedules),
//   sample_retention.h (retention), history_backup.h (backups).
// The rules that span parts are FleetCore's, one file each:
// fleet_core_sessions.cc (hellos, messages, disconnects, the sweep),
// fleet_core_node_removal.cc, fleet_core_dispatch.cc (dispatch and pairs),
// fleet_core_runs.cc (start, cancel, a task's end, a run's state),
// fleet_core_ingest.cc, fleet_core_retry.cc, fleet_core_views.cc (ListNodes,
// GetRun), fleet_core_groups.cc and fleet_core_relay.cc (who may use a
// relay), fleet_core_reliability.cc (the reliability read, and rank and
// cost for a job size: the ranking with each group's interruption rate).
// A new capability adds a part and the lines that call it.
//
// Threading: one actor thread applies every state change in order; callers
// post events and return at once (agent side) or wait for the answer (user
// side). Store writes happen only on the actor thread, never on a gRPC
// reactor thread; the read views read the store from the caller's thread
// so a long query does not stall ingest. Consecutive
// reports are committed in one transaction (group commit) and acknowledged
// only after the commit returned OK.
//
// Metrics: agents declare their plugins' metrics in their hellos; the core
// stores each descriptor (unit, direction, description, benchmark) and Rank
// takes the unit and direction from the stored one.
//
// Store failures: a write that fails (a full disk) is never acknowledged
// and never forgotten. Reports are held in memory, task ends and run states
// are kept as pending writes, and all are retried with backoff until the
// store takes them (fleet_core_retry.cc); while that lasts ListNodes and
// GetStats say so and the log has one line when it starts and one when it
// ends.
//
// Late reports: a report for a task that already ended keeps its samples;
// a final report for a task declared lost (its agent was unreachable past
// the heartbeat timeout) settles the task from the report, noting that it
// came late, and the run's state is recomputed (docs/protocol.md, "Late final reports").
//
// Groups (fleet_core_groups.cc, docs/collectives.md): in a run with group options,
// the collective benchmarks become group tasks, one per member node
// (controller/core/group_plan.h), dispatched all at once when every member's
// node is idle; the core is their rendezvous (a key-value relay over the
// agent streams, scoped to the group, dropped when it ends) and keeps one
// deadline per group: a member that fails, disconnects or misses it has
// the others cancelled, and every member's reason names who was at fault.
// When all groups of a run ended, the next pass (PlanNextGroups) is added.
//
// Prices (rank_view.h, price_book.h) and schedules (schedule_book.h): as
// their parts' headers say.
//
// Errors: user calls return absl::Status with codes chosen to map 1:1 to
// gRPC: INVALID_ARGUMENT for bad requests, NOT_FOUND for unknown runs or
// nodes and for ranking a metric no agent declared, FAILED_PRECONDITION
// when no node can take the run.
#ifndef FLEETBENCH_CONTROLLER_CORE_FLEET_CORE_H_
#define FLEETBENCH_CONTROLLER_CORE_FLEET_CORE_H_

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "controller/core/agent_link.h"
#include "controller/core/caller_deadline.h"
#include "controller/core/declared_metrics.h"
#include "controller/core/exposition_view.h"
#include "controller/core/findings_view.h"
#include "controller/core/fleet_options.h"
#include "controller/core/group_plan.h"
#include "controller/core/group_rendezvous.h"
#include "controller/core/history_backup.h"
#include "controller/core/history_view.h"
#include "controller/core/latency_histogram.h"
#include "controller/core/live_runs.h"
#include "controller/core/node_sessions.h"
#include "controller/core/price_book.h"
#include "controller/core/rank_view.h"
#include "controller/core/reliability_ledger.h"
#include "controller/core/reliability_view.h"
#include "controller/core/running_groups.h"
#include "controller/core/sample_retention.h"
#include "controller/core/pending_report.h"
#include "controller/core/schedule_book.h"
#include "controller/core/store_retry.h"
#include "fleetbench/v1/agent.pb.h"
#include "fleetbench/v1/finding.pb.h"
#include "fleetbench/v1/history.pb.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/price.pb.h"
#include "fleetbench/v1/rank.pb.h"
#include "fleetbench/v1/reliability.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "fleetbench/v1/schedule.pb.h"
#include "fleetbench/v1/variance.pb.h"
#include "storage/store.h"

namespace fleetbench::controller {


class FleetCore {
 public:
  // `store` and `clock` must outlive the core.
  FleetCore(storage::Store* store, Clock* clock, FleetOptions options);
  ~FleetCore();
  FleetCore(const FleetCore&) = delete;
  FleetCore& operator=(const FleetCore&) = delete;

  // Loads unfinished tasks and the stored metric descriptors from the
  // store (after a restart) and starts the actor thread.
  absl::Status Start();
  // Stops the actor; pending events are dropped (they are not acked, so
  // agents resend them).
  void Stop();

  // --- Agent side: return at once; effects happen on the actor thread. ---
  // A stream said hello. The core answers with Welcome through `link`.
  // `peer_host` is where the stream came from ("127.0.0.1", "[::1]"), the
  // address peers use unless the hello advertises another.
  void OnHello(std::shared_ptr<AgentLink> link, v1::Hello hello, std::string peer_host = "");
  void OnAgentMessage(const std::shared_ptr<AgentLink>& link,
                      v1::AgentMessage message);
  void OnDisconnect(const std::shared_ptr<AgentLink>& link);
  // The node's identity was revoked (its streams are being closed): an
  // interruption of kind revoked, and no `offline` one when it goes silent.
  void OnNodeRevoked(const std::string& node);

  // --- User side: block until the actor answered, or until `deadline`
  // (the caller's gRPC deadline), after which they return
  // DEADLINE_EXCEEDED; a call still queued at its deadline is dropped
  // unapplied. ---
  absl::StatusOr<v1::ListNodesResponse> ListNodes(
      absl::Time deadline = absl::InfiniteFuture());
  absl::StatusOr<v1::StartRunResponse> StartRun(
      const v1::StartRunRequest& request, absl::Time deadline = absl::InfiniteFuture());
  absl::StatusOr<v1::Run> GetRun(const v1::GetRunRequest& request,
                                 absl::Time deadline = absl::InfiniteFuture());
  absl::Status CancelRun(const std::string& run_id,
                         absl::Time deadline = absl::InfiniteFuture());
  // Takes a node out of the fleet (Store::RemoveNode). NOT_FOUND for an
  // unknown node; FAILED_PRECONDITION while it is online (it would be back
  // at its next hello) or has a task queued or in flight.
  absl::StatusOr<v1::RemoveNodeResponse> RemoveNode(
      const std::string& name, absl::Time deadline = absl::InfiniteFuture());

  // --- Reads of the store alone, on the caller's thread: each is one call
  // into its part (history_view.h, rank_view.h, findings_view.h,
  // exposition_view.h, price_book.h, schedule_book.h), whose header has
  // its contract and errors. ---
  absl::StatusOr<v1::ListRunsResponse> ListRuns(
      const v1::ListRunsRequest& request, absl::Time deadline = absl::InfiniteFuture()) {
    return history_view_.ListRuns(request, deadline);
  }
  absl::StatusOr<v1::HistoryResponse> History(
      const v1::HistoryRequest& request, absl::Time deadline = absl::InfiniteFuture()) {
    return history_view_.History(request, deadline);
  }
  absl::StatusOr<std::vector<storage::FactsVersion>> FactsHistory(
      const std::string& node, int limit, absl::Time deadline = absl::InfiniteFuture()) {
    return history_view_.FactsHistory(node, limit, deadline);
  }
  // With a job shape, the ranking (or cost) for a job of that many nodes:
  // rank_view.h's, with each group's goodput from reliability_view.h
  // (controller/ranking/job_goodput.h); INVALID_ARGUMENT for a bad shape.
  absl::StatusOr<v1::RankResponse> Rank(const v1::RankRequest& request,
                                        absl::Time deadline = absl::InfiniteFuture());
  absl::StatusOr<v1::CostResponse> Cost(const v1::CostRequest& request,
                                        absl::Time deadline = absl::InfiniteFuture());
  // reliability_view.h's read, after what the ledger holds was written
  // (so a read sees the time online up to now).
  absl::StatusOr<v1::ReliabilityResponse> Reliability(
      const v1::ReliabilityRequest& request, absl::Time deadline = absl::InfiniteFuture());
  absl::StatusOr<v1::ListFindingsResponse> ListFindings(
      const v1::ListFindingsRequest& request, absl::Time deadline = absl::InfiniteFuture()) {
    return findings_view_.ListFindings(request, deadline);
  }
  absl::StatusOr<v1::VarianceResponse> Variance(
      const v1::VarianceRequest& request, absl::Time deadline = absl::InfiniteFuture()) {
    return findings_view_.Variance(request, deadline);
  }
  using LatestMeasurements = controller::LatestMeasurements;
  absl::StatusOr<LatestMeasurements> LatestSamples(absl::Time deadline = absl::InfiniteFuture()) {
    return exposition_view_.LatestSamples(deadline);
  }
  absl::StatusOr<std::map<std::string, int64_t>> CountRunsByState(
      absl::Time deadline = absl::InfiniteFuture()) {
    return exposition_view_.CountRunsByState(deadline);
  }
  absl::StatusOr<v1::ListPricesResponse> ListPrices(
      absl::Time deadline = absl::InfiniteFuture()) {
    return price_book_.List(deadline);
  }
  absl::StatusOr<v1::ListScheduleFiringsResponse> ListScheduleFirings(
      const v1::ListScheduleFiringsRequest& request,
      absl::Time deadline = absl::InfiniteFuture()) {
    return schedules_.ListFirings(request, deadline);
  }
  // A consistent copy of the whole history (history_backup.h).
  absl::StatusOr<std::string> BackupHistory() { return backup_.Copy(); }

  // --- Changes on the actor, one call into their part: the price catalog
  // (price_book.h: parsed on the caller's thread, stored on the actor) and
  // schedules (schedule_book.h). ---
  absl::StatusOr<v1::ImportPricesResponse> ImportPrices(
      const v1::ImportPricesRequest& request, absl::Time deadline = absl::InfiniteFuture());
  absl::StatusOr<v1::AddScheduleResponse> AddSchedule(
      const v1::AddScheduleRequest& request, absl::Time deadline = absl::InfiniteFuture());
  absl::StatusOr<v1::ListSchedulesResponse> ListSchedules(
      absl::Time deadline = absl::InfiniteFuture());
  absl::Status RemoveSchedule(const std::string& name,
                              absl::Time deadline = absl::InfiniteFuture());
  absl::StatusOr<v1::RunScheduleResponse> RunSchedule(
      const std::string& name, absl::Time deadline = absl::InfiniteFuture());

  // Counters for /metrics and benchmarks.
  struct Stats {
    int64_t samples_stored = 0;
    int64_t samples_duplicate = 0;
    int64_t reports_committed = 0;
    int64_t commits = 0;
    int nodes_online = 0;
    // StoreRetry::Snapshot: set while store writes fail: the last error,
    // since when, and how many reports wait for the store unacknowledged.
    std::string store_error;
    absl::Time store_failing_since = absl::InfinitePast();
    int64_t reports_held = 0;
    int64_t store_failures = 0;
    // How long each successful group commit of reports took (the store
    // call only, real time), for /metrics.
    LatencyHistogram ingest_commit_latency{IngestCommitBuckets()};
    // ScheduleBook::FiringCounts.
    std::map<std::pair<std::string, std::string>, int64_t> schedule_firings;
    // SampleRetention::samples_pruned.
    int64_t samples_pruned = 0;
  };
  Stats GetStats();

 private:
  using Closure = std::function<void()>;
  using Event = std::variant<Closure, PendingReport>;

  // --- The actor (fleet_core.cc). ---
  void Post(Event event);
  // Runs `fn` on the actor thread and waits for it until `deadline`.
  template <typename T>
  T Call(std::function<T()> fn, absl::Time deadline);
  void ActorLoop();

  // All below run on the actor thread only.

  // --- Node sessions (fleet_core_sessions.cc). ---
  void HandleHello(std::shared_ptr<AgentLink> link, v1::Hello hello, std::string peer_host);
  void HandleMessage(const std::shared_ptr<AgentLink>& link, v1::AgentMessage message);
  void HandleDisconnect(const std::shared_ptr<AgentLink>& link);
  // A node going away for a known reason: one interruption of that kind
  // per occasion (`key`; "" for one that cannot repeat), and no new work
  // for it (NodeSessions::MarkDeparting).
  void HandleDeparture(const std::string& node, v1::InterruptionKind kind, std::string detail,
                       const std::string& key);
  void HandleNodeRevoked(const std::string& node);
  void Sweep();
  // Ends the tasks whose final report a hello promised (it listed them as
  // finished) but that did not come within the heartbeat timeout.
  void ExpirePromisedReports(absl::Time now);

  // --- Taking nodes out of the fleet (fleet_core_node_removal.cc). ---
  absl::StatusOr<v1::RemoveNodeResponse> HandleRemoveNode(const std::string& name);
  // Removes the nodes past options_.node_expiry (see FleetOptions).
  void ExpireNodes(absl::Time now);

  // --- Dispatch and pairing (fleet_core_dispatch.cc). ---
  void TryDispatch();
  // Sends a task's RunTask to its node.
  void SendRunTask(const storage::TaskRecord& task);
  void HandlePortPublished(const std::string& node, const v1::PortPublished& port);
  // After `task` ended: a pair partner that can no longer run ends too.
  void SettlePairPartner(const storage::TaskRecord& task);
  bool IsPairClient(const storage::TaskRecord& task) const;
  // The other half of a pair while it is unfinished, else nullptr.
  storage::TaskRecord* PairPartner(const storage::TaskRecord& task);

  // --- Group tasks (fleet_core_groups.cc) and their rendezvous relay
  // (group_rendezvous.h; fleet_core_relay.cc checks who may use it). ---
  // StartRun's part: which of the request's benchmarks run as groups over
  // `nodes` (INVALID_ARGUMENT / FAILED_PRECONDITION as HandleStartRun says),
  // and the groups; `grouped` gets those benchmarks' specs.
  absl::StatusOr<std::vector<GroupPlan>> PlanGroupRun(const v1::StartRunRequest& request,
                                                     const std::vector<std::string>& nodes,
                                                     std::vector<v1::BenchmarkSpec>* grouped);
  // One task per member of each plan, queued, in rank order.
  std::vector<storage::TaskRecord> MakeGroupTasks(const std::string& run_id,
                                                  const std::vector<GroupPlan>& plans,
                                                  const std::vector<v1::BenchmarkSpec>& specs);
  // Start(): groups that were in flight when the controller stopped lost
  // their relay state; their members end failed.
  void FailInterruptedGroups();
  bool NodeReady(const std::string& node) const;
  // TryDispatch's part for a queued group member: dispatches its whole
  // group when every member's node is ready, else reserves the members'
  // nodes (when all are connected) so later tasks do not starve the group.
  void TryDispatchGroup(const storage::TaskRecord& member, std::set<std::string>& reserved);
  // The group's deadline from now: the sum of its benchmarks' timeouts.
  absl::Duration GroupTimeout(const storage::TaskRecord& member) const;
  void FillGroupAssignment(const storage::TaskRecord& task, v1::GroupAssignment* group) const;
  void HandleKvRequest(const std::shared_ptr<AgentLink>& link, const std::string& node,
                       const v1::KvRequest& request);
  // After a member ended: fails the group when it did not succeed; ends the
  // group when no member is left; plans the run's next pass when no group
  // of the run is left.
  void SettleGroup(const storage::TaskRecord& ended);
  void FailGroup(const std::string& group_id, const std::string& reason,
                 const std::set<std::string>& at_fault);
  void AddNextGroupPass(const std::string& run_id);
  // Sweep's part: relay waits and group deadlines that passed.
  void SweepGroups(absl::Time now);
  // Rank 0's first `.busbw_GBps` sample becomes the group's headline.
  static void NoteGroupHeadline(storage::TaskRecord& task, const v1::Report& report);
  // The groups among `tasks` (a run's, in creation order, newest state),
  // in plan order.
  static std::vector<v1::GroupResult> GroupResults(const std::vector<storage::TaskRecord>& tasks);
  // A run's tasks as the store holds them, with the in-memory ones newer.
  absl::StatusOr<std::vector<storage::TaskRecord>> NewestTasks(const std::string& run_id);

  // --- Run lifecycle (fleet_core_runs.cc). ---
  absl::StatusOr<v1::StartRunResponse> HandleStartRun(const v1::StartRunRequest& request);
  // options_.validate_spec on every spec; `pairwise` names the benchmarks
  // that run as pairs.
  absl::Status ValidateSpecs(const v1::StartRunRequest& request,
                             const std::set<std::string>& pairwise) const;
  absl::Status HandleCancelRun(const std::string& run_id);
  void FinishTask(storage::TaskRecord& task, v1::TaskState state,
                  const std::string& reason);
  void UpdateRunState(const std::string& run_id);
  // The run ended: the interruptions its results imply (a critical node
  // finding, a bad node by isolation; run_interruptions.h), to the ledger.
  void NoteRunInterruptions(const storage::RunRecord& run,
                            const std::vector<storage::TaskRecord>& tasks);
  // Stores a change to an unfinished task already made in memory. A failed
  // write is logged and otherwise safe to ignore: the in-memory task is what
  // this process dispatches and shows, and every write stores the whole
  // record, so the store catches up at the task's next one (at the latest
  // when it ends).
  void PersistTask(const storage::TaskRecord& task, std::string_view doing);

  // --- Ingest (fleet_core_ingest.cc). ---
  void CommitReports(std::vector<PendingReport>& batch);
  // After a report was stored: the metrics its benchmark declared as it ran
  // that the node's hello allows (Capability.dynamic_metric_prefix).
  void DeclareReportMetrics(const std::string& node, const v1::Report& report);
  // NOT_FOUND when the report's task is not in flight, PERMISSION_DENIED
  // when it is another node's. The envelope is checked apart: a refused
  // envelope for a task in flight still ends that task.
  absl::Status CheckReportInFlight(const std::string& node, const v1::Report& report) const;
  // Commits `batch` (CommitReports holds it instead while earlier reports
  // wait for the store, to keep their order).
  void CommitBatch(std::vector<PendingReport>& batch);
  enum class LateResult { kStored, kStoreFailed, kDrop };
  // A report for a task not in flight: stores its samples and, when it is
  // the final report of a task declared lost, settles the task from it.
  // kDrop (with `why`) when no ended task of this node's has its id.
  LateResult StoreLateReport(PendingReport& p, absl::Status* why);
  // Drops the samples the bounds refuse (and those dated past the allowed
  // clock skew), adding what was refused to p.refused.
  void DropRefused(PendingReport& p);
  // An ended task as this process knows it: a pending (unstored) end first,
  // else the store's record.
  absl::StatusOr<storage::TaskRecord> EndedTask(const std::string& task_id);
  // UpdateRunState for a run that may have ended already (a late report
  // changed one of its tasks): loaded from the store when not active.
  void RecomputeRun(const std::string& run_id);

  // --- Store failures (fleet_core_retry.cc). ---
  // Records a failed write: logged once per episode, retried with backoff.
  void NoteStoreFailure(const absl::Status& status, const std::string& doing);
  // After a successful write: ends the episode when nothing waits.
  void NoteStoreOk();
  bool HasStoreBacklog() const;
  void RetryStoreBacklog();

  // --- Reliability (fleet_core.cc, fleet_core_reliability.cc). ---
  // Writes what the reliability ledger holds, on the actor, waiting for it
  // until `deadline`: its interruptions, and its time online when the last
  // write of it is kReadUptimeAge old, so that readers drive at most one
  // write per that time. A failed write is the ledger's to retry.
  static constexpr absl::Duration kReadUptimeAge = absl::Seconds(5);
  void WriteReliabilityLedger(absl::Time deadline);

  // --- Live read views (fleet_core_views.cc). ---
  absl::StatusOr<v1::ListNodesResponse> HandleListNodes();
  absl::Status AddTaskLogs(const v1::GetRunRequest& request, v1::Run& out);
  absl::StatusOr<v1::Run> HandleGetRun(const v1::GetRunRequest& request);
  // ScheduleBook::Hooks over this core's runs and sessions.
  ScheduleBook::Hooks ScheduleHooks();

  storage::Store* const store_;
  Clock* const clock_;
  const FleetOptions options_;

  absl::Mutex queue_mu_;
  std::deque<Event> queue_ ABSL_GUARDED_BY(queue_mu_);
  bool stopping_ ABSL_GUARDED_BY(queue_mu_) = false;
  std::thread actor_;

  // The actor's timers.
  absl::Time next_sweep_;
  absl::Time next_node_expiry_ = absl::InfinitePast();

  // The parts (see Layout above).
  const HistoryView history_view_;
  const RankView rank_view_;
  const FindingsView findings_view_;
  const ExpositionView exposition_view_;
  const ReliabilityView reliability_view_;
  PriceBook price_book_;
  ScheduleBook schedules_;
  SampleRetention retention_;
  HistoryBackup backup_;
  StoreRetry store_retry_;
  NodeSessions sessions_;
  ReliabilityLedger ledger_;
  DeclaredMetrics declared_metrics_;
  LiveRuns live_;
  RunningGroups groups_;

  absl::Mutex stats_mu_;
  Stats stats_ ABSL_GUARDED_BY(stats_mu_);
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_FLEET_CORE_H_
