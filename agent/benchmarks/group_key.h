// agent/benchmarks/group_key.h — rank 0 decides, the others follow: how a
// member of a group run publishes a value for the others through the
// group's rendezvous and how the others wait for it. Both backends of
// "allreduce" use it (the backend choice; NCCL's unique id).
//
// A refusal is published too (PublishGroupRefusal): a value starting with
// kGroupRefusalPrefix carries rank 0's reason, and every waiter fails at
// once with it (FAILED_PRECONDITION, "rank 0 (<node>) refused the run:
// ..."), so a group whose rank 0 cannot start fails fast with the reason
// instead of waiting for its deadline.
//
// AwaitGroupValue waits until the group's deadline (and the run's), in
// slices of at most 200 ms so that a cancel is seen; CANCELLED when the run
// was cancelled, DEADLINE_EXCEEDED naming rank 0 when nothing came, the
// rendezvous' own error otherwise.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GROUP_KEY_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GROUP_KEY_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"

namespace fleetbench::agent {

inline constexpr char kGroupRefusalPrefix[] = "error: ";

absl::Status PublishGroupValue(const GroupContext& group,
                               const std::string& key,
                               const std::string& value);
// Publishes `why`'s message as rank 0's refusal under `key`.
absl::Status PublishGroupRefusal(const GroupContext& group,
                                 const std::string& key,
                                 const absl::Status& why);
// `plugin` prefixes the messages ("allreduce: rank 2 got no ...").
absl::StatusOr<std::string> AwaitGroupValue(const RunContext& context,
                                            const GroupContext& group,
                                            const std::string& plugin,
                                            const std::string& key);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GROUP_KEY_H_
