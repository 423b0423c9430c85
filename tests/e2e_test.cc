// End to end, as a user runs it: a real controller process on a real SQLite
// file, real agent processes dialling it over gRPC on loopback, the CLI.
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iostream>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/api_enums.h"
#include "fleetbench/v1/history.pb.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/rank.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "gtest/gtest.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

// Small GEMMs: the pipe is under test here, not the CPU.
// One thread each: a single-core GEMM is steadier than two threads fighting
// whatever else runs on this two-core machine.
const std::vector<std::string> kQuickGemm = {
    "--param", "gemm.sizes=384",          "--param", "gemm.min_seconds=1",
    "--param", "gemm.max_runs=100000",    "--param", "gemm.threads=1"};

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

v1::Run GetRun(FleetTest* t, const std::string& run_id) {
  v1::Run run;
  int code = -1;
  t->CliJson({"results", run_id}, &run, &code);
  return run;
}

// The waits an agent's log announced before each dial, in order (its
// lines "controller ...: ...; reconnecting in 153.2ms").
std::vector<absl::Duration> AnnouncedWaits(const std::string& log) {
  constexpr absl::string_view kMarker = "; reconnecting in ";
  std::vector<absl::Duration> waits;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    const size_t at = line.rfind(kMarker);
    if (at == absl::string_view::npos) continue;
    absl::Duration wait;
    if (!absl::ParseDuration(absl::StripAsciiWhitespace(line.substr(at + kMarker.size())),
                             &wait)) {
      wait = absl::InfiniteDuration();  // unreadable: fails any bound
    }
    waits.push_back(wait);
  }
  return waits;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

using EndToEndTest = FleetTest;

// Regression: `run --wait` took no notice of Ctrl-C or SIGTERM (both are blocked
// in every thread for the daemons' sigwait) and waited on for the whole run.
class RunWaitInterruptTest : public FleetTest {
 protected:
  // One node measuring a GEMM for minutes, followed by `run --wait`; returns
  // once the run is running.
  void StartWaitingRun() {
    StartController();
    StartAgent("busy", {"price_per_hour=1"});
    ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
    stderr_path_ = dir_ + "/run-wait.err";
    waiting_ = StartCli({"run", "--bench", "gemm", "--param", "gemm.sizes=512", "--param",
                         "gemm.min_seconds=120", "--param", "gemm.max_runs=100000", "--param",
                         "gemm.threads=1", "--wait"},
                        stderr_path_);
    ASSERT_TRUE(WaitFor(
        [&] {
          v1::ListRunsResponse runs;
          if (!CliJson({"runs"}, &runs) || runs.runs_size() != 1) return false;
          run_id_ = runs.runs(0).run_id();
          return runs.runs(0).state() == v1::RUN_STATE_RUNNING;
        },
        absl::Seconds(30)));
  }

  // The waiting CLI's exit code, or -1 when it is still waiting after a few
  // seconds (the 2 s window for a second Ctrl-C included).
  int ExitCode() {
    std::optional<int> code = waiting_->WaitFor(absl::Seconds(10));
    return code.value_or(-1);
  }

  bool RunEnds(v1::RunState state) {
    return WaitFor([&] { return GetRun(this, run_id_).state() == state; }, absl::Seconds(30));
  }

  std::unique_ptr<Process> waiting_;
  std::string stderr_path_;
  std::string run_id_;
};

TEST_F(RunWaitInterruptTest, CtrlCStopsWaitingAndTheRunGoesOn) {
  ASSERT_NO_FATAL_FAILURE(StartWaitingRun());
  waiting_->Signal(SIGINT);
  ASSERT_EQ(ExitCode(), 130) << ReadFile(stderr_path_);
  const std::string err = ReadFile(stderr_path_);
  EXPECT_NE(err.find("stopped waiting; run " + run_id_ + " goes on"), std::string::npos) << err;
  EXPECT_NE(err.find("`fleetbench cancel " + run_id_ + "`"), std::string::npos) << err;
  EXPECT_NE(err.find("`fleetbench results " + run_id_ + "`"), std::string::npos) << err;
  EXPECT_EQ(GetRun(this, run_id_).state(), v1::RUN_STATE_RUNNING);
  // The hint's command stops it.
  ASSERT_EQ(Cli({"cancel", run_id_}).exit_code, 0);
  EXPECT_TRUE(RunEnds(v1::RUN_STATE_CANCELLED));
}

