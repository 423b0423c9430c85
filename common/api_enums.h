// common/api_enums.h — the API's enums as words: the short lower-case names
// the CLI prints, the store keeps and users type, and what a state means.
// Shared by the controller (which moves tasks and runs between states) and
// the CLI; JSON output uses the enum names themselves (NODE_STATUS_ONLINE).
#ifndef FLEETBENCH_COMMON_API_ENUMS_H_
#define FLEETBENCH_COMMON_API_ENUMS_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/price.pb.h"
#include "fleetbench/v1/rank.pb.h"
#include "fleetbench/v1/reliability.pb.h"
#include "fleetbench/v1/result.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "fleetbench/v1/schedule.pb.h"

namespace fleetbench {

// Terminal states end a task; the rest are still to do or in flight.
bool IsTerminal(v1::TaskState state);
// Sent to its agent and not ended: dispatched or running.
bool IsInFlight(v1::TaskState state);
// "queued", "running", "succeeded", ... as the CLI and docs spell them.
std::string TaskStateName(v1::TaskState state);

// "queued", "running", "succeeded", "failed", "cancelled"; "unspecified".
std::string RunStateName(v1::RunState state);
// The inverse, for states kept as words in the store; nullopt otherwise.
std::optional<v1::RunState> RunStateFromName(absl::string_view name);
bool IsTerminal(v1::RunState state);

// "online", "offline"; "unspecified".
std::string NodeStatusName(v1::NodeStatus status);

// "node", "instance_type", "region", "provider": also the label a grouping
// reads (but for "node"). UNSPECIFIED reads as NODE.
std::string RankGroupingName(v1::RankGrouping by);

// How an interruption kind is stored and shown: "offline", "agent_restart",
// "preempted", "critical_finding", "isolated", "revoked"; "unspecified".
std::string InterruptionKindName(v1::InterruptionKind kind);
// The kind a stored name stands for; UNSPECIFIED for an unknown one.
v1::InterruptionKind InterruptionKindOf(absl::string_view name);
// INVALID_ARGUMENT naming the allowed words for anything else.
absl::StatusOr<v1::RankGrouping> ParseRankGrouping(absl::string_view name);

// "on_demand", "spot" (UNSPECIFIED reads as on_demand), and the inverse:
// INVALID_ARGUMENT naming the allowed words for anything else.
std::string PriceKindName(v1::PriceKind kind);
absl::StatusOr<v1::PriceKind> ParsePriceKind(absl::string_view name);

// A schedule firing's outcome: "started", "skipped", "missed", "failed";
// "unspecified".
std::string FiringOutcomeName(v1::FiringOutcome outcome);

// "DEADLINE_EXCEEDED", ... (the google.rpc.Code name).
std::string StatusCodeName(v1::StatusCode code);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_API_ENUMS_H_
