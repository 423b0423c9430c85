// cli/group_flags.h — `fleetbench run`'s group flags (see
// docs/collectives.md): how a run's collective benchmarks span its nodes.
//   --group                  one collective over every selected node
//   --scaling 1,2,4,8        one per size, over the first N nodes
//   --isolate                find the bad node or link: round-robin pairs,
//                            then suspects re-paired with nodes that passed
//     --expect-busbw GBps    judge pairs against this, not their median
//     --threshold F          a pair fails below (1 - F) x the expectation
//     --bisect               halve the suspect set instead (large fleets)
// The modes exclude each other; the isolate options need --isolate.
#ifndef FLEETBENCH_CLI_GROUP_FLAGS_H_
#define FLEETBENCH_CLI_GROUP_FLAGS_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/args.h"
#include "fleetbench/v1/run.pb.h"

namespace fleetbench::cli {

// The flags above, to add to `run`'s own.
std::vector<FlagSpec> GroupFlags();

// nullopt when no mode was asked for (collectives run on each node alone);
// INVALID_ARGUMENT with a one-line message a user acts on otherwise. Node
// counts are the controller's to check: it knows how many were selected.
absl::StatusOr<std::optional<v1::GroupOptions>> GroupOptionsFromArgs(const Args& args);

}  // namespace fleetbench::cli

#endif  // FLEETBENCH_CLI_GROUP_FLAGS_H_
