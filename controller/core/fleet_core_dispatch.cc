// FleetCore: dispatch and pairing. Which queued task goes to which free node
// next, and the two halves of a pairwise benchmark: the client half starts
// once its server published a port, and a half that ends settles the other.
#include "controller/core/fleet_core.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/api_enums.h"

namespace fleetbench::controller {

bool FleetCore::IsPairClient(const storage::TaskRecord& task) const {
  if (task.peer_task_id.empty() || task.benchmarks.empty()) return false;
  auto role = task.benchmarks[0].params().find("role");
  return role != task.benchmarks[0].params().end() && role->second == "client";
}

storage::TaskRecord* FleetCore::PairPartner(const storage::TaskRecord& task) {
  if (task.peer_task_id.empty()) return nullptr;
  return live_.FindTask(task.peer_task_id);
}

void FleetCore::SendRunTask(const storage::TaskRecord& task) {
  v1::ControllerMessage msg;
  v1::RunTask* run_task = msg.mutable_run_task();
  run_task->set_task_id(task.task_id);
  run_task->set_run_id(task.run_id);
  if (!task.benchmarks.empty()) {
    for (const v1::BenchmarkSpec& spec : task.benchmarks) *run_task->add_benchmarks() = spec;
  } else if (const storage::RunRecord* run = live_.FindRun(task.run_id)) {
    for (const v1::BenchmarkSpec& spec : run->benchmarks) *run_task->add_benchmarks() = spec;
  }
  if (!task.group_id.empty()) FillGroupAssignment(task, run_task->mutable_group());
  sessions_.Send(task.node, msg);
}

void FleetCore::TryDispatch() {
  // Oldest run first; within a run, task order. A node takes one task at a
  // time: two benchmarks on one node would spoil both numbers. A pair (the
  // two halves of a pairwise benchmark) starts only when both nodes are
  // free, so a node is in at most one test at a time and pairs run in
  // rounds.
  std::vector<storage::TaskRecord*> queued;
  for (auto& [id, task] : live_.tasks()) {
    if (task.state == v1::TASK_STATE_QUEUED && !IsPairClient(task)) queued.push_back(&task);
  }
  std::sort(queued.begin(), queued.end(), [](auto* a, auto* b) {
    return std::tie(a->run_id, a->task_id) < std::tie(b->run_id, b->task_id);
  });
  // A group (fleet_core_groups.cc) starts all its members at once; the
  // nodes of a group waiting only for busy members are reserved for it.
  std::set<std::string> reserved;
  auto ready = [&](const std::string& node) {
    return NodeReady(node) && !reserved.contains(node);
  };
  for (storage::TaskRecord* task : queued) {
    if (task->state != v1::TASK_STATE_QUEUED) continue;  // went with its group
    if (!task->group_id.empty()) {
      TryDispatchGroup(*task, reserved);
      continue;
    }
    if (!ready(task->node)) continue;
    storage::TaskRecord* partner = PairPartner(*task);
    if (!task->peer_task_id.empty()) {
      if (partner == nullptr || partner->state != v1::TASK_STATE_QUEUED ||
          partner->node == task->node || !ready(partner->node)) {
        continue;
      }
    }
    const storage::RunRecord* run = live_.FindRun(task->run_id);
    if (run != nullptr && run->max_parallel > 0) {
      const uint32_t in_flight = live_.InFlight(task->run_id) + (partner ? 1 : 0);
      if (in_flight >= std::max<uint32_t>(run->max_parallel, partner ? 2 : 1)) continue;
    }
    std::vector<storage::TaskRecord*> starting = {task};
    if (partner) starting.push_back(partner);
    bool stored = true;
    for (storage::TaskRecord* t : starting) {
      t->state = v1::TASK_STATE_DISPATCHED;
      t->updated = clock_->Now();
      if (absl::Status s = store_->UpdateTask(*t); !s.ok()) {
        LOG(ERROR) << "dispatching " << t->task_id << ": " << s;
        // The store retry dispatches again (RetryStoreBacklog).
        NoteStoreFailure(s, absl::StrCat("dispatching task ", t->task_id));
        stored = false;
      }
    }
    if (!stored) {
      for (storage::TaskRecord* t : starting) t->state = v1::TASK_STATE_QUEUED;
      continue;
    }
    SendRunTask(*task);
    // The client half goes out once the server half published its port.
    if (partner) live_.AwaitPort(partner->task_id);
    UpdateRunState(task->run_id);
  }
}

void FleetCore::HandlePortPublished(const std::string& node, const v1::PortPublished& port) {
  const storage::TaskRecord* server = live_.FindTask(port.task_id());
  if (server == nullptr || server->node != node) return;
  storage::TaskRecord* client = PairPartner(*server);
  if (client == nullptr || !live_.AwaitingPort(client->task_id)) return;
  if (port.port() <= 0 || port.port() > 65535) {
    FinishTask(*client, v1::TASK_STATE_FAILED,
               absl::StrCat("peer ", node, " published an invalid port ", port.port()));
    return;
  }
  const NodeSessions::Session* session = sessions_.Find(node);
  const std::string host = session != nullptr ? session->address : "";
  for (v1::BenchmarkSpec& spec : client->benchmarks) {
    (*spec.mutable_params())["peer"] = absl::StrCat(host, ":", port.port());
  }
  PersistTask(*client, "storing the peer address of");
  live_.PortCame(client->task_id);
  SendRunTask(*client);
}

void FleetCore::SettlePairPartner(const storage::TaskRecord& task) {
  storage::TaskRecord* partner = PairPartner(task);
  if (partner == nullptr) return;
  if (live_.AwaitingPort(partner->task_id) || partner->state == v1::TASK_STATE_QUEUED) {
    // The server half ended before its port was known: the client never ran.
    live_.PortCame(partner->task_id);
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
    v1::ControllerMessage msg;
    msg.mutable_cancel_task()->set_task_id(partner->task_id);
    sessions_.Send(partner->node, msg);
  }
}

}  // namespace fleetbench::controller
