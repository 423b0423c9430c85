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

#include <cstdint>
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

// The storage under one path, for results that depend on it (the disk
// benchmark's samples carry it).
struct StorageFacts {
  std::string filesystem;    // type of the mount holding the path; "" unknown
  std::string mount_source;  // "/dev/vda1", "server:/export"; "" unknown
  // Why the storage is reached over a network ("filesystem nfs4", "block
  // device rbd0", "model Amazon Elastic Block Store"); "" when it is not,
  // or nothing says so.
  std::string network_reason;
  // The whole disk under the filesystem (a partition's parent) when there is
  // a block device: name, size, model, rotational, scheduler, virtual. Name
  // "" otherwise (tmpfs, overlay, NFS).
  v1::BlockDeviceFacts device;
  // Its queue/logical_block_size (direct I/O must align to it); 0 when there
  // is no block device or sysfs does not say.
  int64_t logical_block_bytes = 0;
};

// `path`: absolute, inside `root` ("/" on a node). device_major/minor: st_dev
// of a file under `path` (major(st.st_dev), ...); 0:0 skips the device.
// Never fails: what cannot be read stays empty.
StorageFacts ReadStorageFacts(const std::string& root, const std::string& path,
                              unsigned device_major, unsigned device_minor);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_FACTS_FACTS_H_
