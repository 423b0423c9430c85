#include "common/wire_limits.h"

#include "absl/strings/str_cat.h"
#include "common/reason.h"

namespace fleetbench {

absl::Status CheckLabel(absl::string_view what, absl::string_view key, absl::string_view value) {
  if (key.empty() || key.size() > kMaxLabelKeyBytes) {
    return absl::InvalidArgumentError(absl::StrCat(what, " key '", ClipInput(key), "' is ",
                                                   key.size(), " bytes; keys are 1..",
                                                   kMaxLabelKeyBytes));
  }
  if (value.size() > kMaxLabelValueBytes) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", ClipInput(key), ": value is ",
                                                   value.size(), " bytes; at most ",
                                                   kMaxLabelValueBytes));
  }
  return absl::OkStatus();
}

absl::Status CheckStartRunBounds(const v1::StartRunRequest& request) {
  if (request.benchmarks_size() > kMaxBenchmarksPerRun) {
    return absl::InvalidArgumentError(absl::StrCat("a run has ", request.benchmarks_size(),
                                                   " benchmarks; at most ",
                                                   kMaxBenchmarksPerRun));
  }
  size_t total = 0;
  for (const v1::BenchmarkSpec& spec : request.benchmarks()) {
    if (spec.name().size() > kMaxBenchmarkNameBytes) {
      return absl::InvalidArgumentError(absl::StrCat("benchmark name '", ClipInput(spec.name()),
                                                     "' is longer than ",
                                                     kMaxBenchmarkNameBytes, " bytes"));
    }
    if (spec.params_size() > kMaxParamsPerBenchmark) {
      return absl::InvalidArgumentError(absl::StrCat(spec.name(), ": ", spec.params_size(),
                                                     " parameters; at most ",
                                                     kMaxParamsPerBenchmark, " per benchmark"));
    }
    for (const auto& [key, value] : spec.params()) {
      if (key.empty() || key.size() > kMaxParamKeyBytes) {
        return absl::InvalidArgumentError(absl::StrCat(spec.name(), ": parameter name '",
                                                       ClipInput(key), "' is ", key.size(),
                                                       " bytes; names are 1..",
                                                       kMaxParamKeyBytes));
      }
      if (value.size() > kMaxParamValueBytes) {
        return absl::InvalidArgumentError(absl::StrCat(
            spec.name(), ".", ClipInput(key), ": the value is ", value.size(),
            " bytes; at most ", kMaxParamValueBytes, " per value"));
      }
      total += key.size() + value.size();
    }
  }
  if (total > kMaxRunParamBytes) {
    return absl::InvalidArgumentError(absl::StrCat("the run's parameters total ", total,
                                                   " bytes; at most ", kMaxRunParamBytes));
  }
  if (request.nodes_size() > kMaxRunNodes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a run names ", request.nodes_size(), " nodes; at most ", kMaxRunNodes));
  }
  for (const std::string& node : request.nodes()) {
    if (node.empty() || node.size() > kMaxNodeNameBytes) {
      return absl::InvalidArgumentError(absl::StrCat("node name '", ClipInput(node), "' is ",
                                                     node.size(), " bytes; names are 1..",
                                                     kMaxNodeNameBytes));
    }
  }
  if (request.select_labels_size() > kMaxLabels) {
    return absl::InvalidArgumentError(absl::StrCat("a run selects on ",
                                                   request.select_labels_size(),
                                                   " labels; at most ", kMaxLabels));
  }
  for (const auto& [key, value] : request.select_labels()) {
    if (absl::Status s = CheckLabel("select label", key, value); !s.ok()) return s;
  }
  if (request.suite().size() > kMaxSuiteNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat("suite name '", ClipInput(request.suite()),
                                                   "' is longer than ", kMaxSuiteNameBytes,
                                                   " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace fleetbench
