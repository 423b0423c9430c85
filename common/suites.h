// common/suites.h — named benchmark suites. A suite is data: a list of
// benchmark specs with parameters, not a special case in the runner.
#ifndef FLEETBENCH_COMMON_SUITES_H_
#define FLEETBENCH_COMMON_SUITES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench {

struct SuiteInfo {
  std::string name;
  std::string description;
  std::vector<v1::BenchmarkSpec> benchmarks;
};

const std::vector<SuiteInfo>& AllSuites();
// NOT_FOUND listing the known suites.
absl::StatusOr<SuiteInfo> FindSuite(const std::string& name);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_SUITES_H_
