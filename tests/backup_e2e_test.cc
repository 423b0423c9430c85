// `fleetbench backup` end to end: a real controller taking reports from
// fake agents (bench/fleetbench_load, the real protocol) while the CLI
// copies its history over gRPC. The copy must open, pass SQLite's
// integrity_check (read by the sqlite3 shell, not by fleetbench) and hold
// every sample the live file held when the backup started; ingest must
// still be going when the backup ends.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

class BackupTest : public FleetTest {
 protected:
  // The sqlite3 shell on `db`; stdout.
  CommandResult Sql(const std::string& db, const std::string& sql, bool readonly) {
    std::vector<std::string> argv = {"/usr/bin/sqlite3"};
    if (readonly) argv.push_back("-readonly");
    argv.push_back(db);
    argv.push_back(sql);
    return RunCommand(argv, {});
  }
  int64_t CountSamples(const std::string& db) {
    CommandResult r = Sql(db, "SELECT count(*) FROM samples", true);
    int64_t n = -1;
    if (r.exit_code != 0 || !absl::SimpleAtoi(absl::StripAsciiWhitespace(r.out), &n)) return -1;
    return n;
  }
  std::set<std::string> SampleIds(const std::string& db, bool readonly) {
    CommandResult r = Sql(db, "SELECT hex(id) FROM samples", readonly);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> ids = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
    return std::set<std::string>(ids.begin(), ids.end());
  }
};

TEST_F(BackupTest, ACopyTakenDuringIngestOpensChecksAndHoldsWhatWasStoredBefore) {
  StartController();
  Process load({LOAD_BINARY, "--mode", "ingest", "--controller", address_, "--streams", "2",
                "--batch", "500", "--window", "4", "--samples", "3000000", "--prefix", "ingest"},
               env_, dir_ + "/load.log");
  ASSERT_FALSE(load.ReadLineStartingWith("ready 2", absl::Seconds(60)).empty())
      << "fake agents not welcomed; see " << dir_ << "/load.log";
  CommandResult run = Cli({"run", "--bench", "gemm", "--nodes", "ingest-0,ingest-1"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_TRUE(WaitFor([&] { return CountSamples(db_path_) >= 50000; }, absl::Seconds(120)))
      << CountSamples(db_path_) << " samples stored";

  const std::set<std::string> before = SampleIds(db_path_, true);
  const std::string copy = dir_ + "/backup.db";
  CommandResult backup = Cli({"backup", "--out", copy, "--json"});
  ASSERT_EQ(backup.exit_code, 0) << backup.err;
  EXPECT_NE(backup.out.find("\"bytes\""), std::string::npos) << backup.out;
  // Ingest went on through the backup: the fake agents are still sending.
  EXPECT_FALSE(load.WaitFor(absl::ZeroDuration()).has_value())
      << "the load ended before the backup did; the test proves nothing about ingest";
  EXPECT_GT(CountSamples(db_path_), static_cast<int64_t>(before.size()));

  EXPECT_FALSE(std::filesystem::exists(copy + "-wal"));
  CommandResult check = Sql(copy, "PRAGMA integrity_check", false);
  EXPECT_EQ(absl::StripAsciiWhitespace(check.out), "ok") << check.err;
  const std::set<std::string> copied = SampleIds(copy, false);
  EXPECT_GE(copied.size(), before.size());
  EXPECT_TRUE(std::includes(copied.begin(), copied.end(), before.begin(), before.end()))
      << before.size() << " samples before, " << copied.size() << " in the copy";
  // No temporary copy is left beside the history.
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().rfind(".fleetbench-backup-", 0), std::string::npos)
        << entry.path();
  }

  // An existing file is never overwritten: a usage error, the file intact.
  const auto size = std::filesystem::file_size(copy);
  CommandResult again = Cli({"backup", "--out", copy});
  EXPECT_EQ(again.exit_code, 2) << again.err;
  EXPECT_EQ(std::filesystem::file_size(copy), size);
}

}  // namespace
}  // namespace fleetbench::testing
