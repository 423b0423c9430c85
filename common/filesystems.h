// common/filesystems.h — what a filesystem type (the third field of
// /proc/self/mounts) says about where its data lives: across a network, or
// in memory / a container layer that does not outlive a restart.
//
// In common/ because the facts reader (agent/facts/, the disk benchmark's
// storage facts) and the diagnosis rules (disk.network_storage,
// disk.scratch_ephemeral) both ask. Pure, thread-safe.
#ifndef FLEETBENCH_COMMON_FILESYSTEMS_H_
#define FLEETBENCH_COMMON_FILESYSTEMS_H_

#include "absl/strings/string_view.h"

namespace fleetbench {

// Filesystems whose data lives across a network (nfs, cifs, ceph, lustre,
// 9p, and FUSE clients of object stores and remote shells, ...).
bool IsNetworkFilesystem(absl::string_view fs_type);

// Filesystems whose contents are gone after a reboot or when the container
// is recreated: tmpfs, ramfs, and a container's own writable layer (overlay,
// aufs). Data kept there must be copied out to survive.
bool IsEphemeralFilesystem(absl::string_view fs_type);

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_FILESYSTEMS_H_
