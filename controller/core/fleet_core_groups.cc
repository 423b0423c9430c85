// FleetCore: group tasks (docs/collectives.md). A run with group options turns its
// collective benchmarks into groups (controller/core/group_plan.h), one task per
// member node; a group is dispatched all at once when every member's node
// is connected and idle; while it runs the core is its rendezvous, a
// key-value relay over the agent streams scoped to the group, with one
// deadline. A member that fails, disconnects or misses the deadline has the
// others cancelled, and every member's reason names who was at fault. When
// the last group of a run ended, the next pass is planned. The relay's
// requests are answered in fleet_core_relay.cc.
#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api_enums.h"
#include "common/logging.h"
#include "common/reason.h"
#include "common/ulid.h"
#include "controller/core/fleet_core.h"
#include "controller/core/group_plan.h"

namespace fleetbench::controller {
namespace {

// "member n2" / "members n2, n4".
std::string Members(const std::vector<std::string>& nodes) {
  return absl::StrCat(nodes.size() == 1 ? "member " : "members ", absl::StrJoin(nodes, ", "));
}

constexpr char kHeadlineSuffix[] = ".busbw_GBps";

}  // namespace

// ------------------------------------------------------------ planning

absl::StatusOr<std::vector<GroupPlan>> FleetCore::PlanGroupRun(
    const v1::StartRunRequest& request, const std::vector<std::string>& nodes,
    std::vector<v1::BenchmarkSpec>* grouped) {
  std::set<std::string> collective;
  for (const auto& [name, s] : sessions_.all()) {
    for (const auto& c : s.capabilities) {
      if (c.collective()) collective.insert(c.benchmark());
    }
  }
  std::vector<std::string> asked;
  for (const v1::BenchmarkSpec& spec : request.benchmarks()) {
    asked.push_back(ClipInput(spec.name()));
    if (collective.contains(spec.name())) grouped->push_back(spec);
  }
  if (grouped->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a group run needs a collective benchmark (such as allreduce); none of ",
        absl::StrJoin(asked, ", "), " is one"));
  }
  // Every member must be able to run every grouped benchmark: one node that
  // cannot would fail the whole group at its start.
  std::vector<std::string> lacking;
  for (const std::string& node : nodes) {
    const NodeSessions::Session& session = *sessions_.Find(node);
    for (const v1::BenchmarkSpec& spec : *grouped) {
      auto c = std::find_if(session.capabilities.begin(), session.capabilities.end(),
                            [&](const v1::Capability& c) { return c.benchmark() == spec.name(); });
      if (c == session.capabilities.end()) {
        lacking.push_back(absl::StrCat(node, " (", spec.name(), " not installed)"));
      } else if (c->status() != v1::CAPABILITY_STATUS_AVAILABLE || !c->collective()) {
        lacking.push_back(absl::StrCat(
            node, " (", spec.name(),
            c->reason().empty() ? " unavailable" : absl::StrCat(": ", c->reason()), ")"));
      }
    }
  }
  if (!lacking.empty()) {
    return absl::FailedPreconditionError(TruncateReason(absl::StrCat(
        "cannot run the group: ", lacking.size() == 1 ? "node " : "nodes ",
        absl::StrJoin(lacking, ", "), " cannot take part")));
  }
  absl::StatusOr<std::vector<GroupPlan>> plans = PlanGroups(request.group(), nodes);
  if (!plans.ok()) return plans.status();
  if (plans->empty()) return absl::InvalidArgumentError("the group options plan no group");
  return plans;
}

