// Reliability end to end (docs/reliability.md): a real controller with TLS
// and enrolled agents; the agents of one instance type killed with SIGKILL
// and restarted past the heartbeat timeout while runs go, the others left
// alone. `reliability` shows the interruptions of that type only, with the
// time online counted; `rank` for a one-node job puts the cheaper, flakier
// type first and for a 512-node job behind; a preemption notice served by
// a local HTTP endpoint is recorded as a preemption; and a controller
// killed and restarted keeps the record and charges the nodes nothing for
// its own absence.
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/rank.pb.h"
#include "fleetbench/v1/reliability.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

constexpr char kTimeout[] = "3s";

class ReliabilityTest : public FleetTest {
 protected:
  std::string last_rank_;  // for a failure's message
  bool Offline(const std::string& node) {
    v1::ListNodesResponse nodes;
    if (!CliJson({"nodes"}, &nodes)) return false;
    for (const v1::Node& n : nodes.nodes()) {
      if (n.name() == node) return n.status() == v1::NODE_STATUS_OFFLINE;
    }
    return false;
  }
  void RunGemm() {
    v1::Run run;
    int code = -1;
    ASSERT_TRUE(CliJson({"run", "--bench", "gemm", "--param", "gemm.sizes=128", "--param",
                         "gemm.min_seconds=0.1", "--param", "gemm.threads=1", "--wait"},
                        &run, &code));
    ASSERT_EQ(code, 0) << run.DebugString();
  }
  v1::ReliabilityResponse Reliability(const std::string& by) {
    v1::ReliabilityResponse r;
    EXPECT_TRUE(CliJson({"reliability", "--by", by, "--min-node-hours", "0.001"}, &r));
    return r;
  }
  static const v1::ReliabilityGroup* Group(const v1::ReliabilityResponse& r,
                                           const std::string& name) {
    for (const v1::ReliabilityGroup& g : r.groups()) {
      if (g.group() == name) return &g;
    }
    return nullptr;
  }
  std::vector<std::string> RankOrder(const std::string& job_nodes, const std::string& checkpoint) {
    v1::RankResponse rank;
    EXPECT_TRUE(CliJson({"rank", "--metric", "gemm.cpu.fp32.tflops", "--by", "instance_type",
                         "--job-nodes", job_nodes, "--checkpoint-interval", checkpoint,
                         "--restart-cost", "0s"},
                        &rank));
    std::vector<std::string> order;
    for (const v1::RankRow& row : rank.rows()) order.push_back(row.group());
    if (HasFailure() || order.size() != 2) return order;
    last_rank_ = rank.DebugString();
    return order;
  }
};