TEST_F(RunWaitInterruptTest, CtrlCTwiceCancelsTheRun) {
  ASSERT_NO_FATAL_FAILURE(StartWaitingRun());
  waiting_->Signal(SIGINT);
  // The second Ctrl-C after the first is taken: two pending at once are one.
  ASSERT_TRUE(WaitFor([&] { return ReadFile(stderr_path_).find("again") != std::string::npos; },
                      absl::Seconds(10)))
      << ReadFile(stderr_path_);
  waiting_->Signal(SIGINT);
  ASSERT_EQ(ExitCode(), 130) << ReadFile(stderr_path_);
  EXPECT_NE(ReadFile(stderr_path_).find("cancelling " + run_id_), std::string::npos)
      << ReadFile(stderr_path_);
  EXPECT_TRUE(RunEnds(v1::RUN_STATE_CANCELLED));
}

TEST_F(RunWaitInterruptTest, SigtermStopsWaitingAndTheRunGoesOn) {
  ASSERT_NO_FATAL_FAILURE(StartWaitingRun());
  waiting_->Signal(SIGTERM);
  ASSERT_EQ(ExitCode(), 143) << ReadFile(stderr_path_);
  EXPECT_NE(ReadFile(stderr_path_).find("stopped waiting; run " + run_id_ + " goes on"),
            std::string::npos)
      << ReadFile(stderr_path_);
  EXPECT_EQ(GetRun(this, run_id_).state(), v1::RUN_STATE_RUNNING);
  ASSERT_EQ(Cli({"cancel", run_id_}).exit_code, 0);
  EXPECT_TRUE(RunEnds(v1::RUN_STATE_CANCELLED));
}

// A real benchmark that runs past its timeout is cancelled by the agent's
// runner and ends DEADLINE_EXCEEDED, with the reason stored.
TEST_F(EndToEndTest, BenchmarkPastItsTimeoutEndsDeadlineExceeded) {
  StartController();
  StartAgent("slow", {"price_per_hour=1"});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  // 200 passes over 3 x 256 MiB: seconds of work, 200 ms allowed.
  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson({"run", "--bench", "mem", "--param", "mem.array_mib=256", "--param",
                       "mem.repetitions=200", "--bench-timeout", "200ms", "--wait"},
                      &run, &code));
  EXPECT_EQ(code, 1);
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);
  ASSERT_EQ(run.tasks_size(), 1);
  ASSERT_EQ(run.tasks(0).outcomes_size(), 1);
  const v1::BenchmarkOutcome& outcome = run.tasks(0).outcomes(0);
  EXPECT_EQ(outcome.state(), v1::TASK_STATE_FAILED);
  EXPECT_EQ(outcome.code(), v1::STATUS_CODE_DEADLINE_EXCEEDED);
  EXPECT_NE(outcome.reason().find("timeout of 200ms"), std::string::npos) << outcome.reason();
  // Stored, not only streamed: the controller reads it back after a restart.
  KillController(SIGKILL);
  StartController();
  v1::Run stored = GetRun(this, run.run_id());
  ASSERT_EQ(stored.tasks_size(), 1);
  ASSERT_EQ(stored.tasks(0).outcomes_size(), 1);
  EXPECT_EQ(stored.tasks(0).outcomes(0).code(), v1::STATUS_CODE_DEADLINE_EXCEEDED);
  CommandResult text = Cli({"results", run.run_id()});
  EXPECT_NE(text.out.find("DEADLINE_EXCEEDED"), std::string::npos) << text.out;
}

// A parameter value long enough to push the failure reason past the
// report limit once wedged the node (the final report was refused yet acked,
// the task stayed running, every later run queued). The controller now
// refuses the value at submit with the plugin's message, cut to the reason
// limit, and stores nothing; the node takes the next run. (The agent's own
// cut is covered by TaskRunnerTest.ReasonsQuotingLongParamsAreCutToTheLimit,
// the refused report by the controller's ingest tests.)
TEST_F(EndToEndTest, OverlongParameterIsRefusedAtRunAndTheNodeStaysFree) {
  StartController();
  StartAgent("long-reason", {"price_per_hour=1"});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  CommandResult refused = Cli({"run", "--bench", "gemm", "--param",
                               "gemm.sizes=" + std::string(4100, 'x'), "--timeout", "30s",
                               "--wait"});
  EXPECT_EQ(refused.exit_code, 2);
  // Refused for its size at the door now (common/wire_limits.h), before
  // the plugin sees it: no reason quoting it can be made at all.
  EXPECT_NE(refused.err.find("gemm.sizes: the value is 4100 bytes"), std::string::npos)
      << refused.err;
  EXPECT_LE(refused.err.size(), 4096u + 64u);  // the message, cut, and its prefix
  v1::ListRunsResponse runs;
  ASSERT_TRUE(CliJson({"runs"}, &runs));
  EXPECT_EQ(runs.runs_size(), 0);
  // The node is free: a run on it is dispatched and succeeds.
  v1::Run second;
  int code = -1;
  ASSERT_TRUE(CliJson(Concat({"run", "--bench", "gemm", "--timeout", "120s", "--wait"},
                             kQuickGemm),
                      &second, &code));
  EXPECT_EQ(code, 0);
  EXPECT_EQ(second.state(), v1::RUN_STATE_SUCCEEDED);
}

