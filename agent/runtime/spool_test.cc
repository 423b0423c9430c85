#include "agent/runtime/spool.h"

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

TEST(SpoolTest, SkipsCorruptFilesAndDropsTemporaries) {
  const std::string dir = TempDir();
  std::ofstream(dir + "/" + NewUlid() + ".report") << "\xff\xff\xff garbage";
  std::ofstream(dir + "/" + NewUlid() + ".report.tmp") << "half written";
  auto spool = Spool::Open(dir);
  ASSERT_TRUE(spool.ok());
  std::vector<std::string> errors;
  EXPECT_TRUE((*spool)->Pending(&errors).empty());
  EXPECT_EQ(errors.size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.report.tmp"));
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