std::vector<storage::TaskRecord> FleetCore::MakeGroupTasks(
    const std::string& run_id, const std::vector<GroupPlan>& plans,
    const std::vector<v1::BenchmarkSpec>& specs) {
  const absl::Time now = clock_->Now();
  std::vector<storage::TaskRecord> tasks;
  for (const GroupPlan& plan : plans) {
    const std::string group_id = NewUlid(now);
    for (size_t rank = 0; rank < plan.members.size(); ++rank) {
      storage::TaskRecord t;
      t.task_id = NewUlid(now);
      t.run_id = run_id;
      t.node = plan.members[rank];
      t.state = v1::TASK_STATE_QUEUED;
      t.updated = now;
      t.benchmarks = specs;
      t.group_id = group_id;
      t.group_rank = static_cast<int>(rank);
      t.group_members = plan.members;
      t.group_pass = plan.pass;
      tasks.push_back(std::move(t));
    }
  }
  return tasks;
}

void FleetCore::FailInterruptedGroups() {
  // A group is dispatched all at once and its relay lives in this process:
  // one with a member in flight (or a member already ended) cannot go on
  // after a restart. Its agents are told to stop at their next hello (their
  // tasks have ended here).
  std::vector<std::string> interrupted;
  for (const auto& [id, group] : groups_.all()) {
    bool whole_and_queued = true;
    for (const std::string& task_id : group.task_ids) {
      const storage::TaskRecord* t = live_.FindTask(task_id);
      whole_and_queued &= t != nullptr && t->state == v1::TASK_STATE_QUEUED;
    }
    if (!whole_and_queued) interrupted.push_back(id);
  }
  for (const std::string& id : interrupted) {
    std::set<std::string> in_flight;
    for (const std::string& task_id : groups_.Find(id)->task_ids) {
      const storage::TaskRecord* t = live_.FindTask(task_id);
      if (t != nullptr && IsInFlight(t->state)) in_flight.insert(task_id);
    }
    FailGroup(id,
              absl::StrCat("group ", id,
                           ": the controller restarted while the group ran; its rendezvous "
                           "state was lost"),
              in_flight);
    // No agent is connected yet to answer a cancel: the members in flight
    // end here, and their agents are told to stop when they say hello.
    for (const std::string& task_id : in_flight) {
      if (storage::TaskRecord* t = live_.FindTask(task_id)) {
        FinishTask(*t, v1::TASK_STATE_FAILED, "");
      }
    }
  }
}

// ------------------------------------------------------------ dispatch

bool FleetCore::NodeReady(const std::string& node) const {
  return sessions_.Reachable(node) && !live_.NodeBusy(node);
}

absl::Duration FleetCore::GroupTimeout(const storage::TaskRecord& member) const {
  absl::Duration total = absl::ZeroDuration();
  const NodeSessions::Session* session = sessions_.Find(member.node);
  for (const v1::BenchmarkSpec& spec : member.benchmarks) {
    int64_t ms = spec.timeout_ms();
    if (ms <= 0 && options_.spec_timeout) {
      ms = absl::ToInt64Milliseconds(options_.spec_timeout(spec));
    }
    if (ms <= 0 && session != nullptr) {
      for (const v1::Capability& c : session->capabilities) {
        if (c.benchmark() == spec.name()) ms = c.default_timeout_ms();
      }
    }
    // A plugin that declares no default: the runner's own guard is an hour.
    total += ms > 0 ? absl::Milliseconds(ms) : absl::Hours(1);
  }
  return total;
}

