// Faults made real between real processes (docs/reliability.md): the controller's disk
// fills up (a size-limited tmpfs holds its history), its history file is
// damaged or emptied, an agent is stopped (SIGSTOP) or cut off (its network
// namespace's link down) past the heartbeat grace and comes back. Needs root
// for the mount and the namespaces; without it the test says so and fails
// rather than pretending.
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "gtest/gtest.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int SpooledReports(const std::string& spool) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(spool, ec)) {
    n += e.path().extension() == ".report";
  }
  return n;
}

v1::NodeTask TaskOn(const v1::Run& run, const std::string& node) {
  for (const v1::NodeTask& t : run.tasks()) {
    if (t.node() == node) return t;
  }
  return {};
}

// A tmpfs of a few MiB for the controller's history, filled to the last
// byte on demand and emptied again: a real full disk, ENOSPC from the
// kernel, not a hook in the store.
class FullDiskTest : public FleetTest {
 public:
  void SetUp() override {
    FleetTest::SetUp();
    ASSERT_EQ(geteuid(), 0u) << "mounting a size-limited tmpfs needs root";
    mount_ = dir_ + "/dbfs";
    std::filesystem::create_directories(mount_);
    CommandResult m = RunCommand({"/usr/bin/mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs",
                                  mount_},
                                 {});
    ASSERT_EQ(m.exit_code, 0) << m.err;
    mounted_ = true;
    db_path_ = mount_ + "/history.db";
  }
  void TearDown() override {
    FleetTest::TearDown();  // the controller first: it holds the file open
    if (mounted_) RunCommand({"/usr/bin/umount", "-l", mount_}, {});
  }

  // Writes a filler file until the kernel says the disk is full.
  void FillDisk() {
    std::ofstream out(mount_ + "/filler", std::ios::binary);
    const std::string block(64 << 10, 'x');
    while (out.write(block.data(), static_cast<std::streamsize>(block.size()))) {
    }
    out.close();
    ASSERT_GT(std::filesystem::file_size(mount_ + "/filler"), 0u);
  }
  void FreeDisk() { std::filesystem::remove(mount_ + "/filler"); }

  // The controller says its store is failing (ListNodes' store_error).
  bool StoreFailing(v1::ListNodesResponse* nodes = nullptr) {
    v1::ListNodesResponse response;
    if (!CliJson({"nodes"}, &response)) return false;
    if (nodes) *nodes = response;
    return !response.store_error().empty();
  }

  std::string StartRun(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"run"};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult started = Cli(argv);
    EXPECT_EQ(started.exit_code, 0) << started.err;
    return std::string(absl::StripAsciiWhitespace(started.out));
  }

  v1::Run GetRun(const std::string& run_id) {
    v1::Run run;
    CliJson({"results", run_id}, &run);
    return run;
  }

  std::string mount_;
  bool mounted_ = false;
};