TEST_F(EndToEndTest, ThreeAgentsRegisterRunAndRankByPrice) {
  StartController();
  for (auto [name, price] : std::vector<std::pair<std::string, std::string>>{
           {"node-a", "4"}, {"node-b", "1"}, {"node-c", "2"}}) {
    StartAgent(name, {"provider=local", "region=here", "instance_type=same-box",
                      "price_per_hour=" + price});
  }
  ASSERT_TRUE(WaitForOnlineNodes(3, absl::Seconds(30)));

  v1::ListNodesResponse nodes;
  ASSERT_TRUE(CliJson({"nodes"}, &nodes));
  ASSERT_EQ(nodes.nodes_size(), 3);
  for (const v1::Node& n : nodes.nodes()) {
    EXPECT_EQ(n.status(), v1::NODE_STATUS_ONLINE);
    EXPECT_EQ(n.labels().at("instance_type"), "same-box");
    EXPECT_FALSE(n.facts().hostname().empty());
    EXPECT_GT(n.facts().cpu().logical_cores(), 0u);
    EXPECT_GT(n.facts().memory_total_bytes(), 0u);
  }

  // One node at a time: the three "nodes" share this machine's cores.
  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson(Concat({"run", "--bench", "gemm", "--max-parallel", "1", "--wait"},
                             kQuickGemm),
                      &run, &code));
  EXPECT_EQ(code, 0);
  EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
  ASSERT_EQ(run.tasks_size(), 3);
  for (const v1::NodeTask& t : run.tasks()) EXPECT_EQ(t.state(), v1::TASK_STATE_SUCCEEDED);
  ASSERT_EQ(run.samples_size(), 6);  // fp32 and fp64 on each node
  std::set<std::string> metrics;
  for (const v1::Sample& s : run.samples()) {
    metrics.insert(s.metric());
    EXPECT_GT(s.value(), 0);
    EXPECT_EQ(s.unit(), "tflops");
    EXPECT_EQ(s.benchmark(), "gemm");
    EXPECT_EQ(s.run_id(), run.run_id());
    EXPECT_EQ(s.params().at("size"), "384");
  }
  EXPECT_EQ(metrics, (std::set<std::string>{"gemm.cpu.fp32.tflops", "gemm.cpu.fp64.tflops"}));

  // Results are stored: a separate `results` call reads them back.
  v1::Run stored = GetRun(this, run.run_id());
  EXPECT_EQ(stored.samples_size(), 6);

  // Same hardware, prices 1, 2, 4: cost per TFLOP/s orders them so.
  v1::RankResponse rank;
  ASSERT_TRUE(CliJson({"rank", "--metric", "gemm.cpu.fp32.tflops", "--by", "node"}, &rank));
  ASSERT_EQ(rank.rows_size(), 3);
  SCOPED_TRACE(Cli({"rank", "--metric", "gemm.cpu.fp32.tflops"}).out);
  EXPECT_EQ(rank.rows(0).group(), "node-b");
  EXPECT_EQ(rank.rows(1).group(), "node-c");
  EXPECT_EQ(rank.rows(2).group(), "node-a");
  for (const v1::RankRow& r : rank.rows()) {
    EXPECT_TRUE(r.priced());
    EXPECT_NEAR(r.cost_per_unit(), r.price_per_hour() / r.median(), 1e-9);
  }
  v1::RankResponse by_type;
  ASSERT_TRUE(CliJson({"rank", "--metric", "gemm.cpu.fp32.tflops", "--by", "instance_type"},
                      &by_type));
  ASSERT_EQ(by_type.rows_size(), 1);
  EXPECT_EQ(by_type.rows(0).node_count(), 3u);
  EXPECT_EQ(by_type.rows(0).price_per_hour(), 2);  // median of 1, 2, 4

  v1::HistoryResponse history;
  ASSERT_TRUE(CliJson({"history", "--node", "node-a", "--metric", "gemm.cpu.fp64.tflops"},
                      &history));
  ASSERT_EQ(history.samples_size(), 1);
  EXPECT_EQ(history.samples(0).node(), "node-a");

  // Human output names the run's state and each node.
  CommandResult text = Cli({"results", run.run_id()});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("succeeded"), std::string::npos);
  EXPECT_NE(text.out.find("node-c"), std::string::npos);
}

