#include "controller/ranking/job_goodput.h"

#include <algorithm>
#include <map>
#include <string>

namespace fleetbench::controller {
namespace {

v1::JobGoodput GoodputOf(const std::map<std::string, const v1::ReliabilityGroup*>& groups,
                         const std::string& group, const JobShape& job) {
  v1::JobGoodput out;
  auto it = groups.find(group);
  double rate_per_hour = 0;
  if (it != groups.end()) {
    const v1::ReliabilityGroup& g = *it->second;
    out.set_interruptions_per_1000_node_hours(g.per_1000_node_hours());
    out.set_node_hours(g.node_hours());
    out.set_enough_data(g.enough_data());
    rate_per_hour = g.per_1000_node_hours() / 1000;
    // Interrupted before it was heard twice: no time online to divide by,
    // and no reason to think it does any work.
    if (g.node_hours() <= 0 && g.interruptions() > 0) {
      out.set_goodput(0);
      return out;
    }
  }
  out.set_goodput(JobGoodput(rate_per_hour, job));
  return out;
}

std::map<std::string, const v1::ReliabilityGroup*> ByName(
    const std::vector<v1::ReliabilityGroup>& reliability) {
  std::map<std::string, const v1::ReliabilityGroup*> out;
  for (const v1::ReliabilityGroup& g : reliability) out[g.group()] = &g;
  return out;
}

}  // namespace

absl::StatusOr<JobShape> JobShapeOf(const v1::JobShape& proto) {
  JobShape job;
  job.nodes = static_cast<int64_t>(std::min<uint64_t>(proto.nodes(), kMaxJobNodes + 1));
  if (proto.has_checkpoint_interval_ms()) {
    job.checkpoint_interval = absl::Milliseconds(proto.checkpoint_interval_ms());
  }
  if (proto.has_restart_cost_ms()) job.restart_cost = absl::Milliseconds(proto.restart_cost_ms());
  if (absl::Status s = CheckJobShape(job); !s.ok()) return s;
  return job;
}

v1::JobShape ToProto(const JobShape& job) {
  v1::JobShape out;
  out.set_nodes(static_cast<uint64_t>(job.nodes));
  out.set_checkpoint_interval_ms(absl::ToInt64Milliseconds(job.checkpoint_interval));
  out.set_restart_cost_ms(absl::ToInt64Milliseconds(job.restart_cost));
  return out;
}

void AddJobGoodput(const std::vector<v1::ReliabilityGroup>& reliability, const JobShape& job,
                   v1::RankResponse& rank) {
  const auto groups = ByName(reliability);
  for (v1::RankRow& row : *rank.mutable_rows()) {
    v1::JobGoodput g = GoodputOf(groups, row.group(), job);
    if (row.priced() && g.goodput() > 0) {
      g.set_effective_cost_per_unit(row.cost_per_unit() / g.goodput());
    }
    *row.mutable_job() = g;
  }
  *rank.mutable_job() = ToProto(job);
  // Priced rows come first (ranking.h); among them the effective cost
  // decides, a job that gets nothing done last. Stable: ties keep the
  // ranking's order.
  auto rows = rank.mutable_rows();
  auto priced_end = std::stable_partition(rows->begin(), rows->end(),
                                          [](const v1::RankRow& r) { return r.priced(); });
  std::stable_sort(rows->begin(), priced_end, [](const v1::RankRow& a, const v1::RankRow& b) {
    const bool a_works = a.job().goodput() > 0;
    const bool b_works = b.job().goodput() > 0;
    if (a_works != b_works) return a_works;
    return a.job().effective_cost_per_unit() < b.job().effective_cost_per_unit();
  });
}

void AddJobGoodput(const std::vector<v1::ReliabilityGroup>& reliability, const JobShape& job,
                   v1::CostResponse& cost) {
  const auto groups = ByName(reliability);
  for (v1::CostRow& row : *cost.mutable_rows()) {
    v1::JobGoodput g = GoodputOf(groups, row.group(), job);
    if (g.goodput() > 0) {
      row.set_effective_seconds(row.seconds() / g.goodput());
      if (row.priced()) row.set_effective_cost(row.cost() / g.goodput());
    }
    *row.mutable_job() = g;
  }
  *cost.mutable_job() = ToProto(job);
}

}  // namespace fleetbench::controller
