#include "agent/benchmarks/group_key.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace fleetbench::agent {
namespace {

constexpr absl::Duration kCancelSlice = absl::Milliseconds(200);

std::string RankZeroNode(const GroupContext& group) {
  return group.member_nodes.empty() ? "?" : group.member_nodes[0];
}

}  // namespace

absl::Status PublishGroupValue(const GroupContext& group,
                               const std::string& key,
                               const std::string& value) {
  if (group.rendezvous == nullptr) {
    return absl::FailedPreconditionError("the group gives no rendezvous");
  }
  return group.rendezvous->Set(key, value);
}

absl::Status PublishGroupRefusal(const GroupContext& group,
                                 const std::string& key,
                                 const absl::Status& why) {
  return PublishGroupValue(group, key,
                           absl::StrCat(kGroupRefusalPrefix, why.message()));
}

absl::StatusOr<std::string> AwaitGroupValue(const RunContext& context,
                                            const GroupContext& group,
                                            const std::string& plugin,
                                            const std::string& key) {
  if (group.rendezvous == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(plugin, ": the group gives no rendezvous"));
  }
  const absl::Time deadline = std::min(group.deadline, context.deadline());
  absl::StatusOr<std::string> value;
  while (true) {
    if (context.cancelled()) {
      value = absl::CancelledError("cancelled");
      break;
    }
    const absl::Duration left = deadline - absl::Now();
    value = group.rendezvous->Get(
        key, std::clamp(left, absl::ZeroDuration(), kCancelSlice));
    if (!absl::IsDeadlineExceeded(value.status()) ||
        left <= absl::ZeroDuration()) {
      break;
    }
  }
  if (!value.ok()) {
    return absl::Status(
        value.status().code(),
        absl::StrCat(plugin, ": rank ", group.rank, " got no ", key,
                     " from rank 0 (", RankZeroNode(group),
                     "): ", value.status().message()));
  }
  if (absl::StartsWith(*value, kGroupRefusalPrefix)) {
    return absl::FailedPreconditionError(
        absl::StrCat("rank 0 (", RankZeroNode(group), ") refused the run: ",
                     value->substr(sizeof(kGroupRefusalPrefix) - 1)));
  }
  return value;
}

}  // namespace fleetbench::agent
