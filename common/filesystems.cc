#include "common/filesystems.h"

#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace fleetbench {

bool IsNetworkFilesystem(absl::string_view fs_type) {
  static constexpr absl::string_view kNetwork[] = {
      "nfs",    "nfs4", "cifs", "smb3",      "smbfs", "ceph", "lustre",  "gpfs",
      "beegfs", "9p",   "afs",  "glusterfs", "ncpfs", "coda", "orangefs"};
  for (absl::string_view name : kNetwork) {
    if (fs_type == name) return true;
  }
  // FUSE clients of remote storage: sshfs, s3fs, gcsfuse, rclone, goofys,
  // blobfuse(2), mountpoint-s3, juicefs, ceph-fuse, glusterfs.
  static constexpr absl::string_view kFuseRemote[] = {
      "sshfs",    "s3fs",          "gcsfuse", "rclone", "goofys",
      "blobfuse", "mountpoint-s3", "juicefs", "ceph",   "glusterfs"};
  if (absl::ConsumePrefix(&fs_type, "fuse.")) {
    for (absl::string_view name : kFuseRemote) {
      if (absl::StartsWith(fs_type, name)) return true;
    }
  }
  return false;
}
bool IsEphemeralFilesystem(absl::string_view fs_type) {
  for (absl::string_view name : {"tmpfs", "ramfs", "overlay", "aufs"}) {
    if (fs_type == name) return true;
  }
  return false;
}

}  // namespace fleetbench
