#include "controller/fleet_core.h"

#include <algorithm>
#include <cmath>
#include <future>

#include "common/logging.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/metrics.h"
#include "common/task_state.h"
#include "common/ulid.h"
#include "controller/ranking.h"
#include "controller/report_limits.h"

namespace fleetbench::controller {
namespace {

absl::Status CheckTaskOwner(const storage::TaskRecord& task, const std::string& node) {
  if (task.node != node) {
    return absl::PermissionDeniedError(
        absl::StrCat("task ", task.task_id, " belongs to node ", task.node));
  }
  return absl::OkStatus();
}

}  // namespace

FleetCore::FleetCore(storage::Store* store, Clock* clock, FleetOptions options)
    : store_(store), clock_(clock), options_(options) {}

FleetCore::~FleetCore() { Stop(); }

absl::Status FleetCore::Start() {
  auto unfinished = store_->ListTasksInStates(
      {v1::TASK_STATE_QUEUED, v1::TASK_STATE_DISPATCHED, v1::TASK_STATE_RUNNING});
  if (!unfinished.ok()) return unfinished.status();
  const absl::Time now = clock_->Now();
  for (storage::TaskRecord& task : *unfinished) {
    if (!active_runs_.contains(task.run_id)) {
      auto run = store_->GetRun(task.run_id);
      if (!run.ok()) return run.status();
      active_runs_[task.run_id] = *run;
    }
    // After a restart nobody is connected yet. Nodes whose task was in
    // flight get one heartbeat timeout, counted from now, to come back.
    if (task.state != v1::TASK_STATE_QUEUED && !sessions_.contains(task.node)) {
      Session& s = sessions_[task.node];
      s.last_seen = now;
      s.online = false;
    }
    active_tasks_[task.task_id] = std::move(task);
  }
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
}

void FleetCore::Post(Event event) {
  absl::MutexLock lock(&queue_mu_);
  queue_.push_back(std::move(event));
}

template <typename T>
T FleetCore::Call(std::function<T()> fn) {
  auto promise = std::make_shared<std::promise<T>>();
  std::future<T> future = promise->get_future();
  {
    absl::MutexLock lock(&queue_mu_);
    if (stopping_) {
      if constexpr (std::is_same_v<T, absl::Status>) {
        return absl::UnavailableError("controller is shutting down");
      } else {
        return T(absl::UnavailableError("controller is shutting down"));
      }
    }
    queue_.push_back(Closure([promise, fn = std::move(fn)] { promise->set_value(fn()); }));
  }
  return future.get();
}

void FleetCore::ActorLoop() {
  while (true) {
    std::deque<Event> events;
    {
      absl::MutexLock lock(&queue_mu_);
      // Wake for work, for stop, or for the next sweep, whichever is first.
      const absl::Duration until_sweep = next_sweep_ - clock_->Now();
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
    // The node is resolved on the actor thread, where sessions_ lives.
    Post(PendingReport{link, "", std::move(*message.mutable_report())});
    return;
  }
  Post(Closure([this, link, message = std::move(message)]() mutable {
    HandleMessage(link, std::move(message));
  }));
}

void FleetCore::OnDisconnect(const std::shared_ptr<AgentLink>& link) {
  Post(Closure([this, link] { HandleDisconnect(link); }));
}

std::string FleetCore::NodeOfLink(const std::shared_ptr<AgentLink>& link) const {
  for (const auto& [name, session] : sessions_) {
    if (session.link == link) return name;
  }
  return "";
}

bool FleetCore::NodeBusy(const std::string& node) const {
  for (const auto& [id, task] : active_tasks_) {
    if (task.node == node && (task.state == v1::TASK_STATE_DISPATCHED ||
                              task.state == v1::TASK_STATE_RUNNING)) {
      return true;
    }
  }
  return false;
}

void FleetCore::HandleHello(std::shared_ptr<AgentLink> link, v1::Hello hello,
                            std::string peer_host) {
  const absl::Time now = clock_->Now();
  const std::string name = hello.name();
  Session& session = sessions_[name];
  if (session.link && session.link != link) {
    // The same node connected again (a restart, a new network path): the
    // newest stream wins.
    session.link->Close();
  }
  session.link = link;
  session.online = true;
  session.last_seen = now;
  session.labels.clear();
  for (const auto& [k, v] : hello.labels()) session.labels[k] = v;
  session.facts = hello.facts();
  session.agent_version = hello.agent_version();
  session.capabilities.assign(hello.capabilities().begin(), hello.capabilities().end());
  session.address = hello.advertise_addr().empty() ? peer_host : hello.advertise_addr();

  storage::NodeRecord record;
  record.name = name;
  record.labels = session.labels;
  record.facts = hello.facts();
  record.agent_version = hello.agent_version();
  record.first_seen = now;
  record.last_seen = now;
  if (absl::Status s = store_->UpsertNode(record); !s.ok()) {
    LOG(ERROR) << "storing node " << name << ": " << s;
  }

  v1::ControllerMessage welcome;
  welcome.mutable_welcome()->set_node_id(name);
  welcome.mutable_welcome()->set_heartbeat_interval_ms(
      absl::ToInt64Milliseconds(options_.heartbeat_interval));
  link->Send(welcome);

  // Reconcile the node's in-flight tasks with what the agent says it has.
  std::set<std::string> finished(hello.finished_task_ids().begin(),
                                 hello.finished_task_ids().end());
  bool running_known = hello.running_task_id().empty();
  for (auto it = active_tasks_.begin(); it != active_tasks_.end();) {
    storage::TaskRecord& task = it->second;
    ++it;  // FinishTask may erase the current entry
    if (task.node != name || task.state == v1::TASK_STATE_QUEUED) continue;
    if (task.task_id == hello.running_task_id()) {
      running_known = true;
      if (task.state != v1::TASK_STATE_RUNNING) {
        task.state = v1::TASK_STATE_RUNNING;
        task.updated = now;
        (void)store_->UpdateTask(task);
      }
    } else if (finished.contains(task.task_id)) {
      // Its final report is in the agent's spool and comes next.
    } else if (task.state == v1::TASK_STATE_DISPATCHED && IsPairClient(task)) {
      // A client half: sent again once its server's port is known.
      const auto& params = task.benchmarks[0].params();
      if (params.contains("peer")) {
        SendRunTask(task);
      } else {
        awaiting_port_.insert(task.task_id);
      }
    } else if (task.state == v1::TASK_STATE_DISPATCHED) {
      // Sent before a controller restart but never started: send again. A
      // pair goes back together (the server's dispatch reserves the client).
      for (storage::TaskRecord* t : {&task, PairPartner(task)}) {
        if (t == nullptr || t->state != v1::TASK_STATE_DISPATCHED) continue;
        t->state = v1::TASK_STATE_QUEUED;
        t->updated = now;
        awaiting_port_.erase(t->task_id);
        (void)store_->UpdateTask(*t);
      }
    } else {
      FinishTask(task, v1::TASK_STATE_LOST,
                 "agent restarted while the task was running; its partial "
                 "results are kept");
    }
  }
  if (!running_known) {
    // The agent runs something this controller no longer wants.
    v1::ControllerMessage cancel;
    cancel.mutable_cancel_task()->set_task_id(hello.running_task_id());
    link->Send(cancel);
  }
  LOG(INFO) << "node " << name << " online";
  TryDispatch();
}

void FleetCore::HandleMessage(const std::shared_ptr<AgentLink>& link,
                              v1::AgentMessage message) {
  const std::string node = NodeOfLink(link);
  if (node.empty()) return;  // a replaced stream still talking
  Session& session = sessions_[node];
  session.last_seen = clock_->Now();
  if (!session.online) {
    session.online = true;
    TryDispatch();
  }
  if (message.has_port_published()) {
    HandlePortPublished(node, message.port_published());
  } else if (message.has_task_started()) {
    auto it = active_tasks_.find(message.task_started().task_id());
    if (it != active_tasks_.end() && it->second.node == node &&
        it->second.state == v1::TASK_STATE_DISPATCHED) {
      it->second.state = v1::TASK_STATE_RUNNING;
      it->second.updated = clock_->Now();
      (void)store_->UpdateTask(it->second);
      UpdateRunState(it->second.run_id);
    }
  } else if (message.has_progress()) {
    const v1::Progress& p = message.progress();
    auto it = active_tasks_.find(p.task_id());
    if (it != active_tasks_.end() && it->second.node == node) {
      progress_[p.task_id()] = {p.benchmark(), std::clamp(p.fraction(), 0.0, 1.0),
                                p.message().substr(0, 256)};
    }
  }
}

void FleetCore::HandleDisconnect(const std::shared_ptr<AgentLink>& link) {
  const std::string node = NodeOfLink(link);
  if (node.empty()) return;
  // Stay "online" until the heartbeat timeout: a quick reconnect keeps the
  // running task. Only the link goes.
  sessions_[node].link.reset();
  LOG(INFO) << "node " << node << " disconnected";
}

void FleetCore::Sweep() {
  const absl::Time now = clock_->Now();
  for (auto& [name, session] : sessions_) {
    if (now - session.last_seen <= options_.heartbeat_timeout) continue;
    const bool was_online = session.online;
    session.online = false;
    if (session.link) {
      session.link->Close();
      session.link.reset();
    }
    if (was_online) LOG(WARNING) << "node " << name << " offline (heartbeat timeout)";
    for (auto it = active_tasks_.begin(); it != active_tasks_.end();) {
      storage::TaskRecord& task = it->second;
      ++it;
      if (task.node != name || task.state == v1::TASK_STATE_QUEUED) continue;
      FinishTask(task, v1::TASK_STATE_LOST,
                 absl::StrCat("agent lost: no heartbeat for ",
                              absl::FormatDuration(now - session.last_seen),
                              " (timeout ", absl::FormatDuration(options_.heartbeat_timeout),
                              ")"));
    }
  }
  {
    absl::MutexLock lock(&stats_mu_);
    stats_.nodes_online = static_cast<int>(std::count_if(
        sessions_.begin(), sessions_.end(), [](const auto& s) { return s.second.online; }));
  }
}

bool FleetCore::IsPairClient(const storage::TaskRecord& task) const {
  if (task.peer_task_id.empty() || task.benchmarks.empty()) return false;
  auto role = task.benchmarks[0].params().find("role");
  return role != task.benchmarks[0].params().end() && role->second == "client";
}

storage::TaskRecord* FleetCore::PairPartner(const storage::TaskRecord& task) {
  if (task.peer_task_id.empty()) return nullptr;
  auto it = active_tasks_.find(task.peer_task_id);
  return it == active_tasks_.end() ? nullptr : &it->second;
}

void FleetCore::SendRunTask(const storage::TaskRecord& task) {
  auto session = sessions_.find(task.node);
  if (session == sessions_.end() || !session->second.link) return;
  v1::ControllerMessage msg;
  v1::RunTask* run_task = msg.mutable_run_task();
  run_task->set_task_id(task.task_id);
  run_task->set_run_id(task.run_id);
  const std::vector<v1::BenchmarkSpec>& specs =
      task.benchmarks.empty() ? active_runs_[task.run_id].benchmarks : task.benchmarks;
  for (const v1::BenchmarkSpec& spec : specs) *run_task->add_benchmarks() = spec;
  session->second.link->Send(msg);
}

void FleetCore::TryDispatch() {
  // Oldest run first; within a run, task order. A node takes one task at a
  // time: two benchmarks on one node would spoil both numbers. A pair (the
  // two halves of a pairwise benchmark) starts only when both nodes are
  // free, so a node is in at most one test at a time and pairs run in
  // rounds.
  std::vector<storage::TaskRecord*> queued;
  for (auto& [id, task] : active_tasks_) {
    if (task.state == v1::TASK_STATE_QUEUED && !IsPairClient(task)) queued.push_back(&task);
  }
  std::sort(queued.begin(), queued.end(), [](auto* a, auto* b) {
    return std::tie(a->run_id, a->task_id) < std::tie(b->run_id, b->task_id);
  });
  auto ready = [&](const std::string& node) {
    auto session = sessions_.find(node);
    return session != sessions_.end() && session->second.online && session->second.link &&
           !NodeBusy(node);
  };
  for (storage::TaskRecord* task : queued) {
    if (!ready(task->node)) continue;
    storage::TaskRecord* partner = PairPartner(*task);
    if (!task->peer_task_id.empty()) {
      if (partner == nullptr || partner->state != v1::TASK_STATE_QUEUED ||
          partner->node == task->node || !ready(partner->node)) {
        continue;
      }
    }
    const storage::RunRecord& run = active_runs_[task->run_id];
    if (run.max_parallel > 0) {
      uint32_t in_flight = partner ? 1 : 0;
      for (const auto& [id, t] : active_tasks_) {
        if (t.run_id == task->run_id && (t.state == v1::TASK_STATE_DISPATCHED ||
                                         t.state == v1::TASK_STATE_RUNNING)) {
          ++in_flight;
        }
      }
      if (in_flight >= std::max<uint32_t>(run.max_parallel, partner ? 2 : 1)) continue;
    }
    std::vector<storage::TaskRecord*> starting = {task};
    if (partner) starting.push_back(partner);
    bool stored = true;
    for (storage::TaskRecord* t : starting) {
      t->state = v1::TASK_STATE_DISPATCHED;
      t->updated = clock_->Now();
      if (absl::Status s = store_->UpdateTask(*t); !s.ok()) {
        LOG(ERROR) << "dispatching " << t->task_id << ": " << s;
        stored = false;
      }
    }
    if (!stored) {
      for (storage::TaskRecord* t : starting) t->state = v1::TASK_STATE_QUEUED;
      continue;
    }
    SendRunTask(*task);
    // The client half goes out once the server half published its port.
    if (partner) awaiting_port_.insert(partner->task_id);
    UpdateRunState(task->run_id);
  }
}

void FleetCore::HandlePortPublished(const std::string& node, const v1::PortPublished& port) {
  auto it = active_tasks_.find(port.task_id());
  if (it == active_tasks_.end() || it->second.node != node) return;
  storage::TaskRecord* client = PairPartner(it->second);
  if (client == nullptr || !awaiting_port_.contains(client->task_id)) return;
  if (port.port() <= 0 || port.port() > 65535) {
    FinishTask(*client, v1::TASK_STATE_FAILED,
               absl::StrCat("peer ", node, " published an invalid port ", port.port()));
    return;
  }
  const std::string& host = sessions_[node].address;
  for (v1::BenchmarkSpec& spec : client->benchmarks) {
    (*spec.mutable_params())["peer"] = absl::StrCat(host, ":", port.port());
  }
  (void)store_->UpdateTask(*client);
  awaiting_port_.erase(client->task_id);
  SendRunTask(*client);
}

void FleetCore::SettlePairPartner(const storage::TaskRecord& task) {
  storage::TaskRecord* partner = PairPartner(task);
  if (partner == nullptr) return;
  if (awaiting_port_.contains(partner->task_id) || partner->state == v1::TASK_STATE_QUEUED) {
    // The server half ended before its port was known: the client never ran.
    awaiting_port_.erase(partner->task_id);
    // A listener that cannot run here (no RDMA device) makes the pair
    // skipped, not failed; anything else fails the waiting half.
    std::string why = task.reason;
    for (const auto& o : task.outcomes) {
      if (why.empty() && !o.reason().empty()) why = o.reason();
    }
    const bool skipped = task.state == v1::TASK_STATE_SKIPPED;
    FinishTask(*partner, skipped ? v1::TASK_STATE_SKIPPED : v1::TASK_STATE_FAILED,
               absl::StrCat("peer ", task.node, " ", TaskStateName(task.state),
                            why.empty() ? "" : ": " + why,
                            skipped ? "" : " (before it was listening)"));
    return;
  }
  if (IsPairClient(task) && task.state != v1::TASK_STATE_SUCCEEDED &&
      (partner->state == v1::TASK_STATE_RUNNING || partner->state == v1::TASK_STATE_DISPATCHED)) {
    // The client is gone: the listening half would wait for nobody.
    auto session = sessions_.find(partner->node);
    if (session != sessions_.end() && session->second.link) {
      v1::ControllerMessage msg;
      msg.mutable_cancel_task()->set_task_id(partner->task_id);
      session->second.link->Send(msg);
    }
  }
}

void FleetCore::FinishTask(storage::TaskRecord& task, v1::TaskState state,
                           const std::string& reason) {
  task.state = state;
  task.reason = reason;
  task.updated = clock_->Now();
  if (absl::Status s = store_->UpdateTask(task); !s.ok()) {
    LOG(ERROR) << "finishing task " << task.task_id << ": " << s;
  }
  const storage::TaskRecord ended = task;
  progress_.erase(task.task_id);
  awaiting_port_.erase(task.task_id);
  active_tasks_.erase(task.task_id);  // `task` dangles from here on
  SettlePairPartner(ended);
  UpdateRunState(ended.run_id);
}

void FleetCore::UpdateRunState(const std::string& run_id) {
  auto run_it = active_runs_.find(run_id);
  if (run_it == active_runs_.end()) return;
  auto tasks = store_->ListTasks(run_id);
  if (!tasks.ok()) return;
  bool all_done = true, any_started = false, any_failed = false, any_cancelled = false;
  for (const storage::TaskRecord& stored : *tasks) {
    // Prefer the in-memory copy: it is the newest.
    auto live = active_tasks_.find(stored.task_id);
    const v1::TaskState state =
        live != active_tasks_.end() ? live->second.state : stored.state;
    all_done &= IsTerminal(state);
    any_started |= state != v1::TASK_STATE_QUEUED;
    any_failed |= state == v1::TASK_STATE_FAILED || state == v1::TASK_STATE_LOST;
    any_cancelled |= state == v1::TASK_STATE_CANCELLED;
  }
  std::string state = any_started ? "running" : "queued";
  absl::Time finished = absl::InfinitePast();
  if (all_done) {
    state = any_failed ? "failed" : any_cancelled ? "cancelled" : "succeeded";
    finished = clock_->Now();
  }
  if (state != run_it->second.state) {
    run_it->second.state = state;
    (void)store_->SetRunState(run_id, state, finished);
  }
  if (all_done) active_runs_.erase(run_it);
}

absl::Status FleetCore::ValidateReport(const std::string& node,
                                       const v1::Report& report) const {
  if (absl::Status s = CheckReportBounds(report); !s.ok()) return s;
  auto it = active_tasks_.find(report.task_id());
  if (it == active_tasks_.end()) {
    return absl::NotFoundError(absl::StrCat("task ", report.task_id(),
                                            " is not in flight"));
  }
  return CheckTaskOwner(it->second, node);
}

bool FleetCore::StoreLateSamples(PendingReport& p) {
  // A report for a task that already ended: a resend after a lost ack, or
  // the spool of an agent whose task was declared lost. What was measured
  // is kept (ids make it idempotent); the task's end state stays.
  if (p.report.samples().empty()) return true;
  const std::string run_id = p.report.samples(0).run_id();
  auto tasks = store_->ListTasks(run_id);
  if (!tasks.ok()) return false;
  const storage::TaskRecord* task = nullptr;
  for (const auto& t : *tasks) {
    if (t.task_id == p.report.task_id()) task = &t;
  }
  if (task == nullptr || !CheckTaskOwner(*task, p.node).ok()) return false;
  storage::Store::ReportWrite w;
  for (v1::Sample& sample : *p.report.mutable_samples()) {
    sample.set_run_id(task->run_id);
    sample.set_node(p.node);
    w.samples.push_back(sample);
  }
  auto stored = store_->CommitReports({w});
  if (!stored.ok()) return false;
  absl::MutexLock lock(&stats_mu_);
  stats_.samples_stored += *stored;
  stats_.samples_duplicate += static_cast<int64_t>(w.samples.size()) - *stored;
  return true;
}

void FleetCore::CommitReports(std::vector<PendingReport>& batch) {
  const absl::Time now = clock_->Now();
  struct Accepted {
    PendingReport* pending;
    storage::TaskRecord final_task;  // valid when finishing
    bool finishes = false;
  };
  std::vector<Accepted> accepted;
  std::vector<PendingReport*> rejected;
  accepted.reserve(batch.size());
  for (PendingReport& p : batch) {
    p.node = NodeOfLink(p.link);
    if (p.node.empty()) continue;  // stale stream: no ack, the agent resends
    sessions_[p.node].last_seen = now;
    if (absl::Status s = ValidateReport(p.node, p.report);
        absl::IsNotFound(s) && StoreLateSamples(p)) {
      rejected.push_back(&p);  // stored; ack, no task transition
      continue;
    } else if (!s.ok()) {
      // Already stored and finished (a resend after our ack was lost), or
      // garbage. Either way, storing it again would be wrong; ack so the
      // agent stops resending.
      LOG(WARNING) << "report " << p.report.report_id() << " from " << p.node
                   << " dropped: " << s;
      rejected.push_back(&p);
      continue;
    }
    Accepted a{&p, {}, false};
    const storage::TaskRecord& task = active_tasks_.at(p.report.task_id());
    for (v1::Sample& sample : *p.report.mutable_samples()) {
      // Trust the task, not the agent, for where a sample belongs.
      sample.set_run_id(task.run_id);
      sample.set_node(p.node);
    }
    if (p.report.task_finished()) {
      a.finishes = true;
      a.final_task = task;
      a.final_task.state = p.report.task_state();
      a.final_task.reason = p.report.task_reason();
      a.final_task.outcomes.assign(p.report.outcomes().begin(), p.report.outcomes().end());
      a.final_task.updated = now;
    }
    accepted.push_back(std::move(a));
  }

  std::vector<storage::Store::ReportWrite> writes;
  writes.reserve(accepted.size());
  int64_t total = 0;
  for (Accepted& a : accepted) {
    storage::Store::ReportWrite w;
    w.samples.assign(a.pending->report.samples().begin(), a.pending->report.samples().end());
    total += static_cast<int64_t>(w.samples.size());
    if (a.finishes) w.task = &a.final_task;
    writes.push_back(std::move(w));
  }
  if (!writes.empty()) {
    absl::StatusOr<int> stored = store_->CommitReports(writes);
    if (!stored.ok()) {
      // Nothing is acked: the agents keep the reports and resend them.
      LOG(ERROR) << "committing " << writes.size() << " reports: " << stored.status();
      return;
    }
    absl::MutexLock lock(&stats_mu_);
    stats_.samples_stored += *stored;
    stats_.samples_duplicate += total - *stored;
    stats_.reports_committed += static_cast<int64_t>(writes.size());
    stats_.commits += 1;
  }
  // Durable now: acknowledge, then apply the task transitions.
  auto ack = [](PendingReport* p) {
    v1::ControllerMessage msg;
    msg.mutable_ack()->set_report_id(p->report.report_id());
    p->link->Send(msg);
  };
  for (Accepted& a : accepted) ack(a.pending);
  for (PendingReport* p : rejected) ack(p);
  bool any_finished = false;
  for (Accepted& a : accepted) {
    if (!a.finishes) continue;
    auto it = active_tasks_.find(a.final_task.task_id);
    if (it == active_tasks_.end()) continue;
    progress_.erase(it->first);
    active_tasks_.erase(it);
    SettlePairPartner(a.final_task);
    UpdateRunState(a.final_task.run_id);
    any_finished = true;
  }
  if (any_finished) TryDispatch();
}

// ------------------------------------------------------------------- users

absl::StatusOr<v1::ListNodesResponse> FleetCore::ListNodes() {
  return Call<absl::StatusOr<v1::ListNodesResponse>>(
      [this]() -> absl::StatusOr<v1::ListNodesResponse> {
        auto records = store_->ListNodes();
        if (!records.ok()) return records.status();
        v1::ListNodesResponse response;
        for (const storage::NodeRecord& r : *records) {
          v1::Node* node = response.add_nodes();
          node->set_name(r.name);
          auto session = sessions_.find(r.name);
          const bool online = session != sessions_.end() && session->second.online;
          node->set_status(online ? "online" : "offline");
          for (const auto& [k, v] : r.labels) (*node->mutable_labels())[k] = v;
          *node->mutable_facts() = r.facts;
          node->set_agent_version(r.agent_version);
          absl::Time last_seen = r.last_seen;
          if (session != sessions_.end()) {
            last_seen = std::max(last_seen, session->second.last_seen);
            for (const auto& c : session->second.capabilities) *node->add_capabilities() = c;
          }
          node->set_last_seen_unix_ms(absl::ToUnixMillis(last_seen));
        }
        return response;
      });
}

absl::StatusOr<v1::StartRunResponse> FleetCore::StartRun(const v1::StartRunRequest& request) {
  return Call<absl::StatusOr<v1::StartRunResponse>>(
      [this, request] { return HandleStartRun(request); });
}

absl::StatusOr<v1::StartRunResponse> FleetCore::HandleStartRun(
    const v1::StartRunRequest& request) {
  if (request.benchmarks().empty()) {
    return absl::InvalidArgumentError("no benchmark given (--bench NAME[,NAME...])");
  }
  if (request.benchmarks_size() > 64) {
    return absl::InvalidArgumentError("at most 64 benchmarks per run");
  }
  // Which benchmarks does anyone know? Capabilities come from hellos.
  std::set<std::string> known;
  for (const auto& [name, s] : sessions_) {
    for (const auto& c : s.capabilities) known.insert(c.benchmark());
  }
  for (const v1::BenchmarkSpec& spec : request.benchmarks()) {
    if (!known.empty() && !known.contains(spec.name())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown benchmark '", spec.name(), "'; known: ", absl::StrJoin(known, ", ")));
    }
    if (spec.params_size() > 64) {
      return absl::InvalidArgumentError("at most 64 parameters per benchmark");
    }
  }
  // Pick nodes: named ones (each must exist), else every online node, then
  // filter by labels.
  std::vector<std::string> nodes;
  if (!request.nodes().empty()) {
    for (const std::string& n : request.nodes()) {
      auto it = sessions_.find(n);
      if (it == sessions_.end()) {
        return absl::NotFoundError(absl::StrCat("unknown node '", n, "'"));
      }
      if (!it->second.online) {
        return absl::FailedPreconditionError(absl::StrCat("node '", n, "' is offline"));
      }
      nodes.push_back(n);
    }
  } else {
    for (const auto& [name, s] : sessions_) {
      if (s.online) nodes.push_back(name);
    }
  }
  std::erase_if(nodes, [&](const std::string& n) {
    const auto& labels = sessions_[n].labels;
    for (const auto& [k, v] : request.select_labels()) {
      auto it = labels.find(k);
      if (it == labels.end() || it->second != v) return true;
    }
    return false;
  });
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  if (nodes.empty()) {
    return absl::FailedPreconditionError("no online node matches the selection");
  }

  // Pairwise benchmarks (capabilities say which) become pairs of tasks;
  // the rest run on every node.
  std::set<std::string> pairwise;
  for (const auto& [name, s] : sessions_) {
    for (const auto& c : s.capabilities) {
      if (c.pairwise()) pairwise.insert(c.benchmark());
    }
  }
  std::vector<v1::BenchmarkSpec> per_node;
  std::vector<v1::BenchmarkSpec> paired;
  for (const v1::BenchmarkSpec& spec : request.benchmarks()) {
    (pairwise.contains(spec.name()) ? paired : per_node).push_back(spec);
  }
  std::vector<std::pair<std::string, std::string>> pairs;  // server, client
  for (v1::BenchmarkSpec& spec : paired) {
    auto result = PlanPairs(spec, nodes);
    if (!result.ok()) return result.status();
    if (result->empty() && per_node.empty() && paired.size() == 1) {
      return absl::FailedPreconditionError(
          absl::StrCat(spec.name(), " runs between two nodes; the selection has ", nodes.size()));
    }
    for (auto& p : *result) pairs.push_back(p);
  }
  if (!paired.empty() && pairs.empty() && per_node.empty()) {
    return absl::FailedPreconditionError("the pairwise benchmarks need at least two nodes");
  }

  const absl::Time now = clock_->Now();
  storage::RunRecord run;
  run.run_id = NewUlid(now);
  run.state = "queued";
  run.created = now;
  run.finished = absl::InfinitePast();
  run.benchmarks.assign(request.benchmarks().begin(), request.benchmarks().end());
  run.max_parallel = request.max_parallel();
  run.suite = request.suite();
  std::vector<storage::TaskRecord> tasks;
  auto new_task = [&](const std::string& node) {
    storage::TaskRecord t;
    t.task_id = NewUlid(now);
    t.run_id = run.run_id;
    t.node = node;
    t.state = v1::TASK_STATE_QUEUED;
    t.updated = now;
    return t;
  };
  if (!per_node.empty()) {
    for (const std::string& n : nodes) {
      storage::TaskRecord t = new_task(n);
      if (!paired.empty()) t.benchmarks = per_node;  // else: the run's list
      tasks.push_back(std::move(t));
    }
  }
  for (const v1::BenchmarkSpec& spec : paired) {
    auto spec_pairs = PlanPairs(spec, nodes);
    for (const auto& [server_node, client_node] : *spec_pairs) {
      storage::TaskRecord server = new_task(server_node);
      storage::TaskRecord client = new_task(client_node);
      v1::BenchmarkSpec server_spec = spec;
      v1::BenchmarkSpec client_spec = spec;
      // Pairing parameters are the controller's; the plugin gets its role.
      for (v1::BenchmarkSpec* s : {&server_spec, &client_spec}) {
        s->mutable_params()->erase("pairing");
        s->mutable_params()->erase("reference");
      }
      (*server_spec.mutable_params())["role"] = "server";
      (*server_spec.mutable_params())["peer_node"] = client_node;
      (*client_spec.mutable_params())["role"] = "client";
      (*client_spec.mutable_params())["peer_node"] = server_node;
      server.benchmarks = {server_spec};
      client.benchmarks = {client_spec};
      server.peer_task_id = client.task_id;
      client.peer_task_id = server.task_id;
      tasks.push_back(std::move(server));
      tasks.push_back(std::move(client));
    }
  }
  if (absl::Status s = store_->CreateRun(run, tasks); !s.ok()) return s;
  active_runs_[run.run_id] = run;
  for (storage::TaskRecord& t : tasks) active_tasks_[t.task_id] = t;
  TryDispatch();

  v1::StartRunResponse response;
  response.set_run_id(run.run_id);
  for (const std::string& n : nodes) response.add_nodes(n);
  return response;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> PlanPairs(
    const v1::BenchmarkSpec& spec, const std::vector<std::string>& nodes) {
  std::string mode = "star";
  if (auto it = spec.params().find("pairing"); it != spec.params().end()) mode = it->second;
  std::vector<std::pair<std::string, std::string>> pairs;
  if (nodes.size() < 2) return pairs;
  if (mode == "pair") {
    pairs.emplace_back(nodes[0], nodes[1]);
  } else if (mode == "star") {
    std::string reference = nodes[0];
    if (auto it = spec.params().find("reference"); it != spec.params().end()) {
      reference = it->second;
      if (std::find(nodes.begin(), nodes.end(), reference) == nodes.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(spec.name(), ": reference node '", reference, "' is not in the run"));
      }
    }
    for (const std::string& n : nodes) {
      if (n != reference) pairs.emplace_back(reference, n);
    }
  } else if (mode == "all") {
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (size_t j = i + 1; j < nodes.size(); ++j) pairs.emplace_back(nodes[i], nodes[j]);
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        spec.name(), ": pairing '", mode, "' is not one of pair, star, all"));
  }
  return pairs;
}

