// FleetCore: the reliability read, and rank and cost for a job size.
// Without a job shape, the ranking read as it is (rank_view.h); with one,
// the same rows with each group's goodput for that job from the
// reliability read, grouped as the rows are, over its default window
// (docs/ranking.md, Goodput). Each reads after the ledger's pending time
// online and interruptions are written.
#include "controller/core/fleet_core.h"
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