TEST_F(EndToEndTest, ControllerKilledMidRunLosesNothingAndStoresNoDuplicate) {
  StartController();
  for (const char* name : {"k1", "k2", "k3"}) StartAgent(name, {"price_per_hour=1"});
  ASSERT_TRUE(WaitForOnlineNodes(3, absl::Seconds(30)));
  // Each GEMM dtype measures for 2 s: the kill lands mid-run.
  CommandResult started = Cli({"run", "--bench", "gemm", "--param", "gemm.sizes=256", "--param",
                               "gemm.min_seconds=2", "--param", "gemm.max_runs=100000"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const std::string run_id(absl::StripAsciiWhitespace(started.out));
  ASSERT_TRUE(WaitFor([&] { return GetRun(this, run_id).state() == v1::RUN_STATE_RUNNING; },
                      absl::Seconds(20)));
  KillController(SIGKILL);
  StartController();

  v1::Run run;
  ASSERT_TRUE(WaitFor(
      [&] {
        run = GetRun(this, run_id);
        return run.state() == v1::RUN_STATE_SUCCEEDED || run.state() == v1::RUN_STATE_FAILED;
      },
      absl::Seconds(90)));
  EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
  // Every node's two samples, each exactly once.
  std::map<std::string, int> per_node_metric;
  for (const v1::Sample& s : run.samples()) ++per_node_metric[s.node() + "/" + s.metric()];
  EXPECT_EQ(per_node_metric.size(), 6u);
  for (const auto& [key, count] : per_node_metric) EXPECT_EQ(count, 1) << key;

  KillController(SIGTERM);
  storage::SqliteOptions options;
  options.path = db_path_;
  auto store = storage::OpenSqliteStore(options);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE((*store)->CheckIntegrity().ok());
  auto count = (*store)->CountSamples();
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 6);
}

// After a controller restart the whole fleet is back within seconds, every
// time, after a SIGKILL or a SIGTERM, idle or mid-run, with TLS and enrolled
// node certificates as users run it. The controller stays away until every agent has failed to dial it at
// least once: the case that once left a fleet offline for good, because a
// gRPC channel that failed to connect never reached the new controller
// (common/transport.h, DialController). An agent that redials at once
// after the session ends can win the race against a fast restart; waiting
// for the failed dial removes that luck. The backoff also starts over after
// a healthy session: before, it doubled on every disconnect however long
// the session had been up, so each restart kept a fleet away longer.
TEST_F(EndToEndTest, FleetReturnsQuicklyAfterEveryControllerRestart) {
  constexpr int kRestarts = 10;
  const std::vector<std::string> names = {"phoenix-1", "phoenix-2", "phoenix-3"};
  const int nodes = static_cast<int>(names.size());
  // Heartbeats every second; a session up for a second counts as healthy.
  StartController({"--heartbeat-timeout", "3s"});
  agent_flags_ = {"--backoff-reset-after", "1s"};
  for (const std::string& name : names) StartAgent(name, {"price_per_hour=1"});
  ASSERT_TRUE(WaitForOnlineNodes(nodes, absl::Seconds(60)));
  for (const std::string& name : names) {
    EXPECT_EQ(CountInAgentLog(name, "certificate (mTLS)"), 1) << AgentLog(name);
  }
  // The oldest heartbeat heard from any node.
  auto oldest_seen = [&] {
    v1::ListNodesResponse listed;
    if (!CliJson({"nodes"}, &listed) || listed.nodes_size() != nodes) return absl::InfinitePast();
    absl::Time oldest = absl::InfiniteFuture();
    for (const v1::Node& n : listed.nodes()) {
      oldest = std::min(oldest, absl::FromUnixMillis(n.last_seen_unix_ms()));
    }
    return oldest;
  };
  std::vector<absl::Duration> returns;
  std::vector<std::string> run_ids;
  for (int i = 0; i < kRestarts; ++i) {
    // Healthy: the controller has heard every node for well over the reset
    // threshold since they came (back) online.
    const absl::Time online_seen = oldest_seen();
    ASSERT_TRUE(WaitFor([&] { return oldest_seen() - online_seen >= absl::Milliseconds(1500); },
                        absl::Seconds(20)));
    const bool mid_run = i % 2 == 1;
    if (mid_run) {
      CommandResult started = Cli({"run", "--bench", "gemm", "--param", "gemm.sizes=384",
                                   "--param", "gemm.min_seconds=2", "--param",
                                   "gemm.max_runs=100000", "--param", "gemm.threads=1"});
      ASSERT_EQ(started.exit_code, 0) << started.err;
      run_ids.emplace_back(absl::StripAsciiWhitespace(started.out));
      ASSERT_TRUE(WaitFor(
          [&] {
            const v1::Run run = GetRun(this, run_ids.back());
            return run.tasks_size() == nodes &&
                   std::all_of(run.tasks().begin(), run.tasks().end(), [](const v1::NodeTask& t) {
                     return t.state() == v1::TASK_STATE_RUNNING;
                   });
          },
          absl::Seconds(20)));
    }
    std::map<std::string, int> redials;
    for (const std::string& name : names) redials[name] = CountInAgentLog(name, "reconnecting in");
    // Every third a SIGTERM, what `systemctl restart` sends: the streams
    // end cleanly instead of the sockets vanishing.
    const bool term = i % 3 == 2;
    KillController(term ? SIGTERM : SIGKILL);
    // Each agent's session ends (one line), then one dial fails (another).
    ASSERT_TRUE(WaitFor(
        [&] {
          for (const std::string& name : names) {
            if (CountInAgentLog(name, "reconnecting in") < redials[name] + 2) return false;
          }
          return true;
        },
        absl::Seconds(30)))
        << AgentLog(names[0]);
    // The session that ended was healthy, so the backoff started over: the
    // first wait is at most the initial 200 ms, whatever came before.
    for (const std::string& name : names) {
      const std::vector<absl::Duration> waits = AnnouncedWaits(AgentLog(name));
      ASSERT_GT(waits.size(), static_cast<size_t>(redials[name])) << AgentLog(name);
      EXPECT_LE(waits[static_cast<size_t>(redials[name])], absl::Milliseconds(200))
          << "restart " << i + 1 << ", " << name << "\n"
          << AgentLog(name);
    }
    StartController();
    const absl::Time up = absl::Now();
    // They come back, however long their backoff grew while the controller
    // was away (at most 30 s); how fast is bench/fault_soak.sh's to
    // measure, the figures printed here only a hint on a busy machine.
    ASSERT_TRUE(WaitForOnlineNodes(nodes, absl::Seconds(120)))
        << "restart " << i + 1 << "\n" << AgentLog(names[0]);
    returns.push_back(absl::Now() - up);
    std::cout << "restart " << i + 1 << (term ? " after SIGTERM" : " after SIGKILL")
              << (mid_run ? " (mid-run)" : " (idle)")
              << ": all nodes online after " << absl::FormatDuration(returns.back())
              << std::endl;
  }
  std::vector<absl::Duration> sorted = returns;
  std::sort(sorted.begin(), sorted.end());
  std::cout << "all " << nodes << " nodes back after a controller restart, over " << kRestarts
            << ": median " << absl::FormatDuration(sorted[sorted.size() / 2]) << ", worst "
            << absl::FormatDuration(sorted.back()) << std::endl;
  // The runs cut by a restart end, each node's samples stored once.
  for (const std::string& run_id : run_ids) {
    v1::Run run;
    ASSERT_TRUE(WaitFor([&] { return IsTerminal((run = GetRun(this, run_id)).state()); },
                        absl::Seconds(60)))
        << run_id;
    EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << run_id;
    std::map<std::string, int> per_node_metric;
    for (const v1::Sample& sample : run.samples()) {
      ++per_node_metric[sample.node() + "/" + sample.metric()];
    }
    std::set<std::string> measured;
    for (const auto& [key, count] : per_node_metric) {
      EXPECT_EQ(count, 1) << run_id << " " << key;
      measured.insert(key.substr(0, key.find('/')));
    }
    EXPECT_EQ(measured.size(), names.size()) << run_id;
  }
}

// `run --wait` waits on through a controller restart: the run goes on
// without the controller, the CLI says so once, dials a new channel until
// the controller answers, and ends with the run as if nothing happened.
TEST_F(EndToEndTest, RunWaitOutlastsAControllerRestart) {
  StartController();
  StartAgent("steady", {"price_per_hour=1"});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  const std::string err_path = dir_ + "/run-wait.err";
  std::unique_ptr<Process> waiting = StartCli(
      {"run", "--bench", "gemm", "--param", "gemm.sizes=384", "--param", "gemm.min_seconds=4",
       "--param", "gemm.max_runs=100000", "--param", "gemm.threads=1", "--wait"},
      err_path);
  ASSERT_TRUE(WaitFor(
      [&] {
        v1::ListRunsResponse runs;
        return CliJson({"runs"}, &runs) && runs.runs_size() == 1 &&
               runs.runs(0).state() == v1::RUN_STATE_RUNNING;
      },
      absl::Seconds(30)));
  KillController(SIGKILL);
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains(ReadFile(err_path), "still waiting"); },
                      absl::Seconds(30)))
      << ReadFile(err_path);
  StartController();
  const std::optional<int> code = waiting->WaitFor(absl::Seconds(60));
  ASSERT_TRUE(code.has_value()) << ReadFile(err_path);
  EXPECT_EQ(*code, 0) << ReadFile(err_path);
  const std::string err = ReadFile(err_path);
  EXPECT_TRUE(absl::StrContains(err, "controller back after")) << err;
  v1::ListRunsResponse runs;
  ASSERT_TRUE(CliJson({"runs"}, &runs));
  ASSERT_EQ(runs.runs_size(), 1);
  EXPECT_EQ(runs.runs(0).state(), v1::RUN_STATE_SUCCEEDED);
}