void FleetCore::TryDispatchGroup(const storage::TaskRecord& member,
                                 std::set<std::string>& reserved) {
  const RunningGroups::Group* group = groups_.Find(member.group_id);
  if (group == nullptr || group->dispatched || !group->failure.empty()) return;
  std::vector<storage::TaskRecord*> tasks;
  bool all_connected = true, all_ready = true;
  for (const std::string& id : group->task_ids) {
    storage::TaskRecord* t = live_.FindTask(id);
    if (t == nullptr || t->state != v1::TASK_STATE_QUEUED) return;
    tasks.push_back(t);
    all_connected &= sessions_.Reachable(t->node);
    all_ready &= NodeReady(t->node) && !reserved.contains(t->node);
  }
  if (!all_ready) {
    // All there but some busy: hold their nodes for this group so that
    // later single-node tasks do not keep it waiting forever.
    if (all_connected) {
      for (storage::TaskRecord* t : tasks) reserved.insert(t->node);
    }
    return;
  }
  const storage::RunRecord* run = live_.FindRun(member.run_id);
  if (run != nullptr && run->max_parallel > 0) {
    // max_parallel counts members: a group larger than it runs alone.
    const uint32_t in_flight = live_.InFlight(member.run_id);
    const uint32_t size = static_cast<uint32_t>(tasks.size());
    if (in_flight > 0 && in_flight + size > std::max(run->max_parallel, size)) return;
  }
  const absl::Time now = clock_->Now();
  bool stored = true;
  for (storage::TaskRecord* t : tasks) {
    t->state = v1::TASK_STATE_DISPATCHED;
    t->updated = now;
    if (absl::Status s = store_->UpdateTask(*t); !s.ok()) {
      LOG(ERROR) << "dispatching " << t->task_id << ": " << s;
      NoteStoreFailure(s, absl::StrCat("dispatching group task ", t->task_id));
      stored = false;
    }
  }
  if (!stored) {
    for (storage::TaskRecord* t : tasks) t->state = v1::TASK_STATE_QUEUED;
    return;
  }
  groups_.Dispatched(member.group_id, now + GroupTimeout(member));
  for (storage::TaskRecord* t : tasks) SendRunTask(*t);
  UpdateRunState(member.run_id);
}

void FleetCore::FillGroupAssignment(const storage::TaskRecord& task,
                                    v1::GroupAssignment* assignment) const {
  assignment->set_group_id(task.group_id);
  assignment->set_rank(task.group_rank);
  assignment->set_size(static_cast<int32_t>(task.group_members.size()));
  for (const std::string& node : task.group_members) {
    v1::GroupMember* m = assignment->add_members();
    m->set_node(node);
    if (const NodeSessions::Session* s = sessions_.Find(node)) m->set_address(s->address);
  }
  if (const RunningGroups::Group* g = groups_.Find(task.group_id)) {
    assignment->set_deadline_unix_ms(absl::ToUnixMillis(g->deadline));
  }
}

// ------------------------------------------------------------ endings

void FleetCore::FailGroup(const std::string& group_id, const std::string& reason,
                          const std::set<std::string>& at_fault) {
  if (!groups_.Fail(group_id, reason, at_fault, clock_->Now())) return;
  // Copied: the group may go below.
  const std::vector<std::string> members = groups_.Find(group_id)->task_ids;
  for (const std::string& id : members) {
    storage::TaskRecord* t = live_.FindTask(id);
    if (t == nullptr) continue;
    if (t->state == v1::TASK_STATE_QUEUED) {
      FinishTask(*t, v1::TASK_STATE_CANCELLED, "");
      continue;
    }
    if (live_.ReportPromised(id)) continue;  // it ended; its report comes
    // In flight: ask the agent to stop; its final report ends the task.
    v1::ControllerMessage msg;
    msg.mutable_cancel_task()->set_task_id(id);
    sessions_.Send(t->node, msg);
  }
}

void FleetCore::SettleGroup(const storage::TaskRecord& ended) {
  if (ended.group_id.empty()) return;
  const RunningGroups::Group* group = groups_.Find(ended.group_id);
  if (group == nullptr) return;
  const std::string group_id = ended.group_id;
  const std::string run_id = ended.run_id;
  if (ended.state != v1::TASK_STATE_SUCCEEDED && group->failure.empty()) {
    FailGroup(group_id,
              absl::StrCat("group ", group_id, ": ", Members({ended.node}), " ",
                           TaskStateName(ended.state),
                           ended.reason.empty() ? "" : absl::StrCat(" (", ended.reason, ")")),
              {ended.task_id});
  }
  group = groups_.Find(group_id);
  if (group == nullptr) return;  // ended inside FailGroup
  for (const std::string& id : group->task_ids) {
    if (live_.FindTask(id) != nullptr) return;
  }
  groups_.End(group_id);
  if (groups_.OfRun(run_id).empty()) AddNextGroupPass(run_id);
}

