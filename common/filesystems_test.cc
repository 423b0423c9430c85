#include "common/filesystems.h"

#include "gtest/gtest.h"

namespace fleetbench {
namespace {

TEST(IsNetworkFilesystemTest, Types) {
  for (const char* fs :
       {"nfs", "nfs4", "cifs", "smb3", "ceph", "lustre", "9p", "fuse.sshfs",
        "fuse.s3fs", "fuse.gcsfuse", "fuse.juicefs", "fuse.mountpoint-s3"}) {
    EXPECT_TRUE(IsNetworkFilesystem(fs)) << fs;
  }
  for (const char* fs : {"ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs",
                         "fuse.lxcfs", "fuse", "nfsd", ""}) {
    EXPECT_FALSE(IsNetworkFilesystem(fs)) << fs;
  }
}
TEST(IsEphemeralFilesystemTest, Types) {
  for (const char* fs : {"tmpfs", "ramfs", "overlay", "aufs"}) {
    EXPECT_TRUE(IsEphemeralFilesystem(fs)) << fs;
  }
  for (const char* fs : {"ext4", "xfs", "nfs4", "fuse.overlayfs2", "zfs", ""}) {
    EXPECT_FALSE(IsEphemeralFilesystem(fs)) << fs;
  }
}

}  // namespace
}  // namespace fleetbench
