// FleetCore: the interruptions an ended run implies, the reliability read,
// and rank and cost for a job size.
// Without a job shape, the ranking read as it is (rank_view.h); with one,
// the same rows with each group's goodput for that job from the
// reliability read, grouped as the rows are, over its default window
// (docs/ranking.md, Goodput). Each reads after the ledger's pending time
// online and interruptions are written.
#include "controller/core/fleet_core.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/logging.h"
#include "controller/core/group_plan.h"
#include "controller/core/run_interruptions.h"
#include "controller/ranking/job_goodput.h"

namespace fleetbench::controller {
namespace {

// The reliability groups to match a ranking's rows.
absl::StatusOr<std::vector<v1::ReliabilityGroup>> ReliabilityGroups(
    const ReliabilityView& view, v1::RankGrouping by, absl::Time deadline) {
  v1::ReliabilityRequest request;
  request.set_by(by);
  absl::StatusOr<v1::ReliabilityResponse> reliability = view.Reliability(request, deadline);
  if (!reliability.ok()) return reliability.status();
  return std::vector<v1::ReliabilityGroup>(reliability->groups().begin(),
                                           reliability->groups().end());
}

}  // namespace

void FleetCore::NoteRunInterruptions(const storage::RunRecord& run,
                                     const std::vector<storage::TaskRecord>& tasks) {
  const absl::Time now = clock_->Now();
  std::vector<RunInterruption> found;
  if (run.group.mode() == v1::GROUP_MODE_ISOLATE && run.state != "cancelled") {
    found = IsolatedBy(run.run_id,
                       JudgeIsolation(run.group, run.group_nodes, GroupResults(tasks)));
  }
  // The node rules judge each node on its facts as its session holds them
  // and on its samples and outcomes in this run (a node since removed has
  // no session, and nothing to judge it by).
  std::map<std::string, diagnosis::NodeEvidence> evidence;
  for (const storage::TaskRecord& t : tasks) {
    const NodeSessions::Session* session = sessions_.Find(t.node);
    if (session == nullptr) continue;
    auto [it, added] = evidence.try_emplace(t.node);
    diagnosis::NodeEvidence& e = it->second;
    if (added) {
      e.node = t.node;
      e.facts = session->facts;
      e.labels = session->labels;
      e.run_id = run.run_id;
      e.time_unix_ms = absl::ToUnixMillis(now);
    }
    e.outcomes.insert(e.outcomes.end(), t.outcomes.begin(), t.outcomes.end());
  }
  // On the actor thread, so bounded: a run of more samples than this (a
  // fleet-wide suite) is judged on its first kMaxJudgedSamples, node by
  // node in the store's order; the rest of its nodes on their facts.
  constexpr int kMaxJudgedSamples = 100'000;
  constexpr int kPage = 10'000;
  std::optional<storage::RunSampleCursor> after;
  for (int read = 0; !evidence.empty() && read < kMaxJudgedSamples; read += kPage) {
    std::vector<storage::RunSampleCursor> cursors;
    absl::StatusOr<std::vector<v1::Sample>> page =
        store_->ListSamplesForRunPage(run.run_id, kPage, after, &cursors);
    if (!page.ok()) {
      // The run's other interruptions still count; its findings can be
      // read again with `findings --run`.
      LOG(WARNING) << "reading run " << run.run_id
                   << "'s samples for its critical findings: " << page.status();
      evidence.clear();
      break;
    }
    for (v1::Sample& s : *page) {
      auto it = evidence.find(s.node());
      if (it != evidence.end()) it->second.samples.push_back(std::move(s));
    }
    if (page->size() < static_cast<size_t>(kPage)) break;
    after = cursors.back();
  }
  std::vector<diagnosis::NodeEvidence> judged;
  judged.reserve(evidence.size());
  for (auto& [node, e] : evidence) judged.push_back(std::move(e));
  for (RunInterruption& r : CriticalFindingsOf(judged)) found.push_back(std::move(r));
  for (RunInterruption& r : found) ledger_.Interrupted(r.node, now, r.kind, std::move(r.detail));
}

absl::StatusOr<v1::ReliabilityResponse> FleetCore::Reliability(
    const v1::ReliabilityRequest& request, absl::Time deadline) {
  WriteReliabilityLedger(deadline);
  return reliability_view_.Reliability(request, deadline);
}

absl::StatusOr<v1::RankResponse> FleetCore::Rank(const v1::RankRequest& request,
                                                 absl::Time deadline) {
  if (!request.has_job()) return rank_view_.Rank(request, deadline);
  absl::StatusOr<JobShape> job = JobShapeOf(request.job());
  if (!job.ok()) return job.status();
  absl::StatusOr<v1::RankResponse> rank = rank_view_.Rank(request, deadline);
  if (!rank.ok()) return rank;
  WriteReliabilityLedger(deadline);
  auto groups = ReliabilityGroups(reliability_view_, rank->by(), deadline);
  if (!groups.ok()) return groups.status();
  AddJobGoodput(*groups, *job, *rank);
  return rank;
}

absl::StatusOr<v1::CostResponse> FleetCore::Cost(const v1::CostRequest& request,
                                                 absl::Time deadline) {
  if (!request.has_job()) return rank_view_.Cost(request, deadline);
  absl::StatusOr<JobShape> job = JobShapeOf(request.job());
  if (!job.ok()) return job.status();
  absl::StatusOr<v1::CostResponse> cost = rank_view_.Cost(request, deadline);
  if (!cost.ok()) return cost;
  WriteReliabilityLedger(deadline);
  auto groups = ReliabilityGroups(reliability_view_, cost->by(), deadline);
  if (!groups.ok()) return groups.status();
  AddJobGoodput(*groups, *job, *cost);
  return cost;
}

}  // namespace fleetbench::controller
