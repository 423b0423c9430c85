// cli/group_text.h — a group run as `fleetbench results` and `run --wait`
// print it (docs/collectives.md): for GROUP the per-size curve
// (size, algbw, busbw) and busbw at the largest size; for SCALING the
// scaling table (N, nodes, busbw, efficiency vs the 2-node figure); for
// ISOLATE the pair matrix with failing cells marked, every pass's groups,
// and the verdict. Pure: it reads a v1::Run and returns text.
#ifndef FLEETBENCH_CLI_GROUP_TEXT_H_
#define FLEETBENCH_CLI_GROUP_TEXT_H_

#include <cstdint>
#include <string>

#include "fleetbench/v1/run.pb.h"

namespace fleetbench::cli {

// "" for a run without groups; otherwise the blocks above, each starting
// with a blank line.
std::string RenderGroups(const v1::Run& run);

// The verdict's one line a user acts on ("verdict: bad node n3 ..."), with
// "(still running)" while passes remain; "" for a run that is not ISOLATE.
std::string VerdictLine(const v1::Run& run);

// `run --wait`'s progress line for a group run: "groups: 9 of 28 ended
// (3 running)", then the verdict so far for ISOLATE; "" without groups (the
// per-node line is shown instead).
std::string GroupProgressLine(const v1::Run& run);

// "512 B", "64 KiB", "256 MiB", "1.5 GiB": a message size as people read it.
std::string FormatBytes(int64_t bytes);

}  // namespace fleetbench::cli

#endif  // FLEETBENCH_CLI_GROUP_TEXT_H_
