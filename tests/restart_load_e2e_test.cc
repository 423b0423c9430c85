// Controller restarts under load, as a small machine sees them: every agent
// mid-GEMM on both cores, one agent (and a late one that enrolls then) in a
// cgroup v1 CPU quota of 30% of one core, TLS with enrolled node
// certificates. Each must still enroll, and return after every restart.
// Needs root and the cgroup v1 cpu controller; without the controller the
// test says so and skips.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/api_enums.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "gtest/gtest.h"
#include "tests/cgroup_v1.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

class RestartUnderLoadTest : public FleetTest {
 protected:
  void TearDown() override {
    FleetTest::TearDown();  // the agents are killed and reaped first
    limited_.reset();
  }
  std::unique_ptr<CgroupV1> limited_;
};

v1::Run GetRun(FleetTest* t, const std::string& run_id) {
  v1::Run run;
  t->CliJson({"results", run_id}, &run);
  return run;
}

TEST_F(RestartUnderLoadTest, QuotaLimitedAndBusyAgentsEnrollAndReturnAfterEveryRestart) {
  ASSERT_EQ(geteuid(), 0u) << "a cgroup needs root";
  if (!CgroupV1::HasController("cpu", "cpu.cfs_quota_us")) {
    GTEST_SKIP() << "no cgroup v1 cpu controller at /sys/fs/cgroup/cpu (cpu.cfs_quota_us): "
                    "cannot limit an agent's CPU here";
  }
  limited_ = std::make_unique<CgroupV1>("cpu", "restart-" + dir_.substr(dir_.size() - 6));
  CgroupV1& limited = *limited_;
  ASSERT_FALSE(limited.path().empty());
  ASSERT_TRUE(limited.Set("cpu.cfs_period_us", "100000"));
  ASSERT_TRUE(limited.Set("cpu.cfs_quota_us", "30000"));

  constexpr int kRestarts = 3;
  StartController({"--heartbeat-timeout", "5s"});
  agent_flags_ = {"--backoff-reset-after", "1s"};
  // Enrolls and runs under the quota from its first instruction.
  agent_prefix_["slow"] = limited.ExecPrefix();
  for (const char* name : {"busy-1", "busy-2", "slow"}) StartAgent(name, {"price_per_hour=1"});
  ASSERT_TRUE(WaitForOnlineNodes(3, absl::Seconds(60)));

  // Two threads a node: the two cores are full, the slow node's quota too.
  CommandResult started = Cli({"run", "--bench", "gemm", "--param", "gemm.sizes=512", "--param",
                               "gemm.min_seconds=30", "--param", "gemm.max_runs=100000",
                               "--param", "gemm.threads=2"});
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const std::string run_id(absl::StripAsciiWhitespace(started.out));
  ASSERT_TRUE(WaitFor(
      [&] {
        const v1::Run run = GetRun(this, run_id);
        return run.tasks_size() == 3 &&
               std::all_of(run.tasks().begin(), run.tasks().end(), [](const v1::NodeTask& t) {
                 return t.state() == v1::TASK_STATE_RUNNING;
               });
      },
      absl::Seconds(60)));

  // A node that enrolls now, under the quota, beside the GEMMs.
  agent_prefix_["late"] = limited.ExecPrefix();
  StartAgent("late", {"price_per_hour=1"});
  ASSERT_TRUE(WaitForOnlineNodes(4, absl::Seconds(60))) << AgentLog("late");
  const std::vector<std::string> names = {"busy-1", "busy-2", "slow", "late"};
  for (const std::string& name : names) {
    EXPECT_EQ(CountInAgentLog(name, "certificate (mTLS)"), 1) << AgentLog(name);
  }

  // The oldest heartbeat heard from any node.
  auto oldest_seen = [&] {
    v1::ListNodesResponse listed;
    if (!CliJson({"nodes"}, &listed) || listed.nodes_size() != 4) return absl::InfinitePast();
    absl::Time oldest = absl::InfiniteFuture();
    for (const v1::Node& n : listed.nodes()) {
      oldest = std::min(oldest, absl::FromUnixMillis(n.last_seen_unix_ms()));
    }
    return oldest;
  };
  for (int i = 0; i < kRestarts; ++i) {
    // Healthy sessions first (past --backoff-reset-after): killing sooner
    // is a crash loop, where the backoff is meant to grow.
    const absl::Time online_seen = oldest_seen();
    ASSERT_TRUE(WaitFor([&] { return oldest_seen() - online_seen >= absl::Milliseconds(1500); },
                        absl::Seconds(30)));
    std::map<std::string, int> redials;
    for (const std::string& name : names) redials[name] = CountInAgentLog(name, "reconnecting in");
    KillController(SIGKILL);
    // Away until every agent's session ended and one dial of it failed.
    ASSERT_TRUE(WaitFor(
        [&] {
          for (const std::string& name : names) {
            if (CountInAgentLog(name, "reconnecting in") < redials[name] + 2) return false;
          }
          return true;
        },
        absl::Seconds(60)));
    StartController();
    const absl::Time up = absl::Now();
    // Each agent dials again within its backoff (at most 30 s), which
    // grew while the controller was away: how long that takes is
    // bench/fault_soak.sh's to measure; here they must come back.
    ASSERT_TRUE(WaitForOnlineNodes(4, absl::Seconds(120)))
        << "restart " << i + 1 << "\n" << AgentLog("slow");
    std::cout << "restart " << i + 1 << " under load: all 4 nodes online after "
              << absl::FormatDuration(absl::Now() - up) << std::endl;
  }

  // The run the restarts cut through ends, each of its nodes measured.
  v1::Run run;
  ASSERT_TRUE(WaitFor([&] { return IsTerminal((run = GetRun(this, run_id)).state()); },
                      absl::Seconds(180)));
  EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << run.DebugString();
}

}  // namespace
}  // namespace fleetbench::testing