void FleetCore::AddNextGroupPass(const std::string& run_id) {
  const storage::RunRecord* run = live_.FindRun(run_id);
  if (run == nullptr || run->group.mode() == v1::GROUP_MODE_UNSPECIFIED ||
      live_.CancelledByUser(run_id)) {
    return;
  }
  absl::StatusOr<std::vector<storage::TaskRecord>> tasks = NewestTasks(run_id);
  if (!tasks.ok()) {
    LOG(ERROR) << "planning the next groups of run " << run_id << ": " << tasks.status();
    return;
  }
  std::vector<v1::BenchmarkSpec> specs;
  for (const storage::TaskRecord& t : *tasks) {
    if (!t.group_id.empty()) {
      specs = t.benchmarks;
      break;
    }
  }
  if (specs.empty()) return;
  const std::vector<v1::GroupResult> done = GroupResults(*tasks);
  const std::vector<GroupPlan> next =
      options_.plan_next_groups
          ? options_.plan_next_groups(run->group, run->group_nodes, done)
          : PlanNextGroups(run->group, run->group_nodes, done);
  if (next.empty()) return;
  std::vector<storage::TaskRecord> added = MakeGroupTasks(run_id, next, specs);
  if (absl::Status s = store_->AddTasks(run_id, added); !s.ok()) {
    // The run ends with the groups it has; say why it has no more.
    LOG(ERROR) << "adding the next " << next.size() << " group(s) of run " << run_id << ": "
               << s;
    return;
  }
  LOG(INFO) << "run " << run_id << ": " << next.size() << " more group(s), pass "
            << next.front().pass;
  for (storage::TaskRecord& t : added) {
    groups_.Register(t);
    live_.AddTask(std::move(t));
  }
  // Not from here: this runs inside a task's end, whose callers may be
  // walking the task list.
  Post(Closure([this] { TryDispatch(); }));
}

void FleetCore::SweepGroups(absl::Time now) {
  std::vector<std::pair<std::string, std::vector<std::string>>> overdue;
  std::vector<std::string> unstoppable;
  for (auto& [id, group] : groups_.all()) {
    // Asked to stop and still running a heartbeat timeout later (a plugin
    // that does not heed its cancel, an agent that does not answer): the
    // member ends here, so the run does not wait for it forever.
    if (!group.failure.empty() && now >= group.failed_at + options_.heartbeat_timeout) {
      for (const std::string& task_id : group.task_ids) {
        const storage::TaskRecord* t = live_.FindTask(task_id);
        if (t != nullptr && IsInFlight(t->state) && !live_.ReportPromised(task_id)) {
          unstoppable.push_back(task_id);
        }
      }
    }
    // Waits that ran out.
    group.rendezvous.Expire(now, group.deadline);
    if (group.dispatched && group.failure.empty() && now >= group.deadline) {
      std::vector<std::string> late;
      for (const std::string& task_id : group.task_ids) {
        if (live_.FindTask(task_id) != nullptr && !live_.ReportPromised(task_id)) {
          late.push_back(task_id);
        }
      }
      if (!late.empty()) overdue.emplace_back(id, std::move(late));
    }
  }
  for (const std::string& task_id : unstoppable) {
    storage::TaskRecord* t = live_.FindTask(task_id);
    if (t == nullptr) continue;
    FinishTask(*t, v1::TASK_STATE_FAILED,
               absl::StrCat("did not stop within ", absl::FormatDuration(options_.heartbeat_timeout),
                            " of its group's cancel"));
  }
  for (const auto& [id, late] : overdue) {
    std::vector<std::string> nodes;
    for (const std::string& task_id : late) nodes.push_back(live_.FindTask(task_id)->node);
    FailGroup(id,
              absl::StrCat("group ", id, ": ", Members(nodes),
                           " did not finish by the group deadline"),
              std::set<std::string>(late.begin(), late.end()));
  }
}