// Regression: after a disk-full commit failure nothing was acked (right) but
// nothing was retried either: runs stayed `running` a minute after space
// was freed, until a controller restart. Now the controller holds the
// reports, says so in `nodes`, and stores them within a retry (at most 2 s)
// of the space coming back.
TEST_F(FullDiskTest, RunsFinishWithinSecondsOfSpaceBeingFreedWithoutARestart) {
  StartController();
  StartAgent("filler", {"price_per_hour=1"});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  const std::string run_id =
      StartRun({"--bench", "gemm", "--param", "gemm.sizes=256", "--param", "gemm.min_seconds=2",
                "--param", "gemm.max_runs=100000", "--param", "gemm.threads=1"});
  ASSERT_FALSE(run_id.empty());
  ASSERT_TRUE(WaitFor([&] { return GetRun(run_id).state() == v1::RUN_STATE_RUNNING; },
                      absl::Seconds(20)));
  ASSERT_NO_FATAL_FAILURE(FillDisk());

  // The agent's reports cannot be committed: shown while it lasts, with
  // the reports held and the run still running.
  v1::ListNodesResponse nodes;
  ASSERT_TRUE(WaitFor([&] { return StoreFailing(&nodes) && nodes.reports_held() >= 1; },
                      absl::Seconds(30)))
      << ReadFile(dir_ + "/controller.log");
  EXPECT_NE(nodes.store_error().find("full"), std::string::npos) << nodes.store_error();
  EXPECT_GT(nodes.store_failing_since_unix_ms(), 0);
  CommandResult human = Cli({"nodes"});
  EXPECT_NE(human.err.find("cannot write its history"), std::string::npos) << human.err;
  EXPECT_EQ(GetRun(run_id).state(), v1::RUN_STATE_RUNNING);
  EXPECT_GE(SpooledReports(dir_ + "/agent-filler/spool"), 1);  // not acked

  FreeDisk();
  const absl::Time freed = absl::Now();
  v1::Run run;
  ASSERT_TRUE(WaitFor(
      [&] {
        run = GetRun(run_id);
        return run.state() == v1::RUN_STATE_SUCCEEDED || run.state() == v1::RUN_STATE_FAILED;
      },
      absl::Seconds(30)))
      << "run still " << run.state() << " 30 s after the space was freed";
  const absl::Duration recovery = absl::Now() - freed;
  std::cout << "run finished " << absl::FormatDuration(recovery) << " after space was freed"
            << std::endl;
  EXPECT_LE(recovery, absl::Seconds(10));
  EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(run.samples_size(), 2);
  EXPECT_FALSE(StoreFailing());
  EXPECT_TRUE(WaitFor([&] { return SpooledReports(dir_ + "/agent-filler/spool") == 0; },
                      absl::Seconds(10)));
  const std::string log = ReadFile(dir_ + "/controller.log");
  EXPECT_NE(log.find("store failing"), std::string::npos);
  EXPECT_NE(log.find("store recovered"), std::string::npos);
}

// Regression: an agent restarted while the disk was full resent its report;
// the controller found its task no longer in flight (declared lost), failed
// to store the samples, and acked anyway: 2 measured, 0 stored. And the
// run stayed `running` forever because the lost transition failed to
// commit and was forgotten.
TEST_F(FullDiskTest, AReportResentWhileTheDiskIsFullIsStoredOnceThereIsSpace) {
  StartController();
  Process* agent = StartAgent("phoenix", {"price_per_hour=1"});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  // A quick gemm, then a long mem: the agent is killed between the two,
  // with gemm's samples spooled but not acknowledged.
  const std::string run_id = StartRun(
      {"--bench", "gemm,mem", "--param", "gemm.sizes=256", "--param", "gemm.min_seconds=1",
       "--param", "gemm.max_runs=100000", "--param", "gemm.threads=1", "--param",
       "mem.array_mib=128", "--param", "mem.repetitions=200", "--param", "mem.threads=1"});
  ASSERT_FALSE(run_id.empty());
  ASSERT_TRUE(WaitFor([&] { return GetRun(run_id).state() == v1::RUN_STATE_RUNNING; },
                      absl::Seconds(20)));
  ASSERT_NO_FATAL_FAILURE(FillDisk());
  const std::string spool = dir_ + "/agent-phoenix/spool";
  ASSERT_TRUE(WaitFor([&] { return SpooledReports(spool) >= 1 && StoreFailing(); },
                      absl::Seconds(30)))
      << ReadFile(dir_ + "/controller.log");
  ASSERT_EQ(GetRun(run_id).samples_size(), 0);
  agent->Signal(SIGKILL);
  agents_.erase("phoenix");
  StartAgent("phoenix", {"price_per_hour=1"});
  // Back, with its task declared lost (it restarted) and its spool resent:
  // nothing of that can be stored yet, so nothing is acknowledged.
  ASSERT_TRUE(WaitFor(
      [&] {
        return ReadFile(dir_ + "/agent-phoenix.log").find("connected to") != std::string::npos &&
               TaskOn(GetRun(run_id), "phoenix").state() == v1::TASK_STATE_LOST;
      },
      absl::Seconds(30)));
  EXPECT_GE(SpooledReports(spool), 1);
  EXPECT_TRUE(StoreFailing());

  FreeDisk();
  v1::Run run;
  ASSERT_TRUE(WaitFor(
      [&] {
        run = GetRun(run_id);
        return run.state() != v1::RUN_STATE_RUNNING && run.samples_size() == 2;
      },
      absl::Seconds(15)))
      << "run " << run.state() << " with " << run.samples_size() << " samples\n"
      << ReadFile(dir_ + "/controller.log");
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);  // the task was lost
  EXPECT_EQ(TaskOn(run, "phoenix").state(), v1::TASK_STATE_LOST);
  for (const v1::Sample& s : run.samples()) EXPECT_EQ(s.benchmark(), "gemm");
  EXPECT_TRUE(WaitFor([&] { return SpooledReports(spool) == 0; }, absl::Seconds(10)));
  // Stored, not only shown: the same after a restart.
  KillController(SIGTERM);
  StartController();
  run = GetRun(run_id);
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);
  EXPECT_EQ(run.samples_size(), 2);
}