TEST_F(ReliabilityTest, FlakyTypeCountedRankedForTheJobAndKeptAcrossARestart) {
  StartController({"--heartbeat-timeout", kTimeout});
  // The flaky type is half the price: the better buy while nothing fails.
  const std::vector<std::string> flaky = {"flaky-1", "flaky-2"};
  for (const std::string& n : flaky) StartAgent(n, {"instance_type=flaky", "price_per_hour=0.5"});
  for (const char* n : {"solid-1", "solid-2"}) {
    StartAgent(n, {"instance_type=solid", "price_per_hour=1"});
  }
  ASSERT_TRUE(WaitForOnlineNodes(4, absl::Seconds(30)));

  constexpr int kKills = 3;
  for (int round = 0; round < kKills; ++round) {
    ASSERT_NO_FATAL_FAILURE(RunGemm());
    for (const std::string& n : flaky) {
      agents_[n]->Signal(SIGKILL);
      agents_.erase(n);
    }
    ASSERT_TRUE(WaitFor([&] { return Offline("flaky-1") && Offline("flaky-2"); },
                        absl::Seconds(20)));
    for (const std::string& n : flaky) {
      StartAgent(n, {"instance_type=flaky", "price_per_hour=0.5"});
    }
    ASSERT_TRUE(WaitForOnlineNodes(4, absl::Seconds(30)));
  }
  ASSERT_NO_FATAL_FAILURE(RunGemm());

  v1::ReliabilityResponse by_type = Reliability("instance_type");
  const v1::ReliabilityGroup* f = Group(by_type, "flaky");
  const v1::ReliabilityGroup* s = Group(by_type, "solid");
  ASSERT_NE(f, nullptr) << by_type.DebugString();
  ASSERT_NE(s, nullptr) << by_type.DebugString();
  EXPECT_EQ(f->interruptions(), 2u * kKills);
  ASSERT_EQ(f->by_kind_size(), 1);
  EXPECT_EQ(f->by_kind(0).kind(), v1::INTERRUPTION_KIND_OFFLINE);
  EXPECT_EQ(s->interruptions(), 0u);
  EXPECT_GT(f->node_hours(), 0);
  EXPECT_GT(s->node_hours(), 0);

  // Alone, the cheaper type wins; at 512 nodes its interruptions cost more
  // than its price saves. The test compresses hours into seconds, so the
  // job checkpoints as often as loses one node 1% of its time at the rate
  // measured (λC = 0.01): a 512-node job then loses most of its time.
  const double per_hour = f->per_1000_node_hours() / 1000;
  ASSERT_GT(per_hour, 0);
  const std::string checkpoint =
      absl::StrCat(std::max<int64_t>(1, static_cast<int64_t>(0.01 / per_hour * 3.6e6)), "ms");
  EXPECT_EQ(RankOrder("1", checkpoint), (std::vector<std::string>{"flaky", "solid"}))
      << last_rank_;
  EXPECT_EQ(RankOrder("512", checkpoint), (std::vector<std::string>{"solid", "flaky"}))
      << last_rank_;

  // The controller killed: what it recorded stays, and its absence is
  // nobody's interruption.
  KillController(SIGKILL);
  StartController({"--heartbeat-timeout", kTimeout});
  ASSERT_TRUE(WaitForOnlineNodes(4, absl::Seconds(30)));
  ASSERT_NO_FATAL_FAILURE(RunGemm());
  v1::ReliabilityResponse after = Reliability("instance_type");
  ASSERT_NE(Group(after, "flaky"), nullptr);
  EXPECT_EQ(Group(after, "flaky")->interruptions(), 2u * kKills);
  EXPECT_EQ(Group(after, "solid")->interruptions(), 0u);
  EXPECT_GE(Group(after, "solid")->node_hours(), s->node_hours());

  // The table as people read it.
  CommandResult table = Cli({"reliability", "--by", "instance_type", "--min-node-hours", "0.001"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("offline 6"), std::string::npos) << table.out;
}

TEST_F(ReliabilityTest, APreemptionNoticeFromAMetadataEndpointIsAPreemption) {
  httplib::Server metadata;
  absl::Mutex mu;
  bool noticed = false;
  metadata.Get("/spot/instance-action", [&](const httplib::Request&, httplib::Response& res) {
    absl::MutexLock lock(&mu);
    if (!noticed) {
      res.status = 404;
      return;
    }
    res.set_content(R"({"action": "terminate", "time": "2027-01-15T08:02:00Z"})",
                    "application/json");
  });
  const int port = metadata.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { metadata.listen_after_bind(); });
  // Bound and listening already: the agent connects before the accept loop runs.

  StartController({"--heartbeat-timeout", kTimeout});
  agent_flags_ = {"--preemption-notice",
                  absl::StrCat("url:http://127.0.0.1:", port, "/spot/instance-action")};
  StartAgent("spot-1", {"instance_type=spot", "spot=true"});
  agent_flags_.clear();
  StartAgent("steady-1", {"instance_type=steady"});
  ASSERT_TRUE(WaitForOnlineNodes(2, absl::Seconds(30)));
  {
    absl::MutexLock lock(&mu);
    noticed = true;
  }
  const v1::ReliabilityGroup* spot = nullptr;
  v1::ReliabilityResponse r;
  ASSERT_TRUE(WaitFor(
      [&] {
        r = Reliability("node");
        spot = Group(r, "spot-1");
        return spot != nullptr && spot->interruptions() == 1;
      },
      absl::Seconds(30)))
      << r.DebugString() << AgentLog("spot-1");
  EXPECT_EQ(spot->by_kind(0).kind(), v1::INTERRUPTION_KIND_PREEMPTED);
  // It takes no new work while it goes; the other node does.
  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson({"run", "--bench", "gemm", "--param", "gemm.sizes=128", "--param",
                       "gemm.min_seconds=0.1", "--param", "gemm.threads=1", "--wait"},
                      &run, &code));
  ASSERT_EQ(run.tasks_size(), 1) << run.DebugString();
  EXPECT_EQ(run.tasks(0).node(), "steady-1");
  // The provider takes it: no second interruption for the silence.
  agents_["spot-1"]->Signal(SIGKILL);
  agents_.erase("spot-1");
  ASSERT_TRUE(WaitFor([&] { return Offline("spot-1"); }, absl::Seconds(20)));
  EXPECT_EQ(Group(Reliability("node"), "spot-1")->interruptions(), 1u);
  metadata.stop();
  serving.join();
}

}  // namespace
}  // namespace fleetbench::testing