absl::StatusOr<v1::Run> FleetCore::GetRun(const v1::GetRunRequest& request) {
  return Call<absl::StatusOr<v1::Run>>([this, request] { return HandleGetRun(request); });
}

absl::StatusOr<v1::Run> FleetCore::HandleGetRun(const v1::GetRunRequest& request) {
  auto run = store_->GetRun(request.run_id());
  if (!run.ok()) return run.status();
  auto tasks = store_->ListTasks(request.run_id());
  if (!tasks.ok()) return tasks.status();
  v1::Run out;
  out.set_run_id(run->run_id);
  out.set_state(run->state);
  out.set_created_unix_ms(absl::ToUnixMillis(run->created));
  if (run->finished != absl::InfinitePast()) {
    out.set_finished_unix_ms(absl::ToUnixMillis(run->finished));
  }
  out.set_suite(run->suite);
  for (const auto& b : run->benchmarks) *out.add_benchmarks() = b;
  for (const storage::TaskRecord& stored : *tasks) {
    auto live = active_tasks_.find(stored.task_id);
    const storage::TaskRecord& t = live != active_tasks_.end() ? live->second : stored;
    v1::NodeTask* nt = out.add_tasks();
    nt->set_task_id(t.task_id);
    nt->set_node(t.node);
    nt->set_state(t.state);
    nt->set_reason(t.reason);
    for (const auto& o : t.outcomes) *nt->add_outcomes() = o;
    if (auto p = progress_.find(t.task_id); p != progress_.end()) {
      nt->set_progress_benchmark(p->second.benchmark);
      nt->set_progress_fraction(p->second.fraction);
      nt->set_progress_message(p->second.message);
    }
  }
  if (request.include_samples()) {
    auto samples = store_->ListSamplesForRun(request.run_id());
    if (!samples.ok()) return samples.status();
    for (auto& s : *samples) *out.add_samples() = std::move(s);
  }
  return out;
}