// Starts the controller on the fixture's --db and waits for it to exit;
// -1 when it is still running (it served the file) after 20 s.
int ControllerExitCode(FleetTest* t, std::string* err) {
  const std::string log = t->dir_ + "/refused-controller.log";
  Process controller({FLEETBENCH_BINARY, "controller", "--listen", t->address_, "--db",
                      t->db_path_},
                     t->env_, log);
  const std::optional<int> code = controller.WaitFor(absl::Seconds(20));
  *err = ReadFile(log);
  return code.value_or(-1);
}

// The pages of `table` in the SQLite file at `path` (0-based page indexes
// in the file), from SQLite's dbstat table.
std::vector<int64_t> PagesOf(const std::string& path, const std::string& table) {
  std::vector<int64_t> pages;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT pageno FROM dbstat WHERE name = ?1", -1, &s, nullptr) ==
        SQLITE_OK) {
      sqlite3_bind_text(s, 1, table.c_str(), -1, SQLITE_TRANSIENT);
      while (sqlite3_step(s) == SQLITE_ROW) pages.push_back(sqlite3_column_int64(s, 0) - 1);
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return pages;
}

// A history with real runs in it, then damaged the way a bad disk does it.
class HistoryFileTest : public FleetTest {
 protected:
  static constexpr size_t kPage = 8192;

  // Starts the controller and `agents`, runs a small gemm on them (into
  // `run` when given), then stops everything cleanly (the WAL checkpointed
  // into the file).
  void RunGemmAndStop(const std::vector<std::string>& agents, v1::Run* run = nullptr) {
    v1::Run finished;
    StartController();
    for (const std::string& name : agents) StartAgent(name, {"price_per_hour=1"});
    ASSERT_TRUE(WaitForOnlineNodes(static_cast<int>(agents.size()), absl::Seconds(30)));
    int code = -1;
    ASSERT_TRUE(CliJson({"run", "--bench", "gemm", "--param", "gemm.sizes=128", "--param",
                         "gemm.min_seconds=0.2", "--param", "gemm.threads=1", "--max-parallel",
                         "1", "--wait"},
                        &finished, &code));
    ASSERT_EQ(code, 0);
    for (auto& [name, agent] : agents_) agent->Signal(SIGKILL);
    agents_.clear();
    KillController(SIGTERM);
    if (run != nullptr) *run = finished;
  }

