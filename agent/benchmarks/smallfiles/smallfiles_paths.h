// agent/benchmarks/smallfiles/smallfiles_paths.h — the pure rules of the
// "smallfiles" benchmark: which dataset paths an agent may read, the names
// of the files it makes, and the random order it reads them in.
//
// No I/O, no clock. A dataset path is read only when it lies under a root
// the agent's operator configured (agent --dataset-root); the check is on
// the lexical path, and the reader then opens it one component at a time
// without following symlinks (scratch_path.h ScratchDir), so the lexical
// path is the one read.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_SMALLFILES_SMALLFILES_PATHS_H_
#define FLEETBENCH_AGENT_BENCHMARKS_SMALLFILES_SMALLFILES_PATHS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace fleetbench::agent {

// OK when `path` is absolute, at most 4096 characters, and has no "." or
// ".." component and no NUL; INVALID_ARGUMENT naming `what` otherwise.
absl::Status CheckAbsoluteFolder(absl::string_view what,
                                 absl::string_view path);

// `path` with repeated and trailing slashes removed ("/" stays "/").
std::string CollapseSlashes(absl::string_view path);

// True when `path` is `root` or inside it, component-wise ("/data2" is not
// under "/data"). Both must have passed CheckAbsoluteFolder.
bool IsUnderRoot(absl::string_view path, absl::string_view root);
// The first of `roots` that holds `path`, or "" when none does.
std::string RootHolding(absl::string_view path,
                        const std::vector<std::string>& roots);

// "fleetbench-smallfiles-<16 hex>": the folder a scratch run makes.
std::string RandomSmallFilesDirName();
bool IsSmallFilesDirName(absl::string_view name);
// The i-th file in that folder: "f0000012.bin".
std::string SmallFileName(int64_t index);

// 0..n-1 in a uniformly random order (Fisher–Yates on splitmix64 from
// `seed`): the order a data loader's shuffling sampler reads an epoch in.
std::vector<int64_t> ShuffledOrder(int64_t n, uint64_t seed);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_SMALLFILES_SMALLFILES_PATHS_H_
