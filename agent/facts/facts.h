// agent/facts/facts.h — what a node is, read from /proc and /sys.
//
// Owns: turning a file tree (the live "/" or a captured copy of it) into one
// v1::NodeFacts message. The agent sends it at hello time; storage keeps a
// new version whenever it differs from the last, so everything here is
// deterministic for an unchanged node (sorted listings, no live counters).
//
// No external commands and no syscalls beyond reading files, listing folders
// and reading symlinks: every path is `root` + the absolute path, so tests run
// the whole reader against trees under agent/facts/testdata/.
//
// Errors: never fatal. A fact that cannot be read is left at its default and
// recorded in NodeFacts.unreadable as "what: why"; a part that is normally
// absent (no device/model on a virtio disk, no speed on a bridge) is not.
//
// Thread safety: ReadNodeFacts() keeps no state; calls may run concurrently.
// Cost: a few hundred small reads; call it at hello time, not per sample.
#ifndef FLEETBENCH_AGENT_FACTS_FACTS_H_
#define FLEETBENCH_AGENT_FACTS_FACTS_H_

#include <string>

#include "fleetbench/v1/facts.pb.h"

namespace fleetbench::agent {

struct FactsOptions {
  // Prefix of every path read: "/" on a node, a captured tree in tests.
  std::string root = "/";
  // The folder benchmarks write to, as seen inside `root`; its filesystem
  // type becomes NodeFacts.scratch_filesystem. Empty: not reported.
  std::string scratch_dir;
};

v1::NodeFacts ReadNodeFacts(const FactsOptions& options);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_FACTS_FACTS_H_
