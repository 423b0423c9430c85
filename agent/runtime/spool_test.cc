#include "agent/runtime/spool.h"

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/ulid.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

std::string TempDir() {
  std::string dir = std::filesystem::temp_directory_path() / ("spool_test_" + NewUlid());
  std::filesystem::create_directories(dir);
  return dir;
}

v1::Report MakeReport(const std::string& task, bool finished) {
  v1::Report r;
  r.set_report_id(NewUlid());
  r.set_task_id(task);
  r.set_task_finished(finished);
  return r;
}

TEST(SpoolTest, KeepsReportsUntilRemovedAcrossReopen) {
  const std::string dir = TempDir();
  v1::Report a = MakeReport("t1", false);
  v1::Report b = MakeReport("t1", true);
  {
    auto spool = Spool::Open(dir);
    ASSERT_TRUE(spool.ok());
    ASSERT_TRUE((*spool)->Put(a).ok());
    ASSERT_TRUE((*spool)->Put(b).ok());
  }
  auto spool = Spool::Open(dir);
  ASSERT_TRUE(spool.ok());
  std::vector<v1::Report> pending = (*spool)->Pending();
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0].report_id(), a.report_id());  // oldest first
  EXPECT_EQ(pending[1].report_id(), b.report_id());
  EXPECT_EQ((*spool)->FinishedTaskIds(), std::set<std::string>{"t1"});

  ASSERT_TRUE((*spool)->Remove(a.report_id()).ok());
  ASSERT_TRUE((*spool)->Remove(a.report_id()).ok());  // twice is fine
  EXPECT_EQ((*spool)->size(), 1u);
}

TEST(SpoolTest, QuarantinesCorruptFilesAndDropsTemporaries) {
  const std::string dir = TempDir();
  const std::string garbage = NewUlid() + ".report";
  std::ofstream(dir + "/" + garbage) << "\xff\xff\xff garbage";
  const std::string tmp = NewUlid() + ".report.tmp";
  std::ofstream(dir + "/" + tmp) << "half written";
  auto spool = Spool::Open(dir);
  ASSERT_TRUE(spool.ok());
  std::vector<std::string> errors;
  EXPECT_TRUE((*spool)->Pending(&errors).empty());
  EXPECT_EQ(errors.size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(dir + "/" + tmp));
  EXPECT_TRUE(std::filesystem::exists(dir + "/quarantine/" + garbage));
}

// Regression: some truncations of a spooled report parsed as a shorter valid
// report (its last samples silently gone). The length and checksum catch
// every cut: nothing is resent, the file is quarantined with the reason.
TEST(SpoolTest, TruncatedReportIsQuarantinedNotResentShorter) {
  v1::Report full = MakeReport("t1", true);
  for (int i = 0; i < 50; ++i) {
    v1::Sample* s = full.add_samples();
    s->set_id(NewUlid());
    s->set_metric("gemm.cpu.fp32.tflops");
    s->set_value(i);
  }
  const std::string image = Spool::Encode(full);
  const size_t last_sample = full.samples(49).ByteSizeLong() + 2;  // tag, length
  for (size_t keep : {image.size() - last_sample, image.size() - 1, image.size() / 2,
                      size_t{21}, size_t{5}}) {
    const std::string dir = TempDir();
    const std::string name = full.report_id() + ".report";
    std::ofstream(dir + "/" + name, std::ios::binary) << image.substr(0, keep);
    auto spool = Spool::Open(dir);
    ASSERT_TRUE(spool.ok());
    std::vector<std::string> errors;
    EXPECT_TRUE((*spool)->Pending(&errors).empty()) << "kept " << keep;
    ASSERT_EQ(errors.size(), 1u) << "kept " << keep;
    EXPECT_NE(errors[0].find("quarantined " + name), std::string::npos) << errors[0];
    EXPECT_TRUE(std::filesystem::exists(dir + "/quarantine/" + name));
    EXPECT_EQ((*spool)->size(), 0u);
  }
  // A flipped bit, same length: the checksum.
  const std::string dir = TempDir();
  std::string flipped = image;
  flipped[flipped.size() - 3] ^= 0x10;
  std::ofstream(dir + "/" + full.report_id() + ".report", std::ios::binary) << flipped;
  auto spool = Spool::Open(dir);
  ASSERT_TRUE(spool.ok());
  std::vector<std::string> errors;
  EXPECT_TRUE((*spool)->Pending(&errors).empty());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("checksum"), std::string::npos) << errors[0];
}