absl::Status FleetCore::CancelRun(const std::string& run_id) {
  return Call<absl::Status>([this, run_id] { return HandleCancelRun(run_id); });
}

absl::Status FleetCore::HandleCancelRun(const std::string& run_id) {
  auto run = store_->GetRun(run_id);
  if (!run.ok()) return run.status();
  std::vector<std::string> ids;
  for (const auto& [id, t] : active_tasks_) {
    if (t.run_id == run_id) ids.push_back(id);
  }
  for (const std::string& id : ids) {
    storage::TaskRecord& t = active_tasks_.at(id);
    if (t.state == v1::TASK_STATE_QUEUED) {
      FinishTask(t, v1::TASK_STATE_CANCELLED, "cancelled by user before it started");
      continue;
    }
    // In flight: ask the agent; its final report ends the task.
    auto s = sessions_.find(t.node);
    if (s != sessions_.end() && s->second.link) {
      v1::ControllerMessage msg;
      msg.mutable_cancel_task()->set_task_id(id);
      s->second.link->Send(msg);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::ListRunsResponse> FleetCore::ListRuns(uint32_t limit) {
  auto runs = store_->ListRuns(static_cast<int>(std::clamp<uint32_t>(limit ? limit : 20, 1, 1000)));
  if (!runs.ok()) return runs.status();
  v1::ListRunsResponse response;
  for (const storage::RunRecord& r : *runs) {
    v1::Run* run = response.add_runs();
    run->set_run_id(r.run_id);
    run->set_state(r.state);
    run->set_created_unix_ms(absl::ToUnixMillis(r.created));
    if (r.finished != absl::InfinitePast()) {
      run->set_finished_unix_ms(absl::ToUnixMillis(r.finished));
    }
    run->set_suite(r.suite);
    for (const auto& b : r.benchmarks) *run->add_benchmarks() = b;
  }
  return response;
}

absl::StatusOr<v1::RankResponse> FleetCore::Rank(const v1::RankRequest& request) {
  if (request.metric().empty()) {
    return absl::InvalidArgumentError("--metric is required, e.g. gemm.cpu.fp32.tflops");
  }
  const std::string by = request.by().empty() ? "node" : request.by();
  const absl::Duration window = request.window_ms() > 0
                                    ? absl::Milliseconds(request.window_ms())
                                    : options_.rank_window;
  // The compact table names each node once: a million points cost a
  // million doubles, not two million strings (docs/storage.md).
  auto table = store_->MetricPointTableSince(request.metric(), clock_->Now() - window);
  if (!table.ok()) return table.status();
  auto nodes = store_->ListNodes();
  if (!nodes.ok()) return nodes.status();
  std::map<std::string, NodeSeries> series;
  for (const storage::NodeRecord& n : *nodes) {
    series[n.name].node = n.name;
    series[n.name].labels = n.labels;
  }
  std::vector<NodeSeries*> by_index;
  for (const std::string& name : table->nodes) {
    NodeSeries& s = series[name];
    s.node = name;
    by_index.push_back(&s);
  }
  for (const storage::MetricPointTable::Point& p : table->points) {
    by_index[p.node]->values.push_back(p.value);
  }
  std::vector<NodeSeries> list;
  for (auto& [name, s] : series) {
    if (!s.values.empty()) list.push_back(std::move(s));
  }
  const MetricInfo* info = FindMetric(request.metric());
  // Unknown metrics are ranked as throughput; lower-is-better ones are known.
  const bool higher_is_better = info == nullptr || info->higher_is_better;
  return RankByCostPerThroughput(request.metric(), by, higher_is_better, list);
}

absl::StatusOr<v1::HistoryResponse> FleetCore::History(const v1::HistoryRequest& request) {
  if (request.node().empty() || request.metric().empty()) {
    return absl::InvalidArgumentError("--node and --metric are required");
  }
  const int limit = static_cast<int>(std::clamp<uint32_t>(
      request.limit() ? request.limit() : 100, 1, 100000));
  auto samples = store_->History(request.node(), request.metric(), limit);
  if (!samples.ok()) return samples.status();
  v1::HistoryResponse response;
  for (auto& s : *samples) *response.add_samples() = std::move(s);
  return response;
}

FleetCore::Stats FleetCore::GetStats() {
  absl::MutexLock lock(&stats_mu_);
  return stats_;
}

}  // namespace fleetbench::controller
