// FleetCore: node sessions. A hello opens (or replaces) a node's session,
// stores the metrics its plugins declare and reconciles its in-flight tasks;
// messages keep it alive; a disconnect drops only the link; the sweep
// declares silent nodes offline and their tasks lost.
#include "controller/core/fleet_core.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/reason.h"

namespace fleetbench::controller {
namespace {

// How much of a preemption notice's source an interruption quotes.
constexpr size_t kMaxNoticeSourceEcho = 256;

}  // namespace

void FleetCore::HandleHello(std::shared_ptr<AgentLink> link, v1::Hello hello,
                            std::string peer_host) {
  const absl::Time now = clock_->Now();
  const std::string name = hello.name();
  // Online until now (it reconnected within the timeout): a task it lost
  // was lost to the node, not to a controller restart; unless its
  // departure was announced, and so is recorded already.
  const NodeSessions::Session* before = sessions_.Find(name);
  const bool was_online = before != nullptr && before->online && !before->departing;
  const NodeSessions::Session& session = sessions_.Open(link, hello, peer_host, now);
  ledger_.Heard(name, now);

  storage::NodeRecord record;
  record.name = name;
  record.labels = session.labels;
  record.facts = hello.facts();
  record.agent_version = hello.agent_version();
  record.first_seen = now;
  record.last_seen = now;
  if (absl::Status s = store_->UpsertNode(record); !s.ok()) {
    LOG(ERROR) << "storing node " << name << ": " << s;
    NoteStoreFailure(s, absl::StrCat("storing node ", name));
  }
  declared_metrics_.Declare(hello);

  v1::ControllerMessage welcome;
  welcome.mutable_welcome()->set_node_id(name);
  welcome.mutable_welcome()->set_heartbeat_interval_ms(
      absl::ToInt64Milliseconds(options_.heartbeat_interval));
  link->Send(welcome);

  // Reconcile the node's in-flight tasks with what the agent says it has.
  std::set<std::string> finished(hello.finished_task_ids().begin(),
                                 hello.finished_task_ids().end());
  bool running_known = hello.running_task_id().empty();
  bool lost_a_task = false;
  // By id: ending one task may end its pair partner too.
  for (const std::string& task_id : live_.TaskIdsOfNode(name)) {
    storage::TaskRecord* found = live_.FindTask(task_id);
    if (found == nullptr || found->state == v1::TASK_STATE_QUEUED) continue;
    storage::TaskRecord& task = *found;
    if (task.task_id == hello.running_task_id()) {
      running_known = true;
      if (task.state != v1::TASK_STATE_RUNNING) {
        task.state = v1::TASK_STATE_RUNNING;
        task.updated = now;
        PersistTask(task, "storing the start of");
      }
    } else if (finished.contains(task.task_id)) {
      // Its final report is in the agent's spool and comes next. An agent
      // that says so and then sends nothing must not hold the task (and its
      // node) forever: it has one heartbeat timeout.
      live_.PromiseReport(task.task_id, now + options_.heartbeat_timeout);
    } else if (!task.group_id.empty()) {
      // A member sent but not started, or no longer run: its group started
      // together and cannot take one member back alone.
      lost_a_task |= task.state != v1::TASK_STATE_DISPATCHED;
      FinishTask(task, v1::TASK_STATE_LOST,
                 task.state == v1::TASK_STATE_DISPATCHED
                     ? "agent reconnected without the group task it was sent"
                     : "agent restarted while the group ran");
    } else if (task.state == v1::TASK_STATE_DISPATCHED && IsPairClient(task)) {
      // A client half: sent again once its server's port is known.
      const auto& params = task.benchmarks[0].params();
      if (params.contains("peer")) {
        SendRunTask(task);
      } else {
        live_.AwaitPort(task.task_id);
      }
    } else if (task.state == v1::TASK_STATE_DISPATCHED) {
      // Sent before a controller restart but never started: send again. A
      // pair goes back together (the server's dispatch reserves the client).
      for (storage::TaskRecord* t : {&task, PairPartner(task)}) {
        if (t == nullptr || t->state != v1::TASK_STATE_DISPATCHED) continue;
        t->state = v1::TASK_STATE_QUEUED;
        t->updated = now;
        live_.PortCame(t->task_id);
        PersistTask(*t, "requeueing");
      }
    } else {
      lost_a_task = true;
      FinishTask(task, v1::TASK_STATE_LOST,
                 "agent restarted while the task was running; its partial "
                 "results are kept");
    }
  }
  if (lost_a_task && was_online) {
    ledger_.Interrupted(name, now, v1::INTERRUPTION_KIND_AGENT_RESTART,
                        "the agent restarted while a task ran");
  }
  if (!running_known) {
    absl::StatusOr<storage::TaskRecord> ended = EndedTask(hello.running_task_id());
    if (ended.ok() && ended->node == name && ended->state == v1::TASK_STATE_LOST &&
        ended->group_id.empty()) {
      // Declared lost while the agent was out of reach, yet still running:
      // its final report will settle it (StoreLateReport), so let it finish.
      LOG(INFO) << "node " << name << " still runs task " << ended->task_id
                << ", declared lost; its final report will settle it";
    } else {
      // The agent runs something this controller no longer wants.
      v1::ControllerMessage cancel;
      cancel.mutable_cancel_task()->set_task_id(hello.running_task_id());
      link->Send(cancel);
    }
  }
  LOG(INFO) << "node " << name << " online";
  TryDispatch();
}

void FleetCore::HandleMessage(const std::shared_ptr<AgentLink>& link,
                              v1::AgentMessage message) {
  const std::string node = sessions_.NodeOf(link);
  if (node.empty()) return;  // a replaced stream still talking
  if (sessions_.Heard(node, clock_->Now())) TryDispatch();
  ledger_.Heard(node, clock_->Now());
  if (message.has_preempting()) {
    const v1::Preempting& notice = message.preempting();
    std::string detail =
        absl::StrCat("preemption notice from ", ClipInput(notice.source(), kMaxNoticeSourceEcho));
    if (notice.termination_unix_ms() > 0) {
      absl::StrAppend(&detail, ", ends at ",
                      absl::FormatTime(absl::FromUnixMillis(notice.termination_unix_ms()),
                                       absl::UTCTimeZone()));
    }
    HandleDeparture(node, v1::INTERRUPTION_KIND_PREEMPTED, std::move(detail),
                    absl::StrCat("preempted@", notice.noticed_unix_ms()));
  } else if (message.has_kv_request()) {
    HandleKvRequest(link, node, message.kv_request());
  } else if (message.has_port_published()) {
    HandlePortPublished(node, message.port_published());
  } else if (message.has_task_started()) {
    storage::TaskRecord* task = live_.FindTask(message.task_started().task_id());
    if (task != nullptr && task->node == node && task->state == v1::TASK_STATE_DISPATCHED) {
      task->state = v1::TASK_STATE_RUNNING;
      task->updated = clock_->Now();
      PersistTask(*task, "storing the start of");
      UpdateRunState(task->run_id);
    }
  } else if (message.has_progress()) {
    const v1::Progress& p = message.progress();
    const storage::TaskRecord* task = live_.FindTask(p.task_id());
    // A fraction that is not a number says nothing; NaN would also pass
    // std::clamp unchanged.
    if (task != nullptr && task->node == node && std::isfinite(p.fraction())) {
      live_.SetProgress(p.task_id(), {p.benchmark(), std::clamp(p.fraction(), 0.0, 1.0),
                                      p.message().substr(0, 256)});
    }
  }
}

void FleetCore::HandleDisconnect(const std::shared_ptr<AgentLink>& link) {
  const std::string node = sessions_.NodeOf(link);
  if (node.empty()) return;
  // Stay "online" until the heartbeat timeout: a quick reconnect keeps the
  // running task. Only the link goes.
  sessions_.DropLink(node);
  LOG(INFO) << "node " << node << " disconnected";
  // A group cannot wait for a member whose stream is gone: its relay and
  // its cancel travel on that stream. The member is lost, and its group
  // ends (SettleGroup).
  std::vector<std::string> members;
  for (const auto& [id, task] : live_.tasks()) {
    if (task.node == node && !task.group_id.empty() && task.state != v1::TASK_STATE_QUEUED &&
        !live_.ReportPromised(id)) {
      members.push_back(id);
    }
  }
  for (const std::string& id : members) {
    if (storage::TaskRecord* task = live_.FindTask(id)) {
      FinishTask(*task, v1::TASK_STATE_LOST, "disconnected");
    }
  }
  if (!members.empty()) TryDispatch();
}

void FleetCore::HandleDeparture(const std::string& node, v1::InterruptionKind kind,
                                std::string detail, const std::string& key) {
  const NodeSessions::Session* session = sessions_.Find(node);
  // An interruption of a node this controller has online, once per
  // occasion: the same notice again (said twice, or after a reconnect)
  // says nothing new, and a node already gone (offline, or after a
  // controller restart) was interrupted, if at all, before.
  const bool counts = session != nullptr && session->online && !session->departing &&
                      (key.empty() || session->departure_key != key);
  sessions_.MarkDeparting(node, key);
  if (counts) ledger_.Interrupted(node, clock_->Now(), kind, std::move(detail));
}

void FleetCore::HandleNodeRevoked(const std::string& node) {
  HandleDeparture(node, v1::INTERRUPTION_KIND_REVOKED, "its identity was revoked", "");
}

void FleetCore::ExpirePromisedReports(absl::Time now) {
  // Collected first: FinishTask erases entries (a pair partner's too).
  for (const std::string& task_id : live_.PromisesDue(now)) {
    if (!live_.ReportPromised(task_id)) continue;
    storage::TaskRecord* task = live_.FindTask(task_id);
    if (task == nullptr) {
      live_.ReportCame(task_id);
      continue;
    }
    FinishTask(*task, v1::TASK_STATE_LOST,
               absl::StrCat("the agent said the task had finished but sent no final report "
                            "within ", absl::FormatDuration(options_.heartbeat_timeout),
                            "; what it reported is kept"));
  }
}

void FleetCore::Sweep() {
  const absl::Time now = clock_->Now();
  ExpirePromisedReports(now);
  SweepGroups(now);
  retention_.Sweep(now);
  if (options_.node_expiry > absl::ZeroDuration() && now >= next_node_expiry_) {
    ExpireNodes(now);
    // A short expiry (tests, a lab) is checked often enough to mean it.
    next_node_expiry_ =
        now + std::min(options_.expiry_check_interval, options_.node_expiry / 10);
  }
  for (const NodeSessions::Silent& silent : sessions_.Sweep(now)) {
    ledger_.Gone(silent.node);
    // An announced departure is already recorded as what it was.
    if (silent.was_online && !silent.departing) {
      ledger_.Interrupted(silent.node, silent.last_seen, v1::INTERRUPTION_KIND_OFFLINE,
                          absl::StrCat("no heartbeat for ",
                                       absl::FormatDuration(options_.heartbeat_timeout)));
    }
    for (const std::string& task_id : live_.TaskIdsOfNode(silent.node)) {
      storage::TaskRecord* task = live_.FindTask(task_id);
      if (task == nullptr || task->state == v1::TASK_STATE_QUEUED) continue;
      FinishTask(*task, v1::TASK_STATE_LOST,
                 absl::StrCat("agent lost: no heartbeat for ",
                              absl::FormatDuration(silent.silent_for),
                              " (timeout ", absl::FormatDuration(options_.heartbeat_timeout),
                              ")"));
    }
  }
  ledger_.Flush(now, options_.uptime_flush_interval);
  {
    absl::MutexLock lock(&stats_mu_);
    stats_.nodes_online = sessions_.online_count();
  }
}

}  // namespace fleetbench::controller