  // Overwrites each of `pages` (0-based) of the history with a pattern no
  // page has, as a bad sector leaves it.
  void OverwritePages(const std::vector<size_t>& pages) {
    std::string bytes = ReadFile(db_path_);
    for (size_t page : pages) {
      ASSERT_LE((page + 1) * kPage, bytes.size()) << "page " << page;
      for (size_t i = 0; i < kPage; ++i) bytes[page * kPage + i] = static_cast<char>(0x5A ^ i);
    }
    std::ofstream out(db_path_, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
};

// Regression: a history with two damaged pages started without complaint,
// and `rank` then left out nodes silently.
TEST_F(HistoryFileTest, AControllerRefusesADamagedHistoryAtStart) {
  ASSERT_NO_FATAL_FAILURE(RunGemmAndStop({"d1", "d2", "d3"}));
  const size_t pages = ReadFile(db_path_).size() / kPage;
  ASSERT_GE(pages, 4u);
  ASSERT_NO_FATAL_FAILURE(OverwritePages({1, pages - 2}));
  std::string err;
  EXPECT_EQ(ControllerExitCode(this, &err), 1) << err;
  EXPECT_NE(err.find("is corrupt"), std::string::npos) << err;
  EXPECT_NE(err.find(db_path_), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;  // one line
}

// Regression: quick_check of a 16.9 GB history kept a restarting controller
// from serving for minutes. A file over --verify-inline-mib is checked
// beside serving: the controller listens at once, and the damage the check
// finds is logged and stops the writes, each refused write saying why.
TEST_F(HistoryFileTest, ALargeHistoryIsServedAtOnceAndDamageFoundBesideStopsItsWrites) {
  v1::Run run;
  ASSERT_NO_FATAL_FAILURE(RunGemmAndStop({"d1"}, &run));
  // A page of the samples table.
  const std::vector<int64_t> pages = PagesOf(db_path_, "samples");
  ASSERT_FALSE(pages.empty());
  ASSERT_NO_FATAL_FAILURE(OverwritePages({static_cast<size_t>(pages.back())}));
  // Every file counts as large: the controller serves before the check.
  ASSERT_NO_FATAL_FAILURE(StartController({"--verify-inline-mib", "0"}));
  const std::string log = dir_ + "/controller.log";
  ASSERT_TRUE(WaitFor(
      [&] { return ReadFile(log).find("writes are refused") != std::string::npos; },
      absl::Seconds(30)))
      << ReadFile(log);
  EXPECT_NE(ReadFile(log).find("is corrupt"), std::string::npos) << ReadFile(log);
  CommandResult refused = Cli({"nodes", "rm", "d1"});  // a write: d1 is offline
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("is corrupt"), std::string::npos) << refused.err;
  // The controller is still up and reads what it can.
  CommandResult runs = Cli({"runs"});
  EXPECT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_NE(runs.out.find(run.run_id()), std::string::npos) << runs.out;
}

// Regression: an existing 0-byte file silently became a new empty history.
TEST_F(HistoryFileTest, AControllerRefusesAnEmptiedHistoryFile) {
  { std::ofstream touch(db_path_); }
  std::string err;
  EXPECT_EQ(ControllerExitCode(this, &err), 1) << err;
  EXPECT_NE(err.find("exists but is empty (0 bytes)"), std::string::npos) << err;
  EXPECT_EQ(std::filesystem::file_size(db_path_), 0u);
}

using LateReportTest = FleetTest;

// Regression: an agent out of reach past the heartbeat grace had its task
// declared lost and the run failed, even though the agent finished and its
// samples arrived later. Here the agent is stopped (SIGSTOP: a real process
// that hears nothing and says nothing) past the grace, then resumed.
TEST_F(LateReportTest, ATaskLostToASilenceIsSettledByItsLateFinalReport) {
  StartController({"--heartbeat-timeout", "2s"});
  Process* agent = StartAgent("sleeper", {"price_per_hour=1"});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  CommandResult started = Cli({"run", "--bench", "gemm", "--param", "gemm.sizes=256", "--param",
                               "gemm.min_seconds=1.5", "--param", "gemm.max_runs=100000",
                               "--param", "gemm.threads=1"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const std::string run_id(absl::StripAsciiWhitespace(started.out));
  auto get = [&] {
    v1::Run run;
    CliJson({"results", run_id}, &run);
    return run;
  };
  ASSERT_TRUE(WaitFor([&] { return TaskOn(get(), "sleeper").state() == v1::TASK_STATE_RUNNING; },
                      absl::Seconds(20)));
  agent->Signal(SIGSTOP);
  v1::Run run;
  ASSERT_TRUE(WaitFor([&] { return (run = get()).state() == v1::RUN_STATE_FAILED; },
                      absl::Seconds(20)));
  EXPECT_EQ(TaskOn(run, "sleeper").state(), v1::TASK_STATE_LOST);
  agent->Signal(SIGCONT);
  ASSERT_TRUE(WaitFor([&] { return (run = get()).state() == v1::RUN_STATE_SUCCEEDED; },
                      absl::Seconds(40)))
      << "run " << run.state() << "; task " << TaskOn(run, "sleeper").ShortDebugString();
  const v1::NodeTask task = TaskOn(run, "sleeper");
  EXPECT_EQ(task.state(), v1::TASK_STATE_SUCCEEDED);
  EXPECT_NE(task.reason().find("final report arrived late"), std::string::npos) << task.reason();
  EXPECT_EQ(run.samples_size(), 2);
}

// The same as a real partition: the agent in its own network namespace, its
// only link to the controller's namespace taken down past the grace and
// brought back.
class PartitionTest : public FleetTest {
 public:
  void SetUp() override {
    FleetTest::SetUp();
    ASSERT_EQ(geteuid(), 0u) << "creating network namespaces needs root";
    const std::string suffix = dir_.substr(dir_.size() - 6);
    hub_ = "fbph" + suffix;
    node_ = "fbpn" + suffix;
    hub_end_ = "vph" + suffix;
    ASSERT_TRUE(Sh({"ip", "netns", "add", hub_}));
    ASSERT_TRUE(Sh({"ip", "netns", "add", node_}));
    ASSERT_TRUE(Sh({"ip", "link", "add", hub_end_, "netns", hub_, "type", "veth", "peer", "name",
                    "vpn" + suffix, "netns", node_}));
    ASSERT_TRUE(Sh({"ip", "-n", hub_, "addr", "add", "10.232.0.254/24", "dev", hub_end_}));
    ASSERT_TRUE(Sh({"ip", "-n", node_, "addr", "add", "10.232.0.1/24", "dev", "vpn" + suffix}));
    for (const std::string& ns : {hub_, node_}) {
      ASSERT_TRUE(Sh({"ip", "-n", ns, "link", "set", "lo", "up"}));
    }
    ASSERT_TRUE(Sh({"ip", "-n", hub_, "link", "set", hub_end_, "up"}));
    ASSERT_TRUE(Sh({"ip", "-n", node_, "link", "set", "vpn" + suffix, "up"}));
    exec_prefix_ = {"/usr/bin/env", "ip", "netns", "exec", hub_};
    agent_prefix_["island"] = {"/usr/bin/env", "ip", "netns", "exec", node_};
    address_ = absl::StrCat("10.232.0.254:", PickFreePort());
  }
  void TearDown() override {
    FleetTest::TearDown();
    for (const std::string& ns : {node_, hub_}) {
      if (!ns.empty()) Sh({"ip", "netns", "del", ns});
    }
  }
  bool Link(const char* state) { return Sh({"ip", "-n", hub_, "link", "set", hub_end_, state}); }
  bool Sh(const std::vector<std::string>& argv) {
    std::vector<std::string> full = {"/usr/bin/env"};
    full.insert(full.end(), argv.begin(), argv.end());
    CommandResult r = RunCommand(full, {});
    if (r.exit_code != 0) ADD_FAILURE() << argv[0] << " " << argv[1] << ": " << r.err;
    return r.exit_code == 0;
  }
  std::string hub_, node_, hub_end_;
};

TEST_F(PartitionTest, ATaskLostToAPartitionIsSettledByItsLateFinalReport) {
  StartController({"--heartbeat-timeout", "2s"});
  StartAgent("island", {"price_per_hour=1"});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  CommandResult started = Cli({"run", "--bench", "gemm", "--param", "gemm.sizes=256", "--param",
                               "gemm.min_seconds=2", "--param", "gemm.max_runs=100000",
                               "--param", "gemm.threads=1"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const std::string run_id(absl::StripAsciiWhitespace(started.out));
  auto get = [&] {
    v1::Run run;
    CliJson({"results", run_id}, &run);
    return run;
  };
  ASSERT_TRUE(WaitFor([&] { return TaskOn(get(), "island").state() == v1::TASK_STATE_RUNNING; },
                      absl::Seconds(20)));
  ASSERT_TRUE(Link("down"));
  v1::Run run;
  ASSERT_TRUE(WaitFor([&] { return (run = get()).state() == v1::RUN_STATE_FAILED; },
                      absl::Seconds(20)));
  EXPECT_EQ(TaskOn(run, "island").state(), v1::TASK_STATE_LOST);
  ASSERT_TRUE(Link("up"));
  ASSERT_TRUE(WaitFor([&] { return (run = get()).state() == v1::RUN_STATE_SUCCEEDED; },
                      absl::Seconds(90)))
      << "run " << run.state() << "; task " << TaskOn(run, "island").ShortDebugString();
  EXPECT_NE(TaskOn(run, "island").reason().find("final report arrived late"), std::string::npos);
  EXPECT_EQ(run.samples_size(), 2);
}

using NodeRemovalTest = FleetTest;

bool AllOffline(FleetTest* t, int* count = nullptr) {
  v1::ListNodesResponse nodes;
  if (!t->CliJson({"nodes"}, &nodes)) return false;
  if (count) *count = nodes.nodes_size();
  for (const v1::Node& n : nodes.nodes()) {
    if (n.status() != v1::NODE_STATUS_OFFLINE) return false;
  }
  return true;
}

// Regression: every hello with a new name made a permanent node, with no
// way to remove it.
TEST_F(NodeRemovalTest, NodesRmRefusesAnOnlineNodeAndKeepsTheResultsOfOneThatRan) {
  StartController({"--heartbeat-timeout", "2s"});
  StartAgent("worker", {"price_per_hour=1"});
  StartAgent("idle", {"price_per_hour=1"});
  ASSERT_TRUE(WaitForOnlineNodes(2, absl::Seconds(30)));
  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson({"run", "--bench", "gemm", "--nodes", "worker", "--param",
                       "gemm.sizes=128", "--param", "gemm.threads=1", "--wait"},
                      &run, &code));
  ASSERT_EQ(code, 0);
  CommandResult online = Cli({"nodes", "rm", "worker"});
  EXPECT_EQ(online.exit_code, 1);
  EXPECT_NE(online.err.find("worker is online"), std::string::npos) << online.err;
  for (auto& [name, agent] : agents_) agent->Signal(SIGKILL);
  agents_.clear();
  ASSERT_TRUE(WaitFor([&] { return AllOffline(this); }, absl::Seconds(20)));

  CommandResult idle = Cli({"nodes", "rm", "idle"});
  EXPECT_EQ(idle.exit_code, 0) << idle.err;
  EXPECT_NE(idle.out.find("nothing of it is kept"), std::string::npos) << idle.out;
  CommandResult worker = Cli({"nodes", "rm", "worker"});
  EXPECT_EQ(worker.exit_code, 0) << worker.err;
  EXPECT_NE(worker.out.find("results stay"), std::string::npos) << worker.out;
  int count = -1;
  ASSERT_TRUE(AllOffline(this, &count));
  EXPECT_EQ(count, 0);
  v1::Run stored;
  ASSERT_TRUE(CliJson({"results", run.run_id()}, &stored));
  EXPECT_EQ(stored.samples_size(), 2);
  CommandResult rank = Cli({"rank", "--metric", "gemm.cpu.fp32.tflops"});
  EXPECT_EQ(rank.exit_code, 0) << rank.err;
  EXPECT_NE(rank.out.find("worker"), std::string::npos) << rank.out;

  EXPECT_EQ(Cli({"nodes", "rm"}).exit_code, 2);
  CommandResult ghost = Cli({"nodes", "rm", "ghost"});
  EXPECT_EQ(ghost.exit_code, 2);  // an unknown name, as the controller says: a usage error
  EXPECT_NE(ghost.err.find("ghost not found"), std::string::npos) << ghost.err;
  // The name comes back with its agent.
  StartAgent("worker", {"price_per_hour=1"});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
}

TEST_F(NodeRemovalTest, NodesUnseenPastTheExpiryAreRemoved) {
  StartController({"--heartbeat-timeout", "1s", "--node-expiry", "3s"});
  Process* transient = StartAgent("transient", {});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  transient->Signal(SIGKILL);
  const absl::Time gone = absl::Now();
  int count = -1;
  ASSERT_TRUE(WaitFor([&] { return AllOffline(this, &count) && count == 0; }, absl::Seconds(20)));
  EXPECT_GE(absl::Now() - gone, absl::Seconds(3));
  EXPECT_NE(ReadFile(dir_ + "/controller.log").find("node transient expired"), std::string::npos);
  CommandResult bad = RunCommand({FLEETBENCH_BINARY, "controller", "--db", dir_ + "/x.db",
                                  "--node-expiry", "forever"},
                                 env_);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--node-expiry wants a duration"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace fleetbench::testing
