// agent/benchmarks/sample_summary.h — how a plugin records the spread of
// its repetitions beside the value it reports, so every plugin that
// summarizes repeated runs writes the same keys the same way.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_SAMPLE_SUMMARY_H_
#define FLEETBENCH_AGENT_BENCHMARKS_SAMPLE_SUMMARY_H_

#include <string>

#include "absl/strings/string_view.h"
#include "common/stats.h"
#include "google/protobuf/map.h"

namespace fleetbench::agent {

// Sets runs, min_<unit>, max_<unit>, p10_<unit>, p90_<unit> and spread
// (common/units.h's FormatNumber) in `params`, e.g. unit "tflops" gives
// "min_tflops". The median is the sample's value, so it is not repeated.
void AddSummaryParams(const Summary& summary, absl::string_view unit,
                      google::protobuf::Map<std::string, std::string>* params);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_SAMPLE_SUMMARY_H_
