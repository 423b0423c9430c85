// Workloads end to end (docs/workloads.md): real agents declaring the same
// workload from their own manifests, a real controller with TLS and
// enrolled identities, the CLI asking for it by name. The metric, unit and
// direction come from the workload's own output line; rank and cost use
// them with no other configuration; `results --log` shows the rest of its
// output; bad requests are refused at `run` with
// no run stored, and a bad manifest stops an agent's start.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fleetbench/v1/history.pb.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/rank.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "gtest/gtest.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

class WorkloadTest : public FleetTest {
 protected:
  // A folder with one manifest, train_step.json, whose command prints
  // `rate` samples/s (a run may pick another with workload.rate).
  std::string WorkloadDir(const std::string& node, int rate) {
    const std::string dir = absl::StrCat(dir_, "/workloads-", node);
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/train_step.json") << absl::StrCat(
        R"({"command": ["/bin/sh", "-c", "echo warming up; echo \"FLEETBENCH_METRIC {\\\"name\\\": \\\"samples_per_s\\\", \\\"value\\\": {rate}, \\\"unit\\\": \\\"samples/s\\\", \\\"direction\\\": \\\"higher\\\"}\""],)",
        R"( "params": {"rate": {"default": ")", rate, R"(", "pattern": "^[0-9]{1,6}$"}},)",
        R"( "work_unit": "samples", "timeout_s": 60})");
    return dir;
  }
  void StartWorkloadAgent(const std::string& name, int rate, const std::string& type,
                          const std::string& price) {
    agent_flags_ = {"--workload-dir", WorkloadDir(name, rate)};
    StartAgent(name, {"instance_type=" + type, "price_per_hour=" + price});
    agent_flags_.clear();
  }
  int StoredRuns() {
    v1::ListRunsResponse runs;
    EXPECT_TRUE(CliJson({"runs"}, &runs));
    return runs.runs_size();
  }
};

TEST_F(WorkloadTest, DeclaredOnTwoNodesRunByNameRankedAndCostedInItsOwnUnit) {
  StartController();
  StartWorkloadAgent("slow", 1000, "small.vm", "1");
  StartWorkloadAgent("fast", 4000, "big.vm", "2");
  StartAgent("plain", {"instance_type=plain.vm"});
  ASSERT_TRUE(WaitForOnlineNodes(3, absl::Seconds(30)));

  // nodes --json says who declares what.
  v1::ListNodesResponse nodes;
  ASSERT_TRUE(CliJson({"nodes"}, &nodes));
  std::map<std::string, int> declared;
  for (const v1::Node& n : nodes.nodes()) {
    for (const v1::Capability& c : n.capabilities()) {
      if (c.benchmark() == "workload") declared[n.name()] = c.workloads_size();
    }
  }
  EXPECT_EQ(declared["slow"], 1);
  EXPECT_EQ(declared["fast"], 1);
  EXPECT_EQ(declared["plain"], 0);

  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson({"run", "--bench", "workload", "--param", "workload.name=train_step",
                       "--wait"},
                      &run, &code));
  ASSERT_EQ(code, 0) << run.DebugString();
  EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
  ASSERT_EQ(run.tasks_size(), 2) << "only the nodes that declare it";

  // What the workload printed besides its metric is each task's log.
  v1::Run with_logs;
  ASSERT_TRUE(CliJson({"results", run.run_id(), "--log"}, &with_logs));
  ASSERT_EQ(with_logs.tasks_size(), 2);
  for (const v1::NodeTask& t : with_logs.tasks()) {
    EXPECT_NE(t.log().find("warming up"), std::string::npos) << t.node() << ": " << t.log();
    EXPECT_EQ(t.log().find("FLEETBENCH_METRIC"), std::string::npos) << t.log();
  }
  const CommandResult shown = Cli({"results", run.run_id(), "--log"});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("--- log of slow"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("warming up"), std::string::npos) << shown.out;

  v1::RankResponse rank;
  ASSERT_TRUE(CliJson({"rank", "--metric", "workload.train_step.samples_per_s", "--by",
                       "instance_type"},
                      &rank));
  EXPECT_EQ(rank.unit(), "samples/s") << "from the workload's own line";
  ASSERT_EQ(rank.rows_size(), 2);
  EXPECT_EQ(rank.rows(0).group(), "big.vm") << "higher is better, as the line said";
  EXPECT_EQ(rank.rows(0).median(), 4000);
  EXPECT_EQ(rank.rows(1).median(), 1000);

  v1::CostResponse cost;
  ASSERT_TRUE(CliJson({"cost", "--metric", "workload.train_step.samples_per_s", "--work", "3.6e6",
                       "--by", "instance_type"},
                      &cost));
  EXPECT_EQ(cost.work_unit(), "samples");
  ASSERT_EQ(cost.rows_size(), 2);
  std::map<std::string, double> usd;
  for (const v1::CostRow& r : cost.rows()) {
    usd[r.group()] = r.cost();
    // Its set-up, from its own setup_s samples, costed apart at its price.
    EXPECT_GT(r.setup_seconds(), 0) << r.group();
    EXPECT_NEAR(r.setup_cost(), r.setup_seconds() / 3600 * r.price_per_hour(), 1e-12);
  }
  EXPECT_NEAR(usd["big.vm"], 3.6e6 / 4000 / 3600 * 2, 1e-9);    // 0.5 USD
  EXPECT_NEAR(usd["small.vm"], 3.6e6 / 1000 / 3600 * 1, 1e-9);  // 1 USD

  // A value the pattern takes reaches the command.
  ASSERT_TRUE(CliJson({"run", "--bench", "workload", "--param", "workload.name=train_step",
                       "--param", "workload.rate=77", "--nodes", "slow", "--wait"},
                      &run, &code));
  ASSERT_EQ(code, 0);
  v1::HistoryResponse history;
  ASSERT_TRUE(CliJson({"history", "--node", "slow", "--metric",
                       "workload.train_step.samples_per_s"},
                      &history));
  bool saw77 = false;
  for (const v1::Sample& s : history.samples()) saw77 |= s.value() == 77;
  EXPECT_TRUE(saw77);
}

