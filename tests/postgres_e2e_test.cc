// A fleet on a PostgreSQL history, as users run it (docs/operations.md,
// PostgreSQL): a controller with --db postgresql://... and its password in
// a file, TLS and enrolled agents, a real run stored and ranked; a second
// controller on the same history refused unless it stands by; a standby
// that takes over within seconds of the leader's SIGKILL, with the same
// history, the same CA (its files copied, as a fleet shares them) and the
// nodes' identities, so the agents, given both controllers' addresses,
// follow it without a restart, connect with their own certificates and run
// again. And a fleet that moves its SQLite history into PostgreSQL with
// `fleetbench store copy` and goes on.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/rank.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "storage/postgres_test_server.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

namespace fs = std::filesystem;

class PostgresFleetTest : public FleetTest {
 protected:
  void SetUp() override {
    FleetTest::SetUp();
    auto server = storage::PostgresTestServer::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    postgres_ = std::move(*server);
    ASSERT_TRUE(postgres_->CreateDatabase("fleet").ok());
    db_path_ = postgres_->Url("fleet");
    files_prefix_ = dir_ + "/ctl-a/controller";
    controller_flags_ = {"--db-password-file", postgres_->password_file(), "--state-dir",
                         dir_ + "/ctl-a"};
  }
  void TearDown() override {
    FleetTest::TearDown();
    postgres_.reset();
  }
  // A quick gemm run on the three nodes, waited for; `out` gets it.
  void RunGemm(const std::string& note, v1::Run* out = nullptr) {
    v1::Run local;
    v1::Run& run = out != nullptr ? *out : local;
    int code = -1;
    ASSERT_TRUE(CliJson({"run", "--bench", "gemm", "--param", "gemm.sizes=128", "--param",
                         "gemm.min_seconds=0.1", "--param", "gemm.threads=1", "--wait"},
                        &run, &code))
        << note;
    ASSERT_EQ(code, 0) << note << run.DebugString();
    ASSERT_EQ(run.tasks_size(), 3) << note;
  }
  int CountRuns() {
    v1::ListRunsResponse runs;
    if (!CliJson({"runs"}, &runs)) return -1;
    return runs.runs_size();
  }
  // A controller on the same history, on its own port and folder.
  std::unique_ptr<Process> OtherController(const std::string& name, const std::string& address,
                                           std::vector<std::string> extra) {
    std::vector<std::string> argv = {FLEETBENCH_BINARY, "controller", "--listen", address,
                                     "--db", db_path_, "--db-password-file",
                                     postgres_->password_file(), "--state-dir",
                                     dir_ + "/" + name};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return std::make_unique<Process>(argv, env_, dir_ + "/" + name + ".log");
  }

  std::unique_ptr<storage::PostgresTestServer> postgres_;
};

TEST_F(PostgresFleetTest, ALeaderAStandbyAndTheFleetAcrossTheTakeover) {
  // The agents know both controllers from the start, as a fleet's would:
  // the standby's address does not answer until it leads.
  const std::string address_a = address_;
  const std::string address_b = absl::StrCat("127.0.0.1:", PickFreePort());
  agent_controller_ = absl::StrCat(address_a, ",", address_b);
  StartController();
  for (const char* n : {"pg1", "pg2", "pg3"}) {
    StartAgent(n, {"instance_type=pgtype", "price_per_hour=1"});
  }
  ASSERT_TRUE(WaitForOnlineNodes(3, absl::Seconds(60)));
  ASSERT_NO_FATAL_FAILURE(RunGemm("on the first leader"));
  v1::RankResponse rank;
  ASSERT_TRUE(CliJson({"rank", "--metric", "gemm.cpu.fp32.tflops"}, &rank));
  EXPECT_EQ(rank.rows_size(), 3) << rank.DebugString();

  // A second controller without --standby: refused, saying what to do.
  auto second = OtherController("ctl-x", absl::StrCat("127.0.0.1:", PickFreePort()), {});
  EXPECT_NE(second->Wait(), 0);
  EXPECT_TRUE(absl::StrContains(
      [&] {
        std::ifstream in(dir_ + "/ctl-x.log");
        return std::string(std::istreambuf_iterator<char>(in), {});
      }(),
      "--standby"));

  // A standby with the fleet's CA (copied, as a fleet shares it), on its
  // own port: it waits while the leader lives.
  fs::create_directories(dir_ + "/ctl-b/controller.tls");
  for (const char* f : {"ca.pem", "ca.key"}) {
    fs::copy_file(dir_ + "/ctl-a/controller.tls/" + f, dir_ + "/ctl-b/controller.tls/" + f);
  }
  auto standby = OtherController("ctl-b", address_b, {"--standby"});
  EXPECT_TRUE(standby->ReadLineStartingWith("listening", absl::Seconds(2)).empty())
      << "a standby serves nothing while the leader lives";

  // The leader dies: the standby leads within seconds.
  const absl::Time killed = absl::Now();
  KillController(SIGKILL);
  ASSERT_FALSE(standby->ReadLineStartingWith("listening", absl::Seconds(10)).empty())
      << "the standby did not take over; see " << dir_ << "/ctl-b.log";
  const absl::Duration takeover = absl::Now() - killed;
  std::cout << "standby took over " << absl::FormatDuration(takeover)
            << " after the leader's SIGKILL\n";
  controller_ = std::move(standby);
  // The CLI too is given both: it talks to the one that answers.
  address_ = agent_controller_;
  files_prefix_ = dir_ + "/ctl-b/controller";
  env_["FLEETBENCH_CA"] = CaPath();
  EXPECT_EQ(CountRuns(), 1) << "the same history";

  // The agents, never restarted, find the new leader on their own and
  // connect with the certificates the old one issued (the same CA, the
  // identities in the history).
  const std::vector<std::string> names = {"pg1", "pg2", "pg3"};
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const std::string& n : names) {
          if (CountInAgentLog(n, "connected to " + address_b + " as ") == 0) return false;
        }
        return true;
      },
      absl::Seconds(90)))
      << AgentLog("pg1");
  ASSERT_TRUE(WaitForOnlineNodes(3, absl::Seconds(60)));
  for (const std::string& n : names) {
    EXPECT_GE(CountInAgentLog(n, "connected to " + address_a + " as "), 1) << AgentLog(n);
    EXPECT_GE(CountInAgentLog(n, "; trying " + address_b + "\n"), 1)
        << n << ": the dead leader's address, then the standby's at once\n"
        << AgentLog(n);
  }
  ASSERT_NO_FATAL_FAILURE(RunGemm("on the new leader"));
  EXPECT_EQ(CountRuns(), 2);
}