TEST_F(EndToEndTest, AgentKilledMidRunEndsLostWithinHeartbeatTimeout) {
  StartController({"--heartbeat-timeout", "2s"});
  Process* doomed = StartAgent("doomed", {});
  StartAgent("steady", {});
  ASSERT_TRUE(WaitForOnlineNodes(2, absl::Seconds(30)));
  CommandResult started = Cli({"run", "--bench", "gemm", "--param", "gemm.sizes=256", "--param",
                               "gemm.min_seconds=1.5", "--param", "gemm.max_runs=100000"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const std::string run_id(absl::StripAsciiWhitespace(started.out));
  auto task_state = [&](const v1::Run& run, const std::string& node) {
    for (const v1::NodeTask& t : run.tasks()) {
      if (t.node() == node) return t;
    }
    return v1::NodeTask();
  };
  ASSERT_TRUE(WaitFor(
      [&] { return task_state(GetRun(this, run_id), "doomed").state() == v1::TASK_STATE_RUNNING; },
      absl::Seconds(20)));
  doomed->Signal(SIGKILL);
  const absl::Time killed = absl::Now();

  v1::Run run;
  ASSERT_TRUE(WaitFor(
      [&] {
        run = GetRun(this, run_id);
        return task_state(run, "doomed").state() == v1::TASK_STATE_LOST;
      },
      absl::Seconds(10)));
  // Timeout 2 s, swept every 250 ms; allow for the CLI round trips.
  EXPECT_LT(absl::Now() - killed, absl::Seconds(6));
  EXPECT_NE(task_state(run, "doomed").reason().find("heartbeat"), std::string::npos);

  ASSERT_TRUE(WaitFor([&] { return (run = GetRun(this, run_id)).state() == v1::RUN_STATE_FAILED; },
                      absl::Seconds(30)));
  EXPECT_EQ(task_state(run, "steady").state(), v1::TASK_STATE_SUCCEEDED);
  v1::ListNodesResponse nodes;
  ASSERT_TRUE(CliJson({"nodes"}, &nodes));
  for (const v1::Node& n : nodes.nodes()) {
    EXPECT_EQ(n.status(), n.name() == "doomed" ? v1::NODE_STATUS_OFFLINE : v1::NODE_STATUS_ONLINE);
  }
}

TEST_F(EndToEndTest, AgentRestartResendsWhatItMeasuredWhileTheControllerWasDown) {
  StartController();
  Process* agent = StartAgent("spooler", {});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  CommandResult started = Cli(Concat({"run", "--bench", "gemm"}, kQuickGemm));
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const std::string run_id(absl::StripAsciiWhitespace(started.out));
  ASSERT_TRUE(WaitFor([&] { return GetRun(this, run_id).state() == v1::RUN_STATE_RUNNING; },
                      absl::Seconds(20)));
  // The controller goes away; the agent finishes measuring and spools.
  KillController(SIGKILL);
  const std::string spool = dir_ + "/agent-spooler/spool";
  ASSERT_TRUE(WaitFor(
      [&] {
        int finals = 0;
        for (const auto& e : std::filesystem::directory_iterator(spool)) {
          finals += e.path().extension() == ".report";
        }
        return finals >= 2;  // the samples report and the final report
      },
      absl::Seconds(30)));
  // The agent dies too, and comes back: only the spool remembers.
  agent->Signal(SIGKILL);
  agents_.erase("spooler");
  StartController();
  StartAgent("spooler", {});

  v1::Run run;
  ASSERT_TRUE(WaitFor(
      [&] {
        run = GetRun(this, run_id);
        return run.state() == v1::RUN_STATE_SUCCEEDED || run.state() == v1::RUN_STATE_FAILED;
      },
      absl::Seconds(30)));
  EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(run.samples_size(), 2);
  // Acknowledged reports leave the spool.
  EXPECT_TRUE(WaitFor([&] { return std::filesystem::is_empty(spool); }, absl::Seconds(10)));
}

TEST_F(EndToEndTest, RdmaWithoutADeviceIsSkippedWithTheReason) {
  StartController();
  StartAgent("r1", {});
  StartAgent("r2", {});
  ASSERT_TRUE(WaitForOnlineNodes(2, absl::Seconds(30)));
  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson({"run", "--bench", "rdma", "--wait"}, &run, &code));
  EXPECT_EQ(code, 0);  // skipped is not a failure
  ASSERT_EQ(run.tasks_size(), 2);
  for (const v1::NodeTask& t : run.tasks()) {
    EXPECT_EQ(t.state(), v1::TASK_STATE_SKIPPED);
    std::string reasons = t.reason();
    for (const auto& o : t.outcomes()) reasons += o.reason();
    EXPECT_NE(reasons.find("RDMA"), std::string::npos) << reasons;
  }
}

TEST_F(EndToEndTest, WrongTokenIsRefused) {
  StartController();
  std::map<std::string, std::string> bad_env = {{"FLEETBENCH_TOKEN", "not-the-token"},
                                                {"FLEETBENCH_CA", CaPath()}};
  CommandResult r = RunCommand({FLEETBENCH_BINARY, "nodes", "--controller", address_}, bad_env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("token"), std::string::npos) << r.err;

  CommandResult agent = RunCommand({FLEETBENCH_BINARY, "agent", "--controller", address_,
                                    "--name", "intruder", "--state-dir", dir_ + "/intruder"},
                                   bad_env);
  EXPECT_EQ(agent.exit_code, 1);
  EXPECT_NE(agent.err.find("token"), std::string::npos) << agent.err;
}

TEST_F(EndToEndTest, BadRequestsGetClearErrors) {
  StartController();
  StartAgent("solo", {});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  CommandResult unknown = Cli({"run", "--bench", "warp-drive"});
  EXPECT_EQ(unknown.exit_code, 2);  // refused as asked: a usage error
  EXPECT_NE(unknown.err.find("unknown benchmark 'warp-drive'"), std::string::npos) << unknown.err;

  CommandResult no_node = Cli({"run", "--bench", "gemm", "--nodes", "ghost"});
  EXPECT_EQ(no_node.exit_code, 2);  // NOT_FOUND from the controller: a usage error
  EXPECT_NE(no_node.err.find("ghost"), std::string::npos);

  // The controller checks parameters with the plugins' own validation: a
  // usage error at submit, not a run that fails on every node.
  CommandResult bad_param = Cli({"run", "--bench", "gemm", "--param", "gemm.sizes=huge", "--wait"});
  EXPECT_EQ(bad_param.exit_code, 2);
  EXPECT_NE(bad_param.err.find("sizes"), std::string::npos) << bad_param.err;

  CommandResult missing = Cli({"results", "01ARZ3NDEKTSV4RRFFQ69G5FAV"});
  EXPECT_EQ(missing.exit_code, 2);
  CommandResult bad_by = Cli({"rank", "--metric", "gemm.cpu.fp32.tflops", "--by", "color"});
  // A grouping is an enum on the wire now: the CLI refuses the word itself.
  EXPECT_EQ(bad_by.exit_code, 2);
  EXPECT_NE(bad_by.err.find("provider"), std::string::npos) << bad_by.err;
}

// A value its plugin refuses used to store a run that failed on
// every node; the controller now refuses it at submit.
TEST_F(EndToEndTest, InvalidParametersAreRefusedAtRunAndNothingIsStored) {
  StartController();
  StartAgent("solo", {});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  struct Case {
    std::string bench;
    std::string param;
    std::string message;  // what the plugin says
  };
  const std::vector<Case> cases = {
      {"gemm", "gemm.sizes=-5", "gemm: sizes:"},
      {"mem", "mem.repetitions=1", "mem: repetitions: 1 is outside"},
      {"disk", "disk.file_mib=99999999", "disk: file_mib: 99999999 is outside"},
      {"net", "net.mode=ping", "net: mode: 'ping' is not"},
      {"net", "net.write_bytes=17M", "net: write_bytes:"},
      {"net", "net.socket_buffer_bytes=100", "net: socket_buffer_bytes: 100 is below"},
      {"net", "net.congestion=BBR", "net: congestion: 'BBR' is not"},
      {"net", "net.rate_Mbps=-1", "net: rate_Mbps:"},
      // Disk workloads in fio's terms, and smallfiles.
      {"disk", "disk.rw=readwrite", "disk: rw: 'readwrite' is not one of"},
      {"disk", "disk.bs=64k", "disk: bs: describes a workload given by rw"},
      {"disk", "disk.rwmixread=70", "disk: rwmixread: describes a workload"},
      {"disk", "disk.fsync=1", "disk: fsync: describes a workload"},
      {"disk", "disk.numjobs=65", "disk: numjobs: 65 is outside 1..64"},
      {"disk", "disk.size=1536k", "disk: size: 1536k is not a whole number of MiB"},
      {"disk", "disk.rate=1k", "disk: rate: 1k is outside"},
      {"disk", "disk.runtime=0", "disk: runtime: 0 is outside"},
      {"disk", "disk.ramp_time=601", "disk: ramp_time: 601 is outside"},
      {"smallfiles", "smallfiles.files=0", "smallfiles: files: 0 is outside"},
      {"smallfiles", "smallfiles.file_kib=65537", "smallfiles: file_kib: 65537 is outside"},
      {"smallfiles", "smallfiles.threads=0", "smallfiles: threads: 0 is outside"},
      {"smallfiles", "smallfiles.path=data", "smallfiles: path: 'data' is not an absolute"},
      {"smallfiles", "smallfiles.runtime_seconds=0", "smallfiles: runtime_seconds: 0 is outside"},
      // The gemm shape lists.
      {"gemm", "gemm.shapes=4096x1024", "gemm: shapes: '4096x1024' is not MxNxK"},
      {"gemm", "gemm.shapes=64x64x64:NX", "gemm: shapes: '64x64x64:NX': 'NX' is not two of N"},
      {"gemm", "gemm.shapes=64x64x64,64x64x64:NN",
       "gemm: shapes: '64x64x64:NN' is the same case as '64x64x64'"},
      {"gemm", "gemm.shapes=1048576x1048576x16", "A, B and C would hold"},
      {"gemm", "gemm.shapes=0x64x64", "gemm: shapes: 0 is outside 1..1048576"},
  };
  for (const Case& c : cases) {
    CommandResult r = Cli({"run", "--bench", c.bench, "--param", c.param});
    EXPECT_EQ(r.exit_code, 2) << c.param << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.param << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // one line
  }
  v1::ListRunsResponse runs;
  ASSERT_TRUE(CliJson({"runs"}, &runs));
  EXPECT_EQ(runs.runs_size(), 0) << runs.DebugString();

  // A valid run still starts and is stored.
  v1::StartRunResponse started;
  int code = -1;
  ASSERT_TRUE(CliJson(Concat({"run", "--bench", "gemm"}, kQuickGemm), &started, &code));
  EXPECT_EQ(code, 0);
  EXPECT_FALSE(started.run_id().empty());
  ASSERT_TRUE(CliJson({"runs"}, &runs));
  EXPECT_EQ(runs.runs_size(), 1);
}

// One gemm run with a shapes list stores a sample per shape, each
// with its own m, n, k and transposes, through a real agent and the store.
TEST_F(EndToEndTest, GemmShapesListStoresOneSamplePerShape) {
  StartController();
  StartAgent("shapes", {});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson({"run", "--bench", "gemm", "--param", "gemm.shapes=96x40x200,64x64x64:TN",
                       "--param", "gemm.dtypes=fp32", "--param", "gemm.min_seconds=0.01",
                       "--param", "gemm.threads=1", "--wait"},
                      &run, &code));
  EXPECT_EQ(code, 0);
  ASSERT_EQ(run.samples_size(), 2) << run.DebugString();
  std::set<std::string> cases;
  for (const v1::Sample& s : run.samples()) {
    EXPECT_EQ(s.metric(), "gemm.cpu.fp32.tflops");
    EXPECT_GT(s.value(), 0);
    cases.insert(absl::StrCat(s.params().at("m"), "x", s.params().at("n"), "x",
                              s.params().at("k"), ":", s.params().at("transa"),
                              s.params().at("transb"),
                              s.params().contains("size") ? " square" : ""));
  }
  EXPECT_EQ(cases, (std::set<std::string>{"96x40x200:NN", "64x64x64:TN square"}));
}