TEST_F(WorkloadTest, BadRequestsAreUsageErrorsAndStoreNoRun) {
  StartController();
  StartWorkloadAgent("w1", 1000, "small.vm", "1");
  StartAgent("plain", {"instance_type=plain.vm"});
  ASSERT_TRUE(WaitForOnlineNodes(2, absl::Seconds(30)));
  const int before = StoredRuns();
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--param", "workload.name=nope"}, "no selected node declares workload 'nope'"},
      {{"--param", "workload.name=train_step", "--param", "workload.rate=1;reboot"},
       "does not match"},
      {{"--param", "workload.name=train_step", "--param", "workload.command=/bin/rm"},
       "has no parameter 'command'"},
      {{"--param", "workload.name=train_step", "--nodes", "plain"},
       "node plain does not declare workload 'train_step'"},
      {{}, "which workload?"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"run", "--bench", "workload"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CommandResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  EXPECT_EQ(StoredRuns(), before);
}

TEST_F(WorkloadTest, TheShippedPytorchTrainingStepRunsThroughARealAgent) {
  if (RunCommand({"/usr/bin/python3", "-c", "import torch"}, {}).exit_code != 0) {
    GTEST_SKIP() << "Debian's /usr/bin/python3 has no torch (apt-get install "
                    "--no-install-recommends python3-torch); bench/workload_bench.sh records "
                    "this example's figures";
  }
  const std::string dir = dir_ + "/torch-workloads";
  std::filesystem::create_directories(dir);
  std::ifstream in(std::string(FLEETBENCH_SOURCE_DIR) + "/deploy/workloads/torch_train_step.json");
  std::string manifest((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string installed = "/opt/fleetbench/workloads/";
  manifest.replace(manifest.find(installed), installed.size(),
                   std::string(FLEETBENCH_SOURCE_DIR) + "/deploy/workloads/");
  std::ofstream(dir + "/torch_train_step.json") << manifest;
  StartController();
  agent_flags_ = {"--workload-dir", dir};
  StartAgent("cpu-1", {"instance_type=cpu.vm"});
  agent_flags_.clear();
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson({"run", "--bench", "workload", "--param", "workload.name=torch_train_step",
                       "--param", "workload.steps=5", "--wait"},
                      &run, &code));
  ASSERT_EQ(code, 0) << run.DebugString();
  v1::RankResponse rank;
  ASSERT_TRUE(CliJson({"rank", "--metric", "workload.torch_train_step.samples_per_s"}, &rank));
  ASSERT_EQ(rank.rows_size(), 1);
  EXPECT_GT(rank.rows(0).median(), 0);
  EXPECT_EQ(rank.unit(), "samples/s");
}

// One agent: this is about what one task's log may hold.
TEST_F(WorkloadTest, AWorkloadThatPrints100MBFinishesAndItsStoredLogKeepsOnlyItsEnd) {
  const std::string dir = dir_ + "/chatty-workloads";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/chatty.json") << R"({"command": ["/bin/sh", "-c",)"
      R"( "yes 'a line of training output' | head -c 100000000; echo; echo the-last-line;)"
      R"( echo 'FLEETBENCH_METRIC {\"name\": \"lines_per_s\", \"value\": 1, \"unit\": \"lines/s\", \"direction\": \"higher\"}'"],)"
      R"( "work_unit": "lines", "timeout_s": 120})";
  StartController();
  agent_flags_ = {"--workload-dir", dir};
  StartAgent("chatty-1", {"instance_type=cpu.vm"});
  agent_flags_.clear();
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson({"run", "--bench", "workload", "--param", "workload.name=chatty", "--wait"},
                      &run, &code));
  ASSERT_EQ(code, 0) << run.DebugString();
  v1::Run with_logs;
  ASSERT_TRUE(CliJson({"results", run.run_id(), "--log"}, &with_logs));
  ASSERT_EQ(with_logs.tasks_size(), 1);
  const std::string& log = with_logs.tasks(0).log();
  EXPECT_LE(log.size(), 64u * 1024);
  EXPECT_GT(log.size(), 60u * 1024) << "the end of 100 MB fills it";
  EXPECT_NE(log.find("the-last-line"), std::string::npos);
  EXPECT_NE(log.find("a line of training output"), std::string::npos);
}

TEST_F(WorkloadTest, ABadManifestStopsTheAgentsStartNamingTheFileAndTheField) {
  const std::string dir = dir_ + "/bad-workloads";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/train_step.json")
      << R"({"command": ["/bin/true"], "work_unit": "samples", "timout_s": 5})";
  CommandResult r = RunCommand({FLEETBENCH_BINARY, "agent", "--controller", "127.0.0.1:1",
                                "--state-dir", dir_ + "/bad-agent", "--workload-dir", dir},
                               env_);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("train_step.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("timout_s"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fleetbench::testing
