// common/workload_params.h — which parameter values a declared workload
// takes (proto/fleetbench/v1/workload.proto), checked the same way by the
// controller before it stores a run and by the agent before it runs one.
//
// Rules: a workload's name is [a-z0-9][a-z0-9_]{0,47} (it becomes part of
// its metrics' names: workload.NAME.METRIC). A run's parameters
// for the `workload` benchmark are "name" (which workload) and one value
// per declared parameter; a value must match its parameter's pattern (RE2,
// the whole value, at most kMaxWorkloadValueBytes); a parameter the run
// does not give takes its default, which must match too. A parameter the
// workload does not declare is refused: the controller may only choose
// among the values the node's operator allowed.
//
// Thread-safe; patterns are compiled per call (a run checks a handful).
#ifndef FLEETBENCH_COMMON_WORKLOAD_PARAMS_H_
#define FLEETBENCH_COMMON_WORKLOAD_PARAMS_H_

#include <cstddef>
#include <map>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fleetbench/v1/workload.pb.h"

namespace fleetbench {

// The benchmark that runs declared workloads, and its parameter that names
// the workload.
inline constexpr char kWorkloadBenchmark[] = "workload";
inline constexpr char kWorkloadNameParam[] = "name";
// Every workload metric's name begins so: workload.NAME.METRIC.
inline constexpr char kWorkloadMetricPrefix[] = "workload.";
inline constexpr size_t kMaxWorkloadValueBytes = 1024;
// Bounds on declarations, the same on the agent (its manifest folder) and
// the controller (a hello): workloads per node, parameters per workload,
// bytes of one parameter's pattern.
inline constexpr int kMaxWorkloadsPerNode = 64;
inline constexpr int kMaxWorkloadParams = 32;
inline constexpr size_t kMaxWorkloadPatternBytes = 1024;

// OK, or INVALID_ARGUMENT saying what a name may be.
absl::Status CheckWorkloadName(absl::string_view name);

// The same for a run's `name` parameter, `name` nullptr when the run gives
// none (INVALID_ARGUMENT asking which workload): the controller and the
// agent refuse a run that names no workload alike.
absl::Status CheckNamedWorkload(const std::string* name);

// OK, or INVALID_ARGUMENT when `pattern` is not valid RE2.
absl::Status CheckWorkloadPattern(absl::string_view pattern);

// The value of every declared parameter, from `given` (a run's parameters,
// "name" among them) or the default. INVALID_ARGUMENT, naming the
// workload and the parameter, for an undeclared parameter or a value (given
// or default) its pattern refuses.
absl::StatusOr<std::map<std::string, std::string>> ResolveWorkloadParams(
    const v1::WorkloadDeclaration& workload, const std::map<std::string, std::string>& given);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_WORKLOAD_PARAMS_H_
