#include "controller/ranking/goodput.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace fleetbench::controller {

absl::Status CheckJobShape(const JobShape& job) {
  if (job.nodes < 1 || job.nodes > kMaxJobNodes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a job's nodes must be 1 to ", kMaxJobNodes, ", not ", job.nodes));
  }
  if (job.checkpoint_interval <= absl::ZeroDuration() ||
      job.checkpoint_interval == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError("the checkpoint interval must be a positive duration");
  }
  if (job.restart_cost < absl::ZeroDuration() || job.restart_cost == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError("the restart cost must be a duration of 0 or more");
  }
  return absl::OkStatus();
}

double JobGoodput(double rate_per_node_hour, const JobShape& job) {
  if (!(rate_per_node_hour > 0)) return 1.0;
  const double job_rate = rate_per_node_hour * static_cast<double>(job.nodes);
  const double interval_h = absl::ToDoubleHours(job.checkpoint_interval);
  const double restart_h = absl::ToDoubleHours(job.restart_cost);
  const double x = job_rate * interval_h;
  // x / (e^x - 1) with expm1 so that a tiny rate gives 1, not 0/0; past
  // x ~ 700 expm1 overflows to inf and the goodput is 0, as it should be.
  const double progress_share = x / std::expm1(x);
  return progress_share / (1.0 + job_rate * restart_h);
}

}  // namespace fleetbench::controller
