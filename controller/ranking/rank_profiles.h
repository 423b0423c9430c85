// controller/ranking/rank_profiles.h — named mixes of metrics that `rank --profile`
// ranks by (docs/ranking.md, Profiles). Data: one table in rank_profiles.cc;
// adding a profile is adding a row. Metric names are those of
// docs/metrics.md; weights are relative (they need not sum to 1).
#ifndef FLEETBENCH_CONTROLLER_RANKING_RANK_PROFILES_H_
#define FLEETBENCH_CONTROLLER_RANKING_RANK_PROFILES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetbench::controller {

struct ProfileWeight {
  std::string metric;
  double weight = 0;
};

struct RankProfile {
  std::string name;
  std::string description;  // one line: what workload the mix stands for
  std::vector<ProfileWeight> metrics;
};

// Every profile, by name.
const std::vector<RankProfile>& RankProfiles();

// INVALID_ARGUMENT naming the known profiles when there is none of `name`.
absl::StatusOr<const RankProfile*> FindRankProfile(absl::string_view name);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_RANKING_RANK_PROFILES_H_
