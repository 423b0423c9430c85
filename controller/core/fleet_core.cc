// FleetCore's actor (the event queue, the thread that drains it, Start and
// Stop) and its public entry points: agent-side calls post an event, user-side
// calls run on the actor and wait. What each event does lives beside its
// domain: fleet_core_sessions.cc, fleet_core_dispatch.cc, fleet_core_runs.cc,
// fleet_core_ingest.cc, fleet_core_views.cc, and the parts of their own.
#include "controller/core/fleet_core.h"

#include <algorithm>
#include <future>
#include <utility>
#include <type_traits>

#include "common/api_enums.h"

namespace fleetbench::controller {

FleetCore::FleetCore(storage::Store* store, Clock* clock, FleetOptions options)
    : store_(store),
      clock_(clock),
      options_(options),
      history_view_(store),
      rank_view_(store, clock, options_.rank_window),
      findings_view_(store, clock, options_.findings_window, options_.fleet_rules),
      exposition_view_(store, clock, options_.rank_window),
      reliability_view_(store, clock),
      price_book_(store, clock),
      schedules_(store, clock, {options_.schedule_grace, options_.schedule_settle},
                 ScheduleHooks()),
      retention_(store, {options_.retain_samples, options_.retention_interval,
                         options_.retention_batch}),
      backup_(store, options_.backup_dir),
      store_retry_({options_.store_retry_initial, options_.store_retry_max}),
      sessions_(options_.heartbeat_timeout),
      ledger_(store, options_.heartbeat_timeout),
      declared_metrics_(store) {}

FleetCore::~FleetCore() { Stop(); }

absl::Status FleetCore::Start() {
  auto unfinished = store_->ListTasksInStates(
      {v1::TASK_STATE_QUEUED, v1::TASK_STATE_DISPATCHED, v1::TASK_STATE_RUNNING});
  if (!unfinished.ok()) return unfinished.status();
  const absl::Time now = clock_->Now();
  for (storage::TaskRecord& task : *unfinished) {
    if (!live_.HasRun(task.run_id)) {
      auto run = store_->GetRun(task.run_id);
      if (!run.ok()) return run.status();
      live_.AddRun(*std::move(run));
    }
    // After a restart nobody is connected yet. Nodes whose task was in
    // flight get a heartbeat timeout and the agents' longest backoff,
    // counted from now, to come back.
    if (task.state != v1::TASK_STATE_QUEUED) {
      sessions_.ExpectBack(task.node, now,
                           options_.heartbeat_timeout + options_.agent_max_backoff);
    }
    live_.AddTask(std::move(task));
  }
  for (const auto& [id, task] : live_.tasks()) groups_.Register(task);
  FailInterruptedGroups();
  // A run's state is stored after its last task's end, in a transaction of
  // its own: a controller killed between the two leaves a run stored as
  // queued or running with no unfinished task, which no event would ever
  // settle. Settle such runs from their tasks now.
  absl::StatusOr<std::vector<storage::RunRecord>> runs = store_->ListRuns(/*limit=*/0);
  if (!runs.ok()) return runs.status();
  for (storage::RunRecord& run : *runs) {
    const std::optional<v1::RunState> state = RunStateFromName(run.state);
    const bool unfinished = state == v1::RUN_STATE_QUEUED || state == v1::RUN_STATE_RUNNING;
    if (!unfinished || live_.HasRun(run.run_id)) continue;
    const std::string run_id = run.run_id;
    live_.AddRun(std::move(run));
    UpdateRunState(run_id);
  }
  if (absl::Status loaded = declared_metrics_.Load(); !loaded.ok()) return loaded;
  if (absl::Status loaded = schedules_.Load(); !loaded.ok()) return loaded;
  next_sweep_ = now + options_.sweep_interval;
  actor_ = std::thread([this] { ActorLoop(); });
  return absl::OkStatus();
}

void FleetCore::Stop() {
  {
    absl::MutexLock lock(&queue_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (actor_.joinable()) actor_.join();
  // The actor is gone: what it heard last is written from here.
  ledger_.Flush(clock_->Now(), /*uptime_age=*/absl::ZeroDuration());
}

void FleetCore::WriteReliabilityLedger(absl::Time deadline) {
  Call<absl::Status>(
      [this] {
        ledger_.Flush(clock_->Now(), kReadUptimeAge);
        return absl::OkStatus();
      },
      deadline)
      .IgnoreError();
}

void FleetCore::Post(Event event) {
  absl::MutexLock lock(&queue_mu_);
  queue_.push_back(std::move(event));
}

namespace {

template <typename T>
T ErrorAs(absl::Status status) {
  if constexpr (std::is_same_v<T, absl::Status>) {
    return status;
  } else {
    return T(std::move(status));
  }
}

}  // namespace

template <typename T>
T FleetCore::Call(std::function<T()> fn, absl::Time deadline) {
  auto promise = std::make_shared<std::promise<T>>();
  std::future<T> future = promise->get_future();
  {
    absl::MutexLock lock(&queue_mu_);
    if (stopping_) return ErrorAs<T>(absl::UnavailableError("controller is shutting down"));
    // Deadlines are the caller's (gRPC's, wall-clock), not the core's
    // injected clock. A call whose caller gave up before the actor reached
    // it is not applied: a late StartRun must not start a run nobody sees.
    queue_.push_back(Closure([promise, fn = std::move(fn), deadline] {
      promise->set_value(absl::Now() >= deadline ? ErrorAs<T>(CallerDeadlinePassed()) : fn());
    }));
  }
  if (deadline == absl::InfiniteFuture()) return future.get();
  if (future.wait_until(absl::ToChronoTime(deadline)) != std::future_status::ready) {
    return ErrorAs<T>(CallerDeadlinePassed());
  }
  return future.get();
}

void FleetCore::ActorLoop() {
  while (true) {
    std::deque<Event> events;
    {
      absl::MutexLock lock(&queue_mu_);
      // Wake for work, for stop, for the next sweep or for the next store
      // retry, whichever is first.
      const absl::Duration until_sweep =
          std::min(next_sweep_, store_retry_.next_retry()) - clock_->Now();
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(queue_mu_) {
        return stopping_ || !queue_.empty();
      };
      queue_mu_.AwaitWithTimeout(absl::Condition(&ready),
                                 std::max(until_sweep, absl::ZeroDuration()));
      if (stopping_) return;
      events.swap(queue_);
    }
    std::vector<PendingReport> batch;
    for (Event& event : events) {
      if (auto* report = std::get_if<PendingReport>(&event)) {
        batch.push_back(std::move(*report));
        continue;
      }
      // Keep order: reports before this closure commit first.
      if (!batch.empty()) {
        CommitReports(batch);
        batch.clear();
      }
      std::get<Closure>(event)();
    }
    if (!batch.empty()) CommitReports(batch);
    if (clock_->Now() >= next_sweep_) {
      Sweep();
      next_sweep_ = clock_->Now() + options_.sweep_interval;
    }
    if (clock_->Now() >= store_retry_.next_retry()) RetryStoreBacklog();
    if (clock_->Now() >= schedules_.next_due()) schedules_.FireDue();
  }
}

// ----------------------------------------------------------------- agents

void FleetCore::OnHello(std::shared_ptr<AgentLink> link, v1::Hello hello,
                        std::string peer_host) {
  Post(Closure([this, link = std::move(link), hello = std::move(hello),
                peer_host = std::move(peer_host)]() mutable {
    HandleHello(std::move(link), std::move(hello), std::move(peer_host));
  }));
}

void FleetCore::OnAgentMessage(const std::shared_ptr<AgentLink>& link,
                               v1::AgentMessage message) {
  if (message.has_report()) {
    // The node is resolved on the actor thread, where the sessions live.
    Post(PendingReport{link, "", std::move(*message.mutable_report()), ""});
    return;
  }
  Post(Closure([this, link, message = std::move(message)]() mutable {
    HandleMessage(link, std::move(message));
  }));
}

void FleetCore::OnDisconnect(const std::shared_ptr<AgentLink>& link) {
  Post(Closure([this, link] { HandleDisconnect(link); }));
}

void FleetCore::OnNodeRevoked(const std::string& node) {
  Post(Closure([this, node] { HandleNodeRevoked(node); }));
}

// ------------------------------------------------------------------- users

absl::StatusOr<v1::ListNodesResponse> FleetCore::ListNodes(absl::Time deadline) {
  return Call<absl::StatusOr<v1::ListNodesResponse>>([this] { return HandleListNodes(); },
                                                     deadline);
}

absl::StatusOr<v1::StartRunResponse> FleetCore::StartRun(const v1::StartRunRequest& request,
                                                         absl::Time deadline) {
  return Call<absl::StatusOr<v1::StartRunResponse>>(
      [this, request] { return HandleStartRun(request); }, deadline);
}

absl::StatusOr<v1::Run> FleetCore::GetRun(const v1::GetRunRequest& request,
                                          absl::Time deadline) {
  return Call<absl::StatusOr<v1::Run>>([this, request] { return HandleGetRun(request); },
                                       deadline);
}

absl::Status FleetCore::CancelRun(const std::string& run_id, absl::Time deadline) {
  return Call<absl::Status>([this, run_id] { return HandleCancelRun(run_id); }, deadline);
}

absl::StatusOr<v1::RemoveNodeResponse> FleetCore::RemoveNode(const std::string& name,
                                                            absl::Time deadline) {
  return Call<absl::StatusOr<v1::RemoveNodeResponse>>(
      [this, name] { return HandleRemoveNode(name); }, deadline);
}

absl::StatusOr<v1::ImportPricesResponse> FleetCore::ImportPrices(
    const v1::ImportPricesRequest& request, absl::Time deadline) {
  // Parsed on the caller's thread: a megabyte of CSV does not stall ingest.
  absl::StatusOr<std::vector<v1::CatalogPrice>> rows = PriceBook::ParseImport(request);
  if (!rows.ok()) return rows.status();
  return Call<absl::StatusOr<v1::ImportPricesResponse>>(
      [this, rows = *std::move(rows)] { return price_book_.Import(rows); }, deadline);
}

// Schedules (schedule_book.h).
absl::StatusOr<v1::AddScheduleResponse> FleetCore::AddSchedule(
    const v1::AddScheduleRequest& request, absl::Time deadline) {
  return Call<absl::StatusOr<v1::AddScheduleResponse>>(
      [this, request] { return schedules_.Add(request); }, deadline);
}

absl::StatusOr<v1::ListSchedulesResponse> FleetCore::ListSchedules(absl::Time deadline) {
  return Call<absl::StatusOr<v1::ListSchedulesResponse>>(
      [this]() -> absl::StatusOr<v1::ListSchedulesResponse> { return schedules_.List(); },
      deadline);
}

absl::Status FleetCore::RemoveSchedule(const std::string& name, absl::Time deadline) {
  return Call<absl::Status>([this, name] { return schedules_.Remove(name); }, deadline);
}

absl::StatusOr<v1::RunScheduleResponse> FleetCore::RunSchedule(const std::string& name,
                                                               absl::Time deadline) {
  return Call<absl::StatusOr<v1::RunScheduleResponse>>(
      [this, name] { return schedules_.RunNow(name); }, deadline);
}

ScheduleBook::Hooks FleetCore::ScheduleHooks() {
  ScheduleBook::Hooks hooks;
  hooks.start_run = [this](const v1::StartRunRequest& request) {
    return HandleStartRun(request);
  };
  hooks.unfinished_run_state = [this](const std::string& run_id) -> std::optional<std::string> {
    const storage::RunRecord* run = live_.FindRun(run_id);
    if (run == nullptr) return std::nullopt;
    return run->state;
  };
  hooks.node_online = [this](const std::string& node,
                             std::map<std::string, std::string>* labels) {
    const NodeSessions::Session* session = sessions_.Find(node);
    if (session == nullptr) return false;
    if (session->online) return true;
    *labels = session->labels;
    return false;
  };
  return hooks;
}

FleetCore::Stats FleetCore::GetStats() {
  Stats stats;
  {
    absl::MutexLock lock(&stats_mu_);
    stats = stats_;
  }
  const StoreRetry::Snapshot store = store_retry_.snapshot();
  stats.store_error = store.error;
  stats.store_failing_since = store.failing_since;
  stats.reports_held = store.reports_held;
  stats.store_failures = store.failures;
  stats.schedule_firings = schedules_.FiringCounts();
  stats.samples_pruned = retention_.samples_pruned();
  return stats;
}

}  // namespace fleetbench::controller