// The smallfiles benchmark reads a dataset folder only where the agent's own
// --dataset-root allows it; a run's parameters cannot widen that.
TEST_F(EndToEndTest, SmallFilesReadsOnlyADatasetTheAgentAllows) {
  const std::string allowed = dir_ + "/datasets/train";
  const std::string other = dir_ + "/private";
  std::filesystem::create_directories(allowed);
  std::filesystem::create_directories(other);
  for (int i = 0; i < 20; ++i) {
    std::ofstream(allowed + "/img" + std::to_string(i) + ".jpg") << std::string(4096, 'x');
    std::ofstream(other + "/secret" + std::to_string(i)) << "not for the controller";
  }
  agent_flags_ = {"--dataset-root", dir_ + "/datasets"};
  StartController();
  StartAgent("loader", {});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));

  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson({"run", "--bench", "smallfiles", "--param", "smallfiles.path=" + allowed,
                       "--param", "smallfiles.threads=2", "--wait"},
                      &run, &code));
  EXPECT_EQ(code, 0);
  EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(GetRun(this, run.run_id()).samples_size(), 10);

  ASSERT_TRUE(CliJson({"run", "--bench", "smallfiles", "--param", "smallfiles.path=" + other,
                       "--wait"},
                      &run, &code));
  // The node refuses: the task fails with the reason, nothing is read.
  EXPECT_EQ(code, 1);
  ASSERT_EQ(run.tasks_size(), 1);
  EXPECT_EQ(run.tasks(0).state(), v1::TASK_STATE_FAILED);
  ASSERT_EQ(run.tasks(0).outcomes_size(), 1);
  EXPECT_EQ(run.tasks(0).outcomes(0).code(), v1::STATUS_CODE_FAILED_PRECONDITION);
  EXPECT_NE(run.tasks(0).outcomes(0).reason().find("--dataset-root"), std::string::npos)
      << run.tasks(0).outcomes(0).reason();
  EXPECT_EQ(GetRun(this, run.run_id()).samples_size(), 0);
}

}  // namespace fleetbench::testing