// Regression: 0-byte and misnamed reports were resent (and refused) forever.
// Each is quarantined once, with one line, and the good report still goes.
TEST(SpoolTest, ZeroByteMisnamedAndMismatchedFilesAreQuarantinedOnce) {
  const std::string dir = TempDir();
  auto spool = Spool::Open(dir);
  ASSERT_TRUE(spool.ok());
  const v1::Report good = MakeReport("t1", true);
  ASSERT_TRUE((*spool)->Put(good).ok());
  const std::string empty = NewUlid() + ".report";
  std::ofstream(dir + "/" + empty).flush();
  std::ofstream(dir + "/notes.txt") << "not a report";
  const std::string other = NewUlid() + ".report";  // holds another id
  std::ofstream(dir + "/" + other, std::ios::binary) << Spool::Encode(MakeReport("t2", false));
  std::ofstream(dir + "/not-a-ulid.report", std::ios::binary) << Spool::Encode(good);

  std::vector<std::string> errors;
  std::vector<v1::Report> pending = (*spool)->Pending(&errors);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].report_id(), good.report_id());
  EXPECT_EQ(errors.size(), 4u);
  for (const char* name : {"notes.txt", "not-a-ulid.report"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/quarantine/" + name)) << name;
  }
  EXPECT_TRUE(std::filesystem::exists(dir + "/quarantine/" + empty));
  EXPECT_TRUE(std::filesystem::exists(dir + "/quarantine/" + other));
  errors.clear();
  EXPECT_EQ((*spool)->Pending(&errors).size(), 1u);
  EXPECT_TRUE(errors.empty());  // once, not at every reconnect
}

TEST(SpoolTest, AnOlderAgentsFilesAreStillResent) {
  const std::string dir = TempDir();
  const v1::Report old = MakeReport("t1", true);
  std::ofstream(dir + "/" + old.report_id() + ".report", std::ios::binary)
      << old.SerializeAsString();
  auto spool = Spool::Open(dir);
  ASSERT_TRUE(spool.ok());
  std::vector<v1::Report> pending = (*spool)->Pending();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].report_id(), old.report_id());
}

// Regression: a read-only spool was accepted at start; every report was then
// one crash away from being lost.
TEST(SpoolTest, RefusesAFolderItCannotWrite) {
  const std::string dir = TempDir();
  bool mounted = false;
  if (geteuid() == 0) {
    // Root writes through permission bits: a read-only mount is the real thing.
    mounted = mount("tmpfs", dir.c_str(), "tmpfs", MS_RDONLY, "size=64k") == 0;
    ASSERT_TRUE(mounted) << "mount a read-only tmpfs: " << std::strerror(errno);
  } else {
    std::filesystem::permissions(dir, std::filesystem::perms::owner_read |
                                          std::filesystem::perms::owner_exec);
  }
  auto spool = Spool::Open(dir);
  if (mounted) umount(dir.c_str());
  ASSERT_FALSE(spool.ok());
  EXPECT_EQ(spool.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(spool.status().message().find("not writable"), std::string::npos)
      << spool.status();
}

TEST(SpoolTest, RejectsIdsThatAreNotUlids) {
  auto spool = Spool::Open(TempDir());
  ASSERT_TRUE(spool.ok());
  v1::Report r;
  r.set_report_id("../../etc/passwd");
  EXPECT_EQ((*spool)->Put(r).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fleetbench::agent
