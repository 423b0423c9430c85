#include "agent/benchmarks/disk_common/scratch_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

namespace fs = std::filesystem;

// A fresh canonical folder under the test's temp dir, removed afterwards.
class ScratchPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = fs::canonical(::testing::TempDir()).string() +
                          "/scratch_path_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    scratch_ = root_ + "/scratch";
    outside_ = root_ + "/outside";
    fs::create_directory(scratch_);
    fs::create_directory(outside_);
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string root_;
  std::string scratch_;
  std::string outside_;
};

TEST_F(ScratchPathTest, AcceptsCanonicalDir) {
  absl::StatusOr<std::string> target = ResolveScratchTarget(scratch_, "f.dat");
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(*target, scratch_ + "/f.dat");
  // Doubled and trailing slashes are spelling, not a different path.
  target = ResolveScratchTarget(scratch_ + "/", "f.dat");
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(*target, scratch_ + "/f.dat");
}

TEST_F(ScratchPathTest, RefusesDotDot) {
  absl::StatusOr<std::string> target =
      ResolveScratchTarget(scratch_ + "/../outside", "f.dat");
  EXPECT_EQ(target.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(target.status().message(), HasSubstr("'..'"));
  target = ResolveScratchTarget(scratch_ + "/./", "f.dat");
  EXPECT_EQ(target.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(ScratchPathTest, RefusesMissingRelativeAndNonDirectory) {
  absl::StatusOr<std::string> target =
      ResolveScratchTarget(scratch_ + "/missing", "f.dat");
  EXPECT_EQ(target.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(target.status().message(), HasSubstr("does not exist"));

  target = ResolveScratchTarget("relative/dir", "f.dat");
  EXPECT_EQ(target.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(target.status().message(), HasSubstr("not absolute"));

  target = ResolveScratchTarget("", "f.dat");
  EXPECT_EQ(target.status().code(), absl::StatusCode::kFailedPrecondition);

  std::ofstream(scratch_ + "/plain") << "x";
  target = ResolveScratchTarget(scratch_ + "/plain", "f.dat");
  EXPECT_EQ(target.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(target.status().message(), HasSubstr("not a directory"));
}

TEST_F(ScratchPathTest, RefusesSymlinkedScratchDir) {
  fs::create_directory_symlink(outside_, root_ + "/link");
  absl::StatusOr<std::string> target =
      ResolveScratchTarget(root_ + "/link", "f.dat");
  EXPECT_EQ(target.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(target.status().message(), HasSubstr("symlink"));
  EXPECT_THAT(target.status().message(), HasSubstr(outside_));
}

TEST_F(ScratchPathTest, RefusesSymlinkAtFileNameLeadingOutside) {
  fs::create_symlink(outside_ + "/victim", scratch_ + "/f.dat");
  absl::StatusOr<std::string> target = ResolveScratchTarget(scratch_, "f.dat");
  EXPECT_EQ(target.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(target.status().message(), HasSubstr("leads outside"));
  // Nothing was created at the symlink's target.
  EXPECT_FALSE(fs::exists(outside_ + "/victim"));
}

TEST_F(ScratchPathTest, RefusesExistingNames) {
  std::ofstream(scratch_ + "/taken.dat") << "x";
  EXPECT_EQ(ResolveScratchTarget(scratch_, "taken.dat").status().code(),
            absl::StatusCode::kAlreadyExists);
  fs::create_symlink(scratch_ + "/taken.dat", scratch_ + "/inside.dat");
  EXPECT_EQ(ResolveScratchTarget(scratch_, "inside.dat").status().code(),
            absl::StatusCode::kAlreadyExists);
}

TEST_F(ScratchPathTest, RefusesFileNamesWithPaths) {
  for (const char* name : {"", ".", "..", "a/b", "../x"}) {
    EXPECT_EQ(ResolveScratchTarget(scratch_, name).status().code(),
              absl::StatusCode::kInvalidArgument)
        << name;
  }
}

TEST(RandomDiskFileNameTest, PatternAndFreshness) {
  const std::string a = RandomDiskFileName();
  const std::string b = RandomDiskFileName();
  EXPECT_THAT(a, MatchesRegex("fleetbench-disk-[0-9a-f]{16}\\.dat"));
  EXPECT_NE(a, b);
}

TEST(RandomDiskFileNameTest, RecognisesOnlyItsOwnNames) {
  EXPECT_TRUE(IsDiskFileName(RandomDiskFileName()));
  EXPECT_TRUE(IsDiskFileName("fleetbench-disk-0123456789abcdef.dat"));
  EXPECT_FALSE(IsDiskFileName("fleetbench-disk-0123456789ABCDEF.dat"));
  EXPECT_FALSE(IsDiskFileName("fleetbench-disk-0123456789abcde.dat"));
  EXPECT_FALSE(IsDiskFileName("fleetbench-disk-0123456789abcdef.dat.bak"));
  EXPECT_FALSE(IsDiskFileName("important.dat"));
}

TEST(CheckFreeSpaceTest, NeedsFilePlusTenPercent) {
  EXPECT_TRUE(CheckFreeSpace("/s", 1100, 1000).ok());
  EXPECT_TRUE(CheckFreeSpace("/s", uint64_t{1} << 40, 1000).ok());
  const absl::Status s =
      CheckFreeSpace("/s", uint64_t{512} << 20, uint64_t{1024} << 20);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("512.0 MiB free"));
  EXPECT_THAT(s.message(), HasSubstr("1024.0 MiB test file needs 1126.4 MiB"));
  EXPECT_EQ(CheckFreeSpace("/s", 1099, 1000).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(ScratchPathTest, AvailableBytesOfRealDir) {
  absl::StatusOr<uint64_t> bytes = AvailableBytes(scratch_);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_GT(*bytes, 0u);
  EXPECT_FALSE(AvailableBytes(scratch_ + "/missing").ok());
}

TEST_F(ScratchPathTest, ScratchFileIsRemovedWhenDestroyed) {
  {
    absl::StatusOr<std::unique_ptr<ScratchFile>> file =
        ScratchFile::Create(scratch_, "t.dat");
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_EQ((*file)->path(), scratch_ + "/t.dat");
    EXPECT_TRUE(fs::exists(scratch_ + "/t.dat"));
    EXPECT_EQ(fs::status(scratch_ + "/t.dat").permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    ASSERT_EQ(write((*file)->fd(), "abc", 3), 3);
    absl::StatusOr<int> again = (*file)->Reopen(0);
    ASSERT_TRUE(again.ok()) << again.status();
    char buffer[3];
    ASSERT_EQ(pread(*again, buffer, 3, 0), 3);
    EXPECT_EQ(std::string(buffer, 3), "abc");
    // The same name cannot be created twice.
    EXPECT_EQ(ScratchFile::Create(scratch_, "t.dat").status().code(),
              absl::StatusCode::kAlreadyExists);
  }
  EXPECT_FALSE(fs::exists(scratch_ + "/t.dat"));
}

TEST_F(ScratchPathTest, SweepRemovesOnlyUnlockedTestFiles) {
  const std::string stale = "fleetbench-disk-00000000000000aa.dat";
  const std::string symlink = "fleetbench-disk-00000000000000bb.dat";
  std::ofstream(scratch_ + "/" + stale) << "left by a killed run";
  std::ofstream(scratch_ + "/keep.dat") << "not ours";
  std::ofstream(outside_ + "/target") << "x";
  fs::create_symlink(outside_ + "/target", scratch_ + "/" + symlink);
  absl::StatusOr<std::unique_ptr<ScratchFile>> live =
      ScratchFile::Create(scratch_, "fleetbench-disk-00000000000000cc.dat");
  ASSERT_TRUE(live.ok()) << live.status();

  absl::StatusOr<int> removed = RemoveStaleScratchFiles(scratch_);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 1);
  EXPECT_FALSE(fs::exists(scratch_ + "/" + stale));
  EXPECT_TRUE(fs::exists((*live)->path()));
  EXPECT_TRUE(fs::exists(scratch_ + "/keep.dat"));
  EXPECT_TRUE(fs::is_symlink(scratch_ + "/" + symlink));
  EXPECT_TRUE(fs::exists(outside_ + "/target"));
  EXPECT_FALSE(RemoveStaleScratchFiles(scratch_ + "/missing").ok());
}

TEST_F(ScratchPathTest, ScratchFileNeverFollowsSymlink) {
  fs::create_symlink(outside_ + "/victim", scratch_ + "/t.dat");
  EXPECT_FALSE(ScratchFile::Create(scratch_, "t.dat").ok());
  EXPECT_FALSE(fs::exists(outside_ + "/victim"));
}

// Regression: the check guarded only the last component, and the file was then
// created by path: an ancestor swapped for a symlink between the two put the
// test file outside (once in 25 runs). Now the folder is opened once and
// everything after is relative to that handle: the same swap, made
// deterministically here, leaves every byte in the folder that was checked.
TEST_F(ScratchPathTest, SwappingAnAncestorAfterOpenStaysConfined) {
  const std::string parent = root_ + "/parent";
  fs::create_directories(parent + "/scratch");
  fs::create_directories(outside_ + "/scratch");
  const std::string decoy = "fleetbench-disk-00000000000000dd.dat";
  std::ofstream(outside_ + "/scratch/" + decoy) << "not the benchmark's to remove";

  absl::StatusOr<std::unique_ptr<ScratchDir>> dir = ScratchDir::Open(parent + "/scratch");
  ASSERT_TRUE(dir.ok()) << dir.status();
  // The swap: the checked ancestor moves away and a symlink to outside takes
  // its name, so the configured path now leads outside.
  fs::rename(parent, root_ + "/parent.real");
  fs::create_directory_symlink(outside_, parent);
  ASSERT_TRUE(fs::exists(parent + "/scratch/" + decoy));

  absl::StatusOr<int> removed = RemoveStaleScratchFiles(**dir);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 0);
  EXPECT_TRUE(fs::exists(outside_ + "/scratch/" + decoy));
  EXPECT_TRUE(AvailableBytes(**dir).ok());
  EXPECT_TRUE((*dir)->CheckNewName("t.dat").ok());
  {
    absl::StatusOr<std::unique_ptr<ScratchFile>> file = ScratchFile::Create(**dir, "t.dat");
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_EQ(write((*file)->fd(), "abc", 3), 3);
    EXPECT_TRUE(fs::exists(root_ + "/parent.real/scratch/t.dat"));
    EXPECT_FALSE(fs::exists(outside_ + "/scratch/t.dat"));
    EXPECT_TRUE((*file)->Reopen(0).ok());
  }
  EXPECT_FALSE(fs::exists(root_ + "/parent.real/scratch/t.dat"));
  EXPECT_FALSE(fs::exists(outside_ + "/scratch/t.dat"));
  // Opened afresh, the swapped path is refused at the symlink.
  absl::StatusOr<std::unique_ptr<ScratchDir>> again = ScratchDir::Open(parent + "/scratch");
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(again.status().message(), HasSubstr("symlink at '" + parent + "'"));
}

TEST_F(ScratchPathTest, RefusesASymlinkAsAncestorOrLastComponent) {
  fs::create_directories(outside_ + "/inner");
  fs::create_directory_symlink(outside_, root_ + "/up");
  for (const std::string& path : {root_ + "/up/inner", root_ + "/up"}) {
    absl::StatusOr<std::unique_ptr<ScratchDir>> dir = ScratchDir::Open(path);
    EXPECT_EQ(dir.status().code(), absl::StatusCode::kFailedPrecondition) << path;
    EXPECT_THAT(dir.status().message(), HasSubstr("symlink at '" + root_ + "/up'"));
    EXPECT_THAT(dir.status().message(), HasSubstr(outside_));
  }
  std::ofstream(root_ + "/file") << "x";
  EXPECT_THAT(ScratchDir::Open(root_ + "/file/below").status().message(),
              HasSubstr("not a directory"));
}

// Regression: agent start-up created the scratch folder through a symlinked
// parent (create_directories follows links), planting folders outside.
TEST_F(ScratchPathTest, CreateScratchDirsNeverCreatesThroughASymlink) {
  ASSERT_TRUE(CreateScratchDirs(root_ + "/state/a/scratch").ok());
  EXPECT_TRUE(fs::is_directory(root_ + "/state/a/scratch"));
  EXPECT_TRUE(CreateScratchDirs(root_ + "/state/a/scratch").ok());  // already there

  fs::create_directory_symlink(outside_, root_ + "/link");
  const absl::Status s = CreateScratchDirs(root_ + "/link/new/scratch");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("symlink at '" + root_ + "/link'"));
  EXPECT_FALSE(fs::exists(outside_ + "/new"));
  fs::create_directory_symlink(outside_, root_ + "/state/last");
  EXPECT_FALSE(CreateScratchDirs(root_ + "/state/last").ok());
  EXPECT_FALSE(CreateScratchDirs("relative/scratch").ok());
}

}  // namespace
}  // namespace fleetbench::agent
