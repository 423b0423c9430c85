#include "controller/group_plan.h"

#include "absl/strings/str_cat.h"

namespace fleetbench::controller {

absl::StatusOr<std::vector<GroupPlan>> PlanGroups(const v1::GroupOptions& options,
                                                  const std::vector<std::string>& nodes) {
  switch (options.mode()) {
    case v1::GROUP_MODE_GROUP:
      if (nodes.size() < 2) {
        return absl::InvalidArgumentError(
            absl::StrCat("a group needs at least two nodes; ", nodes.size(), " selected"));
      }
      return std::vector<GroupPlan>{GroupPlan{nodes, 0}};
    case v1::GROUP_MODE_SCALING:
    case v1::GROUP_MODE_ISOLATE:
      // TODO(issue 11): scaling and isolation plans.
      return absl::UnimplementedError("scaling and isolate are not built yet");
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown group mode ", static_cast<int>(options.mode())));
  }
}

std::vector<GroupPlan> PlanNextGroups(const v1::GroupOptions& options,
                                      const std::vector<std::string>& nodes,
                                      const std::vector<v1::GroupResult>& done) {
  (void)options;
  (void)nodes;
  (void)done;
  return {};
}

v1::IsolationVerdict JudgeIsolation(const v1::GroupOptions& options,
                                    const std::vector<std::string>& nodes,
                                    const std::vector<v1::GroupResult>& done) {
  (void)options;
  (void)nodes;
  (void)done;
  return {};
}

}  // namespace fleetbench::controller
