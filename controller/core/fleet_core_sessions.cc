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
#include "google/protobuf/util/message_differencer.h"

namespace fleetbench::controller {

std::string FleetCore::NodeOfLink(const std::shared_ptr<AgentLink>& link) const {
  for (const auto& [name, session] : sessions_) {
    if (session.link == link) return name;
  }
  return "";
}

void FleetCore::StoreDeclaredMetrics(const v1::Hello& hello) {
  std::vector<v1::MetricDescriptor> changed;
  for (const v1::Capability& capability : hello.capabilities()) {
    for (v1::MetricDescriptor d : capability.metrics()) {
      if (d.benchmark().empty()) d.set_benchmark(capability.benchmark());
      auto stored = declared_metrics_.find(d.name());
      if (stored != declared_metrics_.end() &&
          google::protobuf::util::MessageDifferencer::Equals(stored->second, d)) {
        continue;
      }
      changed.push_back(std::move(d));
    }
  }
  if (changed.empty()) return;
  if (absl::Status s = store_->UpsertMetricDescriptors(changed); !s.ok()) {
    if (!metric_write_failure_logged_) {
      LOG(ERROR) << "storing the metrics declared by node " << hello.name()
                 << " (ranking keeps the previous declarations; logged once): " << s;
      metric_write_failure_logged_ = true;
    }
    return;
  }
  metric_write_failure_logged_ = false;
  for (v1::MetricDescriptor& d : changed) {
    const std::string name = d.name();
    declared_metrics_[name] = std::move(d);
  }
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
    NoteStoreFailure(s, absl::StrCat("storing node ", name));
  }
  StoreDeclaredMetrics(hello);

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
        PersistTask(task, "storing the start of");
      }
    } else if (finished.contains(task.task_id)) {
      // Its final report is in the agent's spool and comes next. An agent
      // that says so and then sends nothing must not hold the task (and its
      // node) forever: it has one heartbeat timeout.
      promised_reports_[task.task_id] = now + options_.heartbeat_timeout;
    } else if (!task.group_id.empty()) {
      // A member sent but not started, or no longer run: its group started
      // together and cannot take one member back alone.
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
        PersistTask(*t, "requeueing");
      }
    } else {
      FinishTask(task, v1::TASK_STATE_LOST,
                 "agent restarted while the task was running; its partial "
                 "results are kept");
    }
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
  const std::string node = NodeOfLink(link);
  if (node.empty()) return;  // a replaced stream still talking
  Session& session = sessions_[node];
  session.last_seen = clock_->Now();
  if (!session.online) {
    session.online = true;
    TryDispatch();
  }
  if (message.has_kv_request()) {
    HandleKvRequest(link, node, message.kv_request());
  } else if (message.has_port_published()) {
    HandlePortPublished(node, message.port_published());
  } else if (message.has_task_started()) {
    auto it = active_tasks_.find(message.task_started().task_id());
    if (it != active_tasks_.end() && it->second.node == node &&
        it->second.state == v1::TASK_STATE_DISPATCHED) {
      it->second.state = v1::TASK_STATE_RUNNING;
      it->second.updated = clock_->Now();
      PersistTask(it->second, "storing the start of");
      UpdateRunState(it->second.run_id);
    }
  } else if (message.has_progress()) {
    const v1::Progress& p = message.progress();
    auto it = active_tasks_.find(p.task_id());
    // A fraction that is not a number says nothing; NaN would also pass
    // std::clamp unchanged.
    if (it != active_tasks_.end() && it->second.node == node && std::isfinite(p.fraction())) {
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
  // A group cannot wait for a member whose stream is gone: its relay and
  // its cancel travel on that stream. The member is lost, and its group
  // ends (SettleGroup).
  std::vector<std::string> members;
  for (const auto& [id, task] : active_tasks_) {
    if (task.node == node && !task.group_id.empty() && task.state != v1::TASK_STATE_QUEUED &&
        !promised_reports_.contains(id)) {
      members.push_back(id);
    }
  }
  for (const std::string& id : members) {
    auto it = active_tasks_.find(id);
    if (it != active_tasks_.end()) FinishTask(it->second, v1::TASK_STATE_LOST, "disconnected");
  }
  if (!members.empty()) TryDispatch();
}

void FleetCore::ExpirePromisedReports(absl::Time now) {
  // Collected first: FinishTask erases entries (a pair partner's too).
  std::vector<std::string> due;
  for (const auto& [task_id, deadline] : promised_reports_) {
    if (now >= deadline) due.push_back(task_id);
  }
  for (const std::string& task_id : due) {
    if (!promised_reports_.contains(task_id)) continue;
    auto task = active_tasks_.find(task_id);
    if (task == active_tasks_.end()) {
      promised_reports_.erase(task_id);
      continue;
    }
    FinishTask(task->second, v1::TASK_STATE_LOST,
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

}  // namespace fleetbench::controller
