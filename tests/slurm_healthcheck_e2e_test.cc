// deploy/slurm/fleetbench-healthcheck against a real one-node Slurm cluster
// (Debian slurm-wlm: slurmctld and slurmd as root, in a temp folder, on
// free ports, auth/none so that no munge key is needed) and a real
// controller and agent. slurmd itself runs the health check every second
// (HealthCheckInterval=1) through a wrapper that sets the script's settings
// and logs each run; the test only changes the agent and reads the node's
// state with sinfo. The critical finding is gpu.none: an agent labelled
// gpus=8 on this GPU-less machine (docs/findings.md); restarting it
// without the label clears it.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

constexpr char kNode[] = "fbnode";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class SlurmHealthcheckTest : public FleetTest {
 protected:
  void SetUp() override {
    FleetTest::SetUp();
    ASSERT_EQ(geteuid(), 0u) << "slurmctld and slurmd run as root here";
    slurm_ = dir_ + "/slurm";
    std::filesystem::create_directories(slurm_ + "/state");
    std::filesystem::create_directories(slurm_ + "/spool");
    conf_ = slurm_ + "/slurm.conf";
    hc_log_ = slurm_ + "/healthcheck.log";
    const std::string token_file = dir_ + "/token";
    std::ofstream(token_file) << env_["FLEETBENCH_TOKEN"] << "\n";
    // What slurmd runs: the shipped script with its settings, each run's
    // output (on one line) and duration appended to the log.
    const std::string wrapper = slurm_ + "/healthcheck.sh";
    std::ofstream(wrapper) << "#!/bin/sh\n"
                           << "export SLURM_CONF=" << conf_ << "\n"
                           << "export FLEETBENCH_HEALTHCHECK_CONF=/nonexistent\n"
                           << "export FLEETBENCH_BIN=" << FLEETBENCH_BINARY << "\n"
                           << "export FLEETBENCH_CONTROLLER=" << address_ << "\n"
                           << "export FLEETBENCH_TOKEN_FILE=" << token_file << "\n"
                           << "export FLEETBENCH_CA=" << env_["FLEETBENCH_CA"] << "\n"
                           << "export SLURM_NODE=" << kNode << "\n"
                           << "export CACHE=" << dir_ << "/verdict.json\n"
                           << "export DEADLINE=5\n"
                           << "start=$(date +%s%N)\n"
                           << "out=$(" << HEALTHCHECK_SCRIPT << " 2>&1); rc=$?\n"
                           << "out=$(printf '%s' \"$out\" | tr '\\n' ' ')\n"
                           << "end=$(date +%s%N)\n"
                           << "echo \"rc=$rc ms=$(( (end - start) / 1000000 )) $out\" >> " << hc_log_
                           << "\n";
    std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
    std::ofstream(conf_) << "ClusterName=fbtest\n"
                         << "SlurmctldHost=localhost(127.0.0.1)\n"
                         << "SlurmctldPort=" << PickFreePort() << "\n"
                         << "SlurmdPort=" << PickFreePort() << "\n"
                         << "AuthType=auth/none\nCredType=cred/none\n"
                         << "SlurmUser=root\nSlurmdUser=root\n"
                         << "StateSaveLocation=" << slurm_ << "/state\n"
                         << "SlurmdSpoolDir=" << slurm_ << "/spool\n"
                         << "SlurmctldPidFile=" << slurm_ << "/slurmctld.pid\n"
                         << "SlurmdPidFile=" << slurm_ << "/slurmd.pid\n"
                         << "SlurmctldLogFile=" << slurm_ << "/slurmctld.log\n"
                         << "SlurmdLogFile=" << slurm_ << "/slurmd.log\n"
                         << "ProctrackType=proctrack/pgid\nTaskPlugin=task/none\n"
                         << "SelectType=select/cons_tres\nJobAcctGatherType=jobacct_gather/none\n"
                         << "SwitchType=switch/none\nMpiDefault=none\nReturnToService=2\n"
                         << "HealthCheckProgram=" << wrapper << "\n"
                         << "HealthCheckInterval=1\nHealthCheckNodeState=ANY\n"
                         << "NodeName=" << kNode
                         << " NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN\n"
                         << "PartitionName=debug Nodes=ALL Default=YES State=UP\n";
    slurm_env_ = {{"SLURM_CONF", conf_}};
    slurmctld_ = std::make_unique<Process>(
        std::vector<std::string>{"/usr/sbin/slurmctld", "-D", "-i", "-f", conf_}, slurm_env_,
        slurm_ + "/slurmctld.err");
    ASSERT_TRUE(WaitFor([&] { return Sinfo().exit_code == 0; }, absl::Seconds(30)))
        << "slurmctld did not answer; see " << slurm_;
    slurmd_ = std::make_unique<Process>(
        std::vector<std::string>{"/usr/sbin/slurmd", "-D", "-N", kNode, "-f", conf_}, slurm_env_,
        slurm_ + "/slurmd.err");
  }

  void TearDown() override {
    if (slurmctld_) Scontrol({"shutdown"});
    if (slurmd_ && !slurmd_->WaitFor(absl::Seconds(10))) slurmd_->Signal(SIGKILL);
    if (slurmctld_ && !slurmctld_->WaitFor(absl::Seconds(10))) slurmctld_->Signal(SIGKILL);
    slurmd_.reset();
    slurmctld_.reset();
    FleetTest::TearDown();
  }

  CommandResult Sinfo() {
    return RunCommand({"/usr/bin/sinfo", "-h", "-N", "-n", kNode, "-o", "%T %E"}, slurm_env_);
  }
  CommandResult Scontrol(std::vector<std::string> args) {
    args.insert(args.begin(), "/usr/bin/scontrol");
    return RunCommand(args, slurm_env_);
  }
  // The node's state word (idle, drained, draining, ...) and its reason.
  std::pair<std::string, std::string> NodeState() {
    CommandResult r = Sinfo();
    std::string line(absl::StripAsciiWhitespace(r.out));
    std::pair<std::string, std::string> state =
        absl::StrSplit(line, absl::MaxSplits(' ', 1));
    return state;
  }
  bool WaitForState(const std::string& state_prefix, const std::string& reason) {
    return WaitFor(
        [&] {
          auto [state, why] = NodeState();
          return absl::StartsWith(state, state_prefix) && why == reason;
        },
        absl::Seconds(45));
  }
  // Waits until the health check has run `runs` more times after now,
  // the last one printing `says`.
  bool WaitForRunsSaying(const std::string& says, int runs = 2) {
    const size_t from = ReadFile(hc_log_).size();
    return WaitFor(
        [&] {
          std::string fresh = ReadFile(hc_log_).substr(from);
          std::vector<std::string> lines =
              absl::StrSplit(fresh, '\n', absl::SkipEmpty());
          return static_cast<int>(lines.size()) >= runs &&
                 absl::StrContains(lines.back(), says);
        },
        absl::Seconds(45));
  }
  // The agent restarted with `labels` (its hello updates the labels the
  // gpu.none rule reads), waiting until the controller sees it with them.
  void RestartAgent(const std::vector<std::string>& labels, bool critical) {
    StartAgent(kNode, labels);
    ASSERT_TRUE(WaitFor(
        [&] {
          CommandResult r = Cli({"findings", "--node", kNode, "--severity", "critical", "--json"});
          return r.exit_code == 0 && absl::StrContains(r.out, "gpu.none") == critical;
        },
        absl::Seconds(30)))
        << "the controller never showed the agent with " << labels.size() << " label(s)";
  }

  std::string slurm_, conf_, hc_log_;
  std::map<std::string, std::string> slurm_env_;
  std::unique_ptr<Process> slurmctld_, slurmd_;
};