void FleetCore::NoteGroupHeadline(storage::TaskRecord& task, const v1::Report& report) {
  if (task.group_id.empty() || task.group_rank != 0 || !task.group_metric.empty()) return;
  for (const v1::Sample& s : report.samples()) {
    if (absl::EndsWith(s.metric(), kHeadlineSuffix)) {
      task.group_metric = s.metric();
      task.group_value = s.value();
      return;
    }
  }
}

// ------------------------------------------------------------ views

absl::StatusOr<std::vector<storage::TaskRecord>> FleetCore::NewestTasks(
    const std::string& run_id) {
  absl::StatusOr<std::vector<storage::TaskRecord>> tasks = store_->ListTasks(run_id);
  if (!tasks.ok()) return tasks.status();
  for (storage::TaskRecord& t : *tasks) t = live_.Newest(t);
  return tasks;
}

std::vector<v1::GroupResult> FleetCore::GroupResults(
    const std::vector<storage::TaskRecord>& tasks) {
  std::vector<v1::GroupResult> out;
  std::map<std::string, std::vector<const storage::TaskRecord*>> members;
  for (const storage::TaskRecord& t : tasks) {
    if (t.group_id.empty()) continue;
    auto& list = members[t.group_id];
    if (list.empty()) {
      v1::GroupResult& r = out.emplace_back();
      r.set_group_id(t.group_id);
      for (const std::string& n : t.group_members) r.add_members(n);
      r.set_pass(t.group_pass);
    }
    list.push_back(&t);
  }
  for (v1::GroupResult& r : out) {
    auto& list = members[r.group_id()];
    std::sort(list.begin(), list.end(),
              [](auto* a, auto* b) { return a->group_rank < b->group_rank; });
    // Succeeded when every member did; else the state of the first member
    // at fault (the others were cancelled because of it), and the reason
    // that names it.
    const storage::TaskRecord* first_bad = nullptr;
    const storage::TaskRecord* first_cancelled = nullptr;
    bool all_done = true, all_succeeded = true;
    for (const storage::TaskRecord* t : list) {
      all_done &= IsTerminal(t->state);
      all_succeeded &= t->state == v1::TASK_STATE_SUCCEEDED;
      if (t->state == v1::TASK_STATE_CANCELLED) {
        if (first_cancelled == nullptr) first_cancelled = t;
      } else if (IsTerminal(t->state) && t->state != v1::TASK_STATE_SUCCEEDED &&
                 first_bad == nullptr) {
        first_bad = t;
      }
    }
    const storage::TaskRecord* rank0 = list.front();
    if (!all_done) {
      r.set_state(std::any_of(list.begin(), list.end(),
                              [](auto* t) { return t->state != v1::TASK_STATE_QUEUED; })
                      ? v1::TASK_STATE_RUNNING
                      : v1::TASK_STATE_QUEUED);
    } else if (all_succeeded) {
      r.set_state(v1::TASK_STATE_SUCCEEDED);
    } else {
      const storage::TaskRecord* culprit = first_bad ? first_bad : first_cancelled;
      r.set_state(culprit->state);
      // The reason that names the group is the one with the whole story.
      std::string reason;
      for (const storage::TaskRecord* t : list) {
        if (absl::StartsWith(t->reason, absl::StrCat("group ", r.group_id()))) {
          reason = t->reason;
          break;
        }
      }
      if (reason.empty()) {
        reason = absl::StrCat("member ", culprit->node, " ", TaskStateName(culprit->state),
                              culprit->reason.empty() ? "" : ": " + culprit->reason);
      }
      r.set_reason(TruncateReason(reason));
    }
    if (rank0->group_rank == 0 && !rank0->group_metric.empty()) {
      r.set_busbw_gbps(rank0->group_value);
      r.set_metric(rank0->group_metric);
    }
  }
  return out;
}

}  // namespace fleetbench::controller
