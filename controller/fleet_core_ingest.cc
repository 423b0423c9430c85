// FleetCore: ingest. Reports are validated against the task in flight,
// committed in batches (one transaction per batch), acknowledged only once
// durable, and only then allowed to end their task. Reports for tasks that
// already ended keep their samples and change no state. A sample the bounds
// refuse does not cost the report its good samples: those are stored, the
// task fails with what was refused, and the ack tells the agent. A report
// whose envelope is refused (a reason too long, too many samples) while its
// task is in flight still ends that task, failed with the refusal: acking it
// and leaving the task running would wedge its node (issue 9). An ack never
// hides a refusal: `error` says what was not stored.
#include "controller/fleet_core.h"

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/reason.h"
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

absl::Status FleetCore::CheckReportInFlight(const std::string& node,
                                            const v1::Report& report) const {
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
  p.refused = DropRefusedSamples(&p.report);
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
    // The task ended here, not at the agent: tell it to stop measuring.
    bool stops_agent = false;
  };
  std::vector<Accepted> accepted;
  std::vector<PendingReport*> rejected;
  accepted.reserve(batch.size());
  for (PendingReport& p : batch) {
    p.node = NodeOfLink(p.link);
    if (p.node.empty()) continue;  // stale stream: no ack, the agent resends
    sessions_[p.node].last_seen = now;
    absl::Status s = CheckReportInFlight(p.node, p.report);
    if (absl::Status envelope = CheckReportEnvelope(p.report); !envelope.ok()) {
      if (s.ok()) {
        // Its task is in flight and this node's: end it with the refusal,
        // keeping what can be stored.
        p.refused = absl::StrCat("report refused: ", envelope.message());
        ClampReportEnvelope(&p.report);
      } else {
        s = envelope;
      }
    }
    if (absl::IsNotFound(s) && StoreLateSamples(p)) {
      rejected.push_back(&p);  // stored; ack, no task transition
      continue;
    } else if (!s.ok()) {
      // Already stored and finished (a resend after our ack was lost), or
      // garbage for no task of this node's. Either way, storing it again
      // would be wrong; ack so the agent stops resending, saying why.
      LOG(WARNING) << "report " << p.report.report_id() << " from " << p.node
                   << " dropped: " << s;
      p.refused = absl::StrCat("report dropped: ", s.message());
      rejected.push_back(&p);
      continue;
    }
    Accepted a{&p, {}, false};
    const storage::TaskRecord& task = active_tasks_.at(p.report.task_id());
    if (std::string dropped = DropRefusedSamples(&p.report); !dropped.empty()) {
      p.refused = p.refused.empty() ? dropped : absl::StrCat(p.refused, "; ", dropped);
    }
    for (v1::Sample& sample : *p.report.mutable_samples()) {
      // Trust the task, not the agent, for where a sample belongs.
      sample.set_run_id(task.run_id);
      sample.set_node(p.node);
    }
    if (p.report.task_finished() || !p.refused.empty()) {
      a.finishes = true;
      a.final_task = task;
      a.final_task.state = p.report.task_state();
      a.final_task.reason = p.report.task_reason();
      a.final_task.outcomes.assign(p.report.outcomes().begin(), p.report.outcomes().end());
      a.final_task.updated = now;
    }
    if (!p.refused.empty()) {
      // The task's numbers are incomplete: it cannot count as succeeded.
      a.final_task.state = v1::TASK_STATE_FAILED;
      a.final_task.reason = TruncateReason(
          a.final_task.reason.empty() ? p.refused
                                      : absl::StrCat(p.refused, "; ", a.final_task.reason));
      a.stops_agent = !p.report.task_finished();
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
    msg.mutable_ack()->set_error(TruncateReason(p->refused));
    p->link->Send(msg);
  };
  for (Accepted& a : accepted) {
    ack(a.pending);
    if (a.stops_agent) {
      v1::ControllerMessage cancel;
      cancel.mutable_cancel_task()->set_task_id(a.final_task.task_id);
      a.pending->link->Send(cancel);
    }
  }
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

}  // namespace fleetbench::controller
