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
#include "controller/core/workload_nodes.h"

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
  const std::set<std::string> known = sessions_.DeclaredBenchmarks(/*pairwise_only=*/false);
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
      const NodeSessions::Session* session = sessions_.Find(n);
      if (session == nullptr) {
        return absl::NotFoundError(absl::StrCat("unknown node '", ClipInput(n), "'"));
      }
      if (!session->online) {
        return absl::FailedPreconditionError(absl::StrCat("node '", n, "' is offline"));
      }
      if (session->departing) {
        return absl::FailedPreconditionError(
            absl::StrCat("node '", n, "' is going away (preempted or revoked)"));
      }
      nodes.push_back(n);
    }
  } else {
    nodes = sessions_.OnlineNodes();
  }
  std::erase_if(nodes, [&](const std::string& n) {
    const auto& labels = sessions_.Find(n)->labels;
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
  // A run of declared workloads goes to the nodes that declare them.
  if (absl::Status s = SelectWorkloadNodes(request, sessions_, !request.nodes().empty(), &nodes);
      !s.ok()) {
    return s;
  }

  // Pairwise benchmarks (capabilities say which) become pairs of tasks;
  // the rest run on every node.
  const std::set<std::string> pairwise = sessions_.DeclaredBenchmarks(/*pairwise_only=*/true);
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
  live_.AddRun(run);
  for (storage::TaskRecord& t : tasks) {
    groups_.Register(t);
    live_.AddTask(std::move(t));
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
  // planned for a run the user stopped. A run that already settled is
  // not noted: nothing would ever forget it.
  if (live_.HasRun(run_id)) live_.NoteCancelledByUser(run_id);
  for (const std::string& id : groups_.OfRun(run_id)) {
    FailGroup(id, absl::StrCat("group ", id, ": cancelled by user"), {});
  }
  std::vector<std::string> ids;
  for (const auto& [id, t] : live_.tasks()) {
    if (t.run_id == run_id) ids.push_back(id);
  }
  for (const std::string& id : ids) {
    // Ending one task may end others (a pair's other half, a group's members).
    storage::TaskRecord* task = live_.FindTask(id);
    if (task == nullptr) continue;
    storage::TaskRecord& t = *task;
    if (t.state == v1::TASK_STATE_QUEUED) {
      FinishTask(t, v1::TASK_STATE_CANCELLED, "cancelled by user before it started");
      continue;
    }
    if (live_.ReportPromised(id)) {
      // The agent said it finished this task and runs it no more: asking it
      // to stop would change nothing, and its final report has not come.
      FinishTask(t, v1::TASK_STATE_CANCELLED,
                 "cancelled by user; the agent had said the task finished, but its final "
                 "report had not arrived");
      continue;
    }
    // In flight: ask the agent; its final report ends the task.
    v1::ControllerMessage msg;
    msg.mutable_cancel_task()->set_task_id(id);
    sessions_.Send(t.node, msg);
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
  groups_.ShapeMemberEnd(task);
  const storage::TaskRecord ended = task;
  if (absl::Status s = store_->UpdateTask(task); !s.ok()) {
    // Kept, and written again by the retry: a lost end would leave its
    // run running forever.
    NoteStoreFailure(s, absl::StrCat("finishing task ", task.task_id));
    live_.KeepUnstoredEnd(ended);
  }
  live_.EndTask(ended.task_id);  // `task` dangles from here on
  SettlePairPartner(ended);
  SettleGroup(ended);
  UpdateRunState(ended.run_id);
}

void FleetCore::UpdateRunState(const std::string& run_id) {
  storage::RunRecord* run = live_.FindRun(run_id);
  if (run == nullptr) return;
  auto tasks = store_->ListTasks(run_id);
  if (!tasks.ok()) {
    NoteStoreFailure(tasks.status(), absl::StrCat("reading the tasks of run ", run_id));
    live_.NoteUnsettled(run_id);
    return;
  }
  bool all_done = true, any_started = false, any_failed = false, any_cancelled = false;
  for (const storage::TaskRecord& stored : *tasks) {
    // Prefer the in-memory copy, live or ended but not yet stored: it is
    // the newest.
    const v1::TaskState state = live_.Newest(stored).state;
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
  if (state != run->state) {
    if (absl::Status s = store_->SetRunState(run_id, state, finished); s.ok()) {
      run->state = state;
    } else {
      // The cached state stays what the store holds, and the run stays
      // active until the retry writes it: forgetting it here left runs
      // `running` forever.
      NoteStoreFailure(s, absl::StrCat("setting run ", run_id, " ", state));
      live_.NoteUnsettled(run_id);
      return;
    }
  }
  live_.Settled(run_id);
  if (all_done) {
    std::vector<storage::TaskRecord> newest;
    newest.reserve(tasks->size());
    for (const storage::TaskRecord& t : *tasks) newest.push_back(live_.Newest(t));
    NoteRunInterruptions(*run, newest);
    live_.EraseRun(run_id);  // `run` dangles from here on
  }
}

}  // namespace fleetbench::controller