TEST_F(SlurmHealthcheckTest, DrainsOnCriticalResumesItsOwnAndLeavesAnAdminDrainAlone) {
  StartController();
  ASSERT_TRUE(WaitForState("idle", "none")) << NodeState().first << " " << NodeState().second;

  // A critical finding drains the node, with the reason prefixed.
  ASSERT_NO_FATAL_FAILURE(RestartAgent({"gpus=8"}, true));
  EXPECT_TRUE(WaitForState("drain", "fleetbench: gpu.none"))
      << NodeState().first << " " << NodeState().second << "\n" << ReadFile(hc_log_);

  // Cleared: the node is resumed.
  ASSERT_NO_FATAL_FAILURE(RestartAgent({}, false));
  EXPECT_TRUE(WaitForState("idle", "none"))
      << NodeState().first << " " << NodeState().second << "\n" << ReadFile(hc_log_);

  // An admin's drain is neither rewritten by a critical finding nor
  // resumed when it clears.
  ASSERT_EQ(Scontrol({"update", absl::StrCat("NodeName=", kNode), "State=DRAIN",
                      "Reason=admin: fan swap"})
                .exit_code,
            0);
  ASSERT_NO_FATAL_FAILURE(RestartAgent({"gpus=8"}, true));
  EXPECT_TRUE(WaitForRunsSaying("drained by someone else")) << ReadFile(hc_log_);
  EXPECT_EQ(NodeState().second, "admin: fan swap");
  ASSERT_NO_FATAL_FAILURE(RestartAgent({}, false));
  EXPECT_TRUE(WaitForRunsSaying("no critical finding; unchanged")) << ReadFile(hc_log_);
  auto [state, reason] = NodeState();
  EXPECT_TRUE(absl::StartsWith(state, "drain")) << state;
  EXPECT_EQ(reason, "admin: fan swap");

  // Every run finished well under Slurm's 60 s and exited 0.
  for (absl::string_view line : absl::StrSplit(ReadFile(hc_log_), '\n', absl::SkipEmpty())) {
    ASSERT_TRUE(absl::StartsWith(line, "rc=0 ms=")) << line;
    int ms = 0;
    ASSERT_TRUE(absl::SimpleAtoi(line.substr(8, line.find(' ', 8) - 8), &ms)) << line;
    EXPECT_LT(ms, 15000) << line;
  }
}

TEST_F(SlurmHealthcheckTest, WithTheControllerDownACachedCriticalVerdictStillDrains) {
  StartController();
  ASSERT_TRUE(WaitForState("idle", "none"));
  ASSERT_NO_FATAL_FAILURE(RestartAgent({"gpus=8"}, true));
  ASSERT_TRUE(WaitForState("drain", "fleetbench: gpu.none")) << ReadFile(hc_log_);

  // The controller goes away; someone resumes the node by hand. The cached
  // verdict (fresh: MAX_AGE 3600 s) drains it again, saying so.
  KillController(SIGKILL);
  ASSERT_EQ(Scontrol({"update", absl::StrCat("NodeName=", kNode), "State=RESUME"}).exit_code, 0);
  EXPECT_TRUE(WaitForRunsSaying("(verdict from cache)", 1)) << ReadFile(hc_log_);
  EXPECT_TRUE(WaitForState("drain", "fleetbench: gpu.none"));
}

}  // namespace
}  // namespace fleetbench::testing
