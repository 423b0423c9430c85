#include "cli/job_flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"

namespace fleetbench::cli {
namespace {

constexpr uint64_t kMaxJobNodes = 1'000'000;

absl::StatusOr<int64_t> DurationMillis(const Args& args, const std::string& flag) {
  absl::Duration d;
  if (!absl::ParseDuration(args.Get(flag), &d) || d < absl::ZeroDuration() ||
      d > absl::Hours(24 * 365)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " wants a duration such as 30m or 1h, up to a year"));
  }
  return absl::ToInt64Milliseconds(d);
}

}  // namespace

void AddJobFlags(std::vector<FlagSpec>& flags) {
  flags.push_back({"job-nodes", true, false,
                   "answer for a job on N nodes at once: each group's goodput from its "
                   "interruptions per node-hour (docs/ranking.md, Goodput)"});
  flags.push_back({"checkpoint-interval", true, false,
                   "with --job-nodes: how often the job checkpoints (default 30m)"});
  flags.push_back({"restart-cost", true, false,
                   "with --job-nodes: how long a restart takes (default 10m)"});
}

absl::StatusOr<std::optional<v1::JobShape>> JobFromFlags(const Args& args) {
  if (!args.Has("job-nodes")) {
    if (args.Has("checkpoint-interval") || args.Has("restart-cost")) {
      return absl::InvalidArgumentError(
          "--checkpoint-interval and --restart-cost describe a job: give --job-nodes too");
    }
    return std::nullopt;
  }
  v1::JobShape job;
  uint64_t nodes = 0;
  if (!absl::SimpleAtoi(args.Get("job-nodes"), &nodes) || nodes < 1 || nodes > kMaxJobNodes) {
    return absl::InvalidArgumentError(
        absl::StrCat("--job-nodes wants a count of nodes from 1 to ", kMaxJobNodes));
  }
  job.set_nodes(nodes);
  if (args.Has("checkpoint-interval")) {
    absl::StatusOr<int64_t> ms = DurationMillis(args, "checkpoint-interval");
    if (!ms.ok()) return ms.status();
    if (*ms == 0) return absl::InvalidArgumentError("--checkpoint-interval must be above 0");
    job.set_checkpoint_interval_ms(*ms);
  }
  if (args.Has("restart-cost")) {
    absl::StatusOr<int64_t> ms = DurationMillis(args, "restart-cost");
    if (!ms.ok()) return ms.status();
    job.set_restart_cost_ms(*ms);
  }
  return job;
}

std::string GoodputText(const v1::JobGoodput& job) {
  return absl::StrCat(absl::StrFormat("%.3f", job.goodput()), job.enough_data() ? "" : "?");
}

std::string JobLegend(const v1::JobShape& job) {
  return absl::StrCat(
      "for a job on ", job.nodes(), " node(s), checkpointing every ",
      absl::FormatDuration(absl::Milliseconds(job.checkpoint_interval_ms())), ", restarting in ",
      absl::FormatDuration(absl::Milliseconds(job.restart_cost_ms())),
      ": GOODPUT is the share of the job's time that is progress at the group's interruption "
      "rate (? : too few node-hours to know it), EFFECTIVE the cost once the lost time is "
      "counted; see `fleetbench reliability`\n");
}

}  // namespace fleetbench::cli
