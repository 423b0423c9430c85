#include "common/api_enums.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace fleetbench {

bool IsInFlight(v1::TaskState state) {
  return state == v1::TASK_STATE_DISPATCHED || state == v1::TASK_STATE_RUNNING;
}

bool IsTerminal(v1::TaskState state) {
  switch (state) {
    case v1::TASK_STATE_SUCCEEDED:
    case v1::TASK_STATE_FAILED:
    case v1::TASK_STATE_SKIPPED:
    case v1::TASK_STATE_CANCELLED:
    case v1::TASK_STATE_LOST:
      return true;
    default:
      return false;
  }
}

std::string TaskStateName(v1::TaskState state) {
  switch (state) {
    case v1::TASK_STATE_QUEUED: return "queued";
    case v1::TASK_STATE_DISPATCHED: return "dispatched";
    case v1::TASK_STATE_RUNNING: return "running";
    case v1::TASK_STATE_SUCCEEDED: return "succeeded";
    case v1::TASK_STATE_FAILED: return "failed";
    case v1::TASK_STATE_SKIPPED: return "skipped";
    case v1::TASK_STATE_CANCELLED: return "cancelled";
    case v1::TASK_STATE_LOST: return "lost";
    default: return "unspecified";
  }
}

std::string RunStateName(v1::RunState state) {
  switch (state) {
    case v1::RUN_STATE_QUEUED: return "queued";
    case v1::RUN_STATE_RUNNING: return "running";
    case v1::RUN_STATE_SUCCEEDED: return "succeeded";
    case v1::RUN_STATE_FAILED: return "failed";
    case v1::RUN_STATE_CANCELLED: return "cancelled";
    default: return "unspecified";
  }
}

std::optional<v1::RunState> RunStateFromName(absl::string_view name) {
  for (v1::RunState s : {v1::RUN_STATE_QUEUED, v1::RUN_STATE_RUNNING, v1::RUN_STATE_SUCCEEDED,
                         v1::RUN_STATE_FAILED, v1::RUN_STATE_CANCELLED}) {
    if (RunStateName(s) == name) return s;
  }
  return std::nullopt;
}

bool IsTerminal(v1::RunState state) {
  return state == v1::RUN_STATE_SUCCEEDED || state == v1::RUN_STATE_FAILED ||
         state == v1::RUN_STATE_CANCELLED;
}

std::string NodeStatusName(v1::NodeStatus status) {
  switch (status) {
    case v1::NODE_STATUS_ONLINE: return "online";
    case v1::NODE_STATUS_OFFLINE: return "offline";
    default: return "unspecified";
  }
}

std::string RankGroupingName(v1::RankGrouping by) {
  switch (by) {
    case v1::RANK_GROUPING_UNSPECIFIED:
    case v1::RANK_GROUPING_NODE: return "node";
    case v1::RANK_GROUPING_INSTANCE_TYPE: return "instance_type";
    case v1::RANK_GROUPING_REGION: return "region";
    case v1::RANK_GROUPING_PROVIDER: return "provider";
    default: return absl::StrCat("unknown(", static_cast<int>(by), ")");
  }
}

namespace {

constexpr std::pair<v1::InterruptionKind, const char*> kInterruptionKinds[] = {
    {v1::INTERRUPTION_KIND_OFFLINE, "offline"},
    {v1::INTERRUPTION_KIND_AGENT_RESTART, "agent_restart"},
    {v1::INTERRUPTION_KIND_PREEMPTED, "preempted"},
    {v1::INTERRUPTION_KIND_CRITICAL_FINDING, "critical_finding"},
    {v1::INTERRUPTION_KIND_ISOLATED, "isolated"},
    {v1::INTERRUPTION_KIND_REVOKED, "revoked"},
};

}  // namespace

std::string InterruptionKindName(v1::InterruptionKind kind) {
  for (const auto& [k, name] : kInterruptionKinds) {
    if (k == kind) return name;
  }
  return "unspecified";
}

v1::InterruptionKind InterruptionKindOf(absl::string_view name) {
  for (const auto& [k, n] : kInterruptionKinds) {
    if (name == n) return k;
  }
  return v1::INTERRUPTION_KIND_UNSPECIFIED;
}

absl::StatusOr<v1::RankGrouping> ParseRankGrouping(absl::string_view name) {
  for (v1::RankGrouping by : {v1::RANK_GROUPING_NODE, v1::RANK_GROUPING_INSTANCE_TYPE,
                              v1::RANK_GROUPING_REGION, v1::RANK_GROUPING_PROVIDER}) {
    if (RankGroupingName(by) == name) return by;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "by '", name, "' is not one of node, instance_type, region, provider"));
}

std::string PriceKindName(v1::PriceKind kind) {
  switch (kind) {
    case v1::PRICE_KIND_UNSPECIFIED:
    case v1::PRICE_KIND_ON_DEMAND: return "on_demand";
    case v1::PRICE_KIND_SPOT: return "spot";
    default: return absl::StrCat("unknown(", static_cast<int>(kind), ")");
  }
}

absl::StatusOr<v1::PriceKind> ParsePriceKind(absl::string_view name) {
  for (v1::PriceKind kind : {v1::PRICE_KIND_ON_DEMAND, v1::PRICE_KIND_SPOT}) {
    if (PriceKindName(kind) == name) return kind;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("price '", name.substr(0, 64), "' is not one of on_demand, spot"));
}

std::string StatusCodeName(v1::StatusCode code) {
  const std::string& full = v1::StatusCode_Name(code);
  constexpr absl::string_view kPrefix = "STATUS_CODE_";
  if (full.size() > kPrefix.size() && absl::string_view(full).substr(0, kPrefix.size()) == kPrefix) {
    return full.substr(kPrefix.size());
  }
  return absl::StrCat("code ", static_cast<int>(code));
}

std::string FiringOutcomeName(v1::FiringOutcome outcome) {
  switch (outcome) {
    case v1::FIRING_OUTCOME_STARTED:
      return "started";
    case v1::FIRING_OUTCOME_SKIPPED:
      return "skipped";
    case v1::FIRING_OUTCOME_MISSED:
      return "missed";
    case v1::FIRING_OUTCOME_FAILED:
      return "failed";
    default:
      return "unspecified";
  }
}

}  // namespace fleetbench
