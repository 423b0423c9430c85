// agent/benchmarks/workload/workload_manifest.h — the workloads a node's
// operator declares (agent --workload-dir DIR): DIR/NAME.json is one
// workload named NAME, as proto/fleetbench/v1/workload.proto's
// WorkloadManifest describes (docs/workloads.md).
//
// A manifest is checked whole when the agent starts, and a bad one stops
// the start with one line naming the file and the field: an operator
// learns of a typo at once, not at the first run. Checks: the command is
// an absolute program path and its arguments, every `{x}` in it names a
// declared parameter, every parameter has a valid pattern its default
// matches (or an empty default: the run must give a value), env names are
// variable names, cwd is absolute, the timeout at most 7 days, and the
// work unit is given. Files not ending in .json are ignored (the scripts
// a manifest runs may live beside it).
//
// Thread-safe: plain values.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_WORKLOAD_MANIFEST_H_
#define FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_WORKLOAD_MANIFEST_H_

#include <map>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fleetbench/v1/workload.pb.h"

namespace fleetbench::agent {

struct Workload {
  std::string name;
  v1::WorkloadManifest manifest;
  // What the agent's hello declares of it.
  v1::WorkloadDeclaration Declaration() const;
  absl::Duration Timeout() const;
};

// Parses and checks one manifest; `file` names it in errors.
absl::StatusOr<Workload> ParseWorkloadManifest(absl::string_view file, absl::string_view name,
                                               absl::string_view json);

// Every DIR/*.json, by name. INVALID_ARGUMENT for the first bad one; an
// unreadable folder is an error too.
absl::StatusOr<std::vector<Workload>> LoadWorkloadDir(const std::string& dir);

// The command with each `{param}` replaced by its value in `values`
// (ResolveWorkloadParams's answer).
std::vector<std::string> ExpandCommand(const v1::WorkloadManifest& manifest,
                                       const std::map<std::string, std::string>& values);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_WORKLOAD_WORKLOAD_MANIFEST_H_