// A team moves its fleet from SQLite to PostgreSQL: the SQLite
// controller stopped, `fleetbench store copy` into an empty database, a
// controller started on it with the fleet's CA: the agents, never
// restarted, come back with the identities they enrolled under SQLite, and
// the runs, results and ranking read the same.
TEST_F(PostgresFleetTest, ASqliteHistoryMovesIntoPostgresAndTheFleetGoesOn) {
  const std::string sqlite = dir_ + "/history.db";
  db_path_ = sqlite;
  files_prefix_.clear();
  controller_flags_.clear();
  StartController();
  for (const char* n : {"mv1", "mv2", "mv3"}) {
    StartAgent(n, {"instance_type=mvtype", "price_per_hour=1"});
  }
  ASSERT_TRUE(WaitForOnlineNodes(3, absl::Seconds(60)));
  v1::Run run;
  ASSERT_NO_FATAL_FAILURE(RunGemm("on SQLite", &run));
  v1::Run before;
  ASSERT_TRUE(CliJson({"results", run.run_id()}, &before));
  ASSERT_GT(before.samples_size(), 0);
  v1::RankResponse rank_before;
  ASSERT_TRUE(CliJson({"rank", "--metric", "gemm.cpu.fp32.tflops"}, &rank_before));
  ASSERT_EQ(rank_before.rows_size(), 3);

  // An offline command: no controller to talk to.
  const std::vector<std::string> copy = {FLEETBENCH_BINARY, "store", "copy", "--from", sqlite,
                                         "--to", postgres_->Url("fleet"), "--to-password-file",
                                         postgres_->password_file()};
  // Not while its controller runs.
  CommandResult refused = RunCommand(copy, env_);
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_TRUE(absl::StrContains(refused.err, "a controller runs on " + sqlite + ": stop it"))
      << refused.err;

  KillController(SIGTERM);
  std::vector<std::string> with_json = copy;
  with_json.push_back("--json");
  CommandResult copied = RunCommand(with_json, env_);
  ASSERT_EQ(copied.exit_code, 0) << copied.out << copied.err;
  EXPECT_TRUE(absl::StrContains(copied.out, absl::StrCat("\"samples\": ", before.samples_size())))
      << copied.out;
  EXPECT_TRUE(absl::StrContains(copied.err, "copying samples")) << copied.err;
  std::cout << "store copy: " << copied.out;
  // Into a database that holds a history: refused, nothing changed.
  CommandResult again = RunCommand(copy, env_);
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(again.err, "already holds a history")) << again.err;

  // The controller on PostgreSQL, with the fleet's CA (docs/operations.md).
  fs::create_directories(dir_ + "/ctl-a/controller.tls");
  for (const char* f : {"ca.pem", "ca.key"}) {
    fs::copy_file(sqlite + ".tls/" + f, dir_ + "/ctl-a/controller.tls/" + f);
  }
  db_path_ = postgres_->Url("fleet");
  files_prefix_ = dir_ + "/ctl-a/controller";
  controller_flags_ = {"--db-password-file", postgres_->password_file(), "--state-dir",
                       dir_ + "/ctl-a"};
  StartController();
  env_["FLEETBENCH_CA"] = CaPath();
  v1::Run after;
  ASSERT_TRUE(CliJson({"results", run.run_id()}, &after));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(after, before))
      << before.DebugString() << "\n---\n" << after.DebugString();
  v1::RankResponse rank_after;
  ASSERT_TRUE(CliJson({"rank", "--metric", "gemm.cpu.fp32.tflops"}, &rank_after));
  ASSERT_EQ(rank_after.rows_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rank_after.rows(i).group(), rank_before.rows(i).group());
    EXPECT_DOUBLE_EQ(rank_after.rows(i).median(), rank_before.rows(i).median());
  }
  ASSERT_TRUE(WaitForOnlineNodes(3, absl::Seconds(90)));
  for (const char* n : {"mv1", "mv2", "mv3"}) {
    EXPECT_EQ(CountInAgentLog(n, "; certificate in "), 1) << "no second enrollment\n"
                                                          << AgentLog(n);
  }
  ASSERT_NO_FATAL_FAILURE(RunGemm("on the copied history"));
  EXPECT_EQ(CountRuns(), 2);
}

}  // namespace
}  // namespace fleetbench::testing
