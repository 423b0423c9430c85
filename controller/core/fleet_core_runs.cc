// FleetCore: the run lifecycle. A StartRun request becomes a run and its
// tasks (one per node, or two per pair); tasks end (FinishTask) and the run's
// state follows its tasks (UpdateRunState); a cancel ends what has not
// started and asks agents to stop the rest.
#include "controller/core/fleet_core.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/api_enums.h"
#include "common/reason.h"
#include "common/ulid.h"
#include "common/wire_limits.h"
#include "controller/core/pairing.h"

namespace fleetbench::controller {

absl::Status FleetCore::ValidateSpecs(const v1::StartRunRequest& request,
                                      const std::set<std::string>& pairwise) const {
  if (!options_.validate_spec) return absl::OkStatus();
  for (const v1::BenchmarkSpec& spec : request.benchmarks()) {
    // A pairwise half is what an agent runs: "role" and "peer_node" are the
    // core's to add (and "peer" at dispatch), "pairing" and "reference" the
    // core's to take away, so the user's spec alone would lack a role. The
    // client half differs only in those keys; the server half needs no peer.
    const absl::Status valid = options_.validate_spec(
        pairwise.contains(spec.name()) ? SplitPairSpec(spec, "", "").server : spec);
    if (valid.ok()) continue;
    // Cut, as a reason is: the message quotes the user's value.
    return absl::InvalidArgumentError(TruncateReason(ReasonOf(spec.name(), valid.message())));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::StartRunResponse> FleetCore::HandleStartRun(
    const v1::StartRunRequest& request) {
  if (request.benchmarks().empty()) {
    return absl::InvalidArgumentError("no benchmark given (--bench NAME[,NAME...])");
  }
  // Sizes first: a run is copied into every task, every RunTask and every
  // ListRuns page, so what would not fit there is refused here.
  if (absl::Status s = CheckStartRunBounds(request); !s.ok()) return s;
  // Which benchmarks does anyone know? Capabilities come from hellos.
  std::set<std::string> known;
  for (const auto& [name, s] : sessions_) {
    for (const auto& c : s.capabilities) known.insert(c.benchmark());
  }
  for (const v1::BenchmarkSpec& spec : request.benchmarks()) {
    if (!known.empty() && !known.contains(spec.name())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown benchmark '", ClipInput(spec.name()), "'; known: ",
          absl::StrJoin(known, ", ")));
    }
    // A week: past that a "timeout" is a typo, and the runner's deadline
    // arithmetic stays far from overflow.
    constexpr int64_t kMaxTimeoutMs = int64_t{7} * 24 * 3600 * 1000;
    if (spec.timeout_ms() < 0 || spec.timeout_ms() > kMaxTimeoutMs) {
      return absl::InvalidArgumentError(absl::StrCat(
          spec.name(), ": timeout_ms ", spec.timeout_ms(), " is outside 0 (the plugin's default) .. ",
          kMaxTimeoutMs, " (7 days)"));
    }
  }
  // Pick nodes: named ones (each must exist), else every online node, then
  // filter by labels.
  std::vector<std::string> nodes;
  if (!request.nodes().empty()) {
    for (const std::string& n : request.nodes()) {
      auto it = sessions_.find(n);
      if (it == sessions_.end()) {
        return absl::NotFoundError(absl::StrCat("unknown node '", ClipInput(n), "'"));
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
  if (absl::Status valid = ValidateSpecs(request, pairwise); !valid.ok()) return valid;
  // A group run: its collective benchmarks run as groups over the nodes
  // (fleet_core_groups.cc), after the others of the request, which run as
  // they would alone.
  std::vector<v1::BenchmarkSpec> grouped;
  std::vector<GroupPlan> group_plans;
  if (request.group().mode() != v1::GROUP_MODE_UNSPECIFIED) {
    absl::StatusOr<std::vector<GroupPlan>> planned = PlanGroupRun(request, nodes, &grouped);
    if (!planned.ok()) return planned.status();
    group_plans = *std::move(planned);
  }
  std::set<std::string> grouped_names;
  for (const v1::BenchmarkSpec& spec : grouped) grouped_names.insert(spec.name());
  std::vector<v1::BenchmarkSpec> per_node;
  std::vector<v1::BenchmarkSpec> paired;
  for (const v1::BenchmarkSpec& spec : request.benchmarks()) {
    if (grouped_names.contains(spec.name())) continue;
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
  if (!paired.empty() && pairs.empty() && per_node.empty() && grouped.empty()) {
    return absl::FailedPreconditionError("the pairwise benchmarks need at least two nodes");
  }

  const absl::Time now = clock_->Now();
  storage::RunRecord run;
  run.run_id = NewUlid(now);
  if (!group_plans.empty()) {
    run.group = request.group();
    run.group_nodes = nodes;
  }
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
      // Else the run's list.
      if (!paired.empty() || !grouped.empty()) t.benchmarks = per_node;
      tasks.push_back(std::move(t));
    }
  }
  for (const v1::BenchmarkSpec& spec : paired) {
    auto spec_pairs = PlanPairs(spec, nodes);
    for (const auto& [server_node, client_node] : *spec_pairs) {
      storage::TaskRecord server = new_task(server_node);
      storage::TaskRecord client = new_task(client_node);
      PairSpecs specs = SplitPairSpec(spec, server_node, client_node);
      server.benchmarks = {std::move(specs.server)};
      client.benchmarks = {std::move(specs.client)};
      server.peer_task_id = client.task_id;
      client.peer_task_id = server.task_id;
      tasks.push_back(std::move(server));
      tasks.push_back(std::move(client));
    }
  }
  for (storage::TaskRecord& t : MakeGroupTasks(run.run_id, group_plans, grouped)) {
    tasks.push_back(std::move(t));
  }
  if (absl::Status s = store_->CreateRun(run, tasks); !s.ok()) return s;
  active_runs_[run.run_id] = run;
  for (storage::TaskRecord& t : tasks) {
    RegisterGroupTask(t);
    active_tasks_[t.task_id] = t;
  }
  TryDispatch();

  v1::StartRunResponse response;
  response.set_run_id(run.run_id);
  for (const std::string& n : nodes) response.add_nodes(n);
  return response;
}

absl::Status FleetCore::HandleCancelRun(const std::string& run_id) {
  auto run = store_->GetRun(run_id);
  if (!run.ok()) return run.status();
  // A group ends as a whole, blaming no member; and no further pass is
  // planned for a run the user stopped.
  user_cancelled_runs_.insert(run_id);
  std::vector<std::string> group_ids;
  for (const auto& [id, g] : groups_) {
    if (g.run_id == run_id) group_ids.push_back(id);
  }
  for (const std::string& id : group_ids) {
    FailGroup(id, absl::StrCat("group ", id, ": cancelled by user"), {});
  }
  std::vector<std::string> ids;
  for (const auto& [id, t] : active_tasks_) {
    if (t.run_id == run_id) ids.push_back(id);
  }
  for (const std::string& id : ids) {
    // Ending one task may end others (a pair's other half, a group's members).
    auto it = active_tasks_.find(id);
    if (it == active_tasks_.end()) continue;
    storage::TaskRecord& t = it->second;
    if (t.state == v1::TASK_STATE_QUEUED) {
      FinishTask(t, v1::TASK_STATE_CANCELLED, "cancelled by user before it started");
      continue;
    }
    if (promised_reports_.contains(id)) {
      // The agent said it finished this task and runs it no more: asking it
      // to stop would change nothing, and its final report has not come.
      FinishTask(t, v1::TASK_STATE_CANCELLED,
                 "cancelled by user; the agent had said the task finished, but its final "
                 "report had not arrived");
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

void FleetCore::PersistTask(const storage::TaskRecord& task, std::string_view doing) {
  if (absl::Status s = store_->UpdateTask(task); !s.ok()) {
    LOG(ERROR) << doing << " task " << task.task_id << ": " << s;
    NoteStoreFailure(s, absl::StrCat(std::string(doing), " task ", task.task_id));
  }
}

void FleetCore::FinishTask(storage::TaskRecord& task, v1::TaskState state,
                           const std::string& reason) {
  task.state = state;
  task.reason = TruncateReason(reason);  // may quote a peer's full reason
  task.updated = clock_->Now();
  ShapeGroupMemberEnd(task);
  const storage::TaskRecord ended = task;
  if (absl::Status s = store_->UpdateTask(task); !s.ok()) {
    // Kept, and written again by the retry: a lost end would leave its
    // run running forever.
    NoteStoreFailure(s, absl::StrCat("finishing task ", task.task_id));
    unstored_ends_[ended.task_id] = ended;
  }
  progress_.erase(task.task_id);
  promised_reports_.erase(task.task_id);
  awaiting_port_.erase(task.task_id);
  active_tasks_.erase(task.task_id);  // `task` dangles from here on
  SettlePairPartner(ended);
  SettleGroup(ended);
  UpdateRunState(ended.run_id);
}

void FleetCore::UpdateRunState(const std::string& run_id) {
  auto run_it = active_runs_.find(run_id);
  if (run_it == active_runs_.end()) return;
  auto tasks = store_->ListTasks(run_id);
  if (!tasks.ok()) {
    NoteStoreFailure(tasks.status(), absl::StrCat("reading the tasks of run ", run_id));
    unsettled_runs_.insert(run_id);
    return;
  }
  bool all_done = true, any_started = false, any_failed = false, any_cancelled = false;
  for (const storage::TaskRecord& stored : *tasks) {
    // Prefer the in-memory copy, live or ended but not yet stored: it is
    // the newest.
    auto live = active_tasks_.find(stored.task_id);
    auto unstored = unstored_ends_.find(stored.task_id);
    const v1::TaskState state = live != active_tasks_.end()       ? live->second.state
                                : unstored != unstored_ends_.end() ? unstored->second.state
                                                                   : stored.state;
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
    if (absl::Status s = store_->SetRunState(run_id, state, finished); s.ok()) {
      run_it->second.state = state;
    } else {
      // The cached state stays what the store holds, and the run stays
      // active until the retry writes it: forgetting it here left runs
      // `running` forever.
      NoteStoreFailure(s, absl::StrCat("setting run ", run_id, " ", state));
      unsettled_runs_.insert(run_id);
      return;
    }
  }
  unsettled_runs_.erase(run_id);
  if (all_done) {
    active_runs_.erase(run_it);
    user_cancelled_runs_.erase(run_id);
  }
}

}  // namespace fleetbench::controller
