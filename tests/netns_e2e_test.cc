// Three nodes on three network namespaces, the way a fleet spans hosts: a
// hub namespace holds a bridge and the controller; each agent lives in its
// own namespace behind a veth pair. One node's link is slowed to 200 Mbit/s
// with tbf; the `net` matrix must show that node's pairs near 200 Mbit/s and
// the others well above. Needs root (CI runs as root); without it the test
// says so and fails rather than pretending.
#include <unistd.h>

#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/rank.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "gtest/gtest.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

// Only addresses inside namespaces this test creates.
constexpr char kSubnet[] = "10.231.0.";
constexpr char kHubAddress[] = "10.231.0.254";

class NamespaceFleetTest : public FleetTest {
 public:
  void SetUp() override {
    FleetTest::SetUp();
    ASSERT_EQ(geteuid(), 0u) << "creating network namespaces needs root";
    suffix_ = dir_.substr(dir_.size() - 6);
    hub_ = "fbhub" + suffix_;
    ASSERT_TRUE(Sh({"ip", "netns", "add", hub_}));
    ASSERT_TRUE(Sh({"ip", "-n", hub_, "link", "set", "lo", "up"}));
    ASSERT_TRUE(Sh({"ip", "-n", hub_, "link", "add", "br0", "type", "bridge"}));
    ASSERT_TRUE(Sh({"ip", "-n", hub_, "addr", "add", std::string(kHubAddress) + "/24", "dev", "br0"}));
    ASSERT_TRUE(Sh({"ip", "-n", hub_, "link", "set", "br0", "up"}));
    exec_prefix_ = {"/usr/bin/env", "ip", "netns", "exec", hub_};
    address_ = absl::StrCat(kHubAddress, ":", PickFreePort());
  }

  void TearDown() override {
    FleetTest::TearDown();  // processes first, then their namespaces
    for (const std::string& ns : namespaces_) Sh({"ip", "netns", "del", ns});
    if (!hub_.empty()) Sh({"ip", "netns", "del", hub_});
  }

  // A node namespace joined to the hub's bridge; returns its name.
  std::string AddNode(int index) {
    const std::string ns = absl::StrCat("fbn", index, suffix_);
    const std::string node_end = absl::StrCat("v", index, "n", suffix_);
    const std::string hub_end = absl::StrCat("v", index, "h", suffix_);
    EXPECT_TRUE(Sh({"ip", "netns", "add", ns}));
    namespaces_.push_back(ns);
    EXPECT_TRUE(Sh({"ip", "link", "add", node_end, "netns", ns, "type", "veth", "peer", "name",
                    hub_end, "netns", hub_}));
    EXPECT_TRUE(Sh({"ip", "-n", ns, "addr", "add", absl::StrCat(kSubnet, index, "/24"), "dev",
                    node_end}));
    EXPECT_TRUE(Sh({"ip", "-n", ns, "link", "set", node_end, "up"}));
    EXPECT_TRUE(Sh({"ip", "-n", ns, "link", "set", "lo", "up"}));
    EXPECT_TRUE(Sh({"ip", "-n", hub_, "link", "set", hub_end, "master", "br0"}));
    EXPECT_TRUE(Sh({"ip", "-n", hub_, "link", "set", hub_end, "up"}));
    veth_[index] = {ns, node_end, hub_end};
    return ns;
  }

  // Shapes both directions of a node's link with a token bucket.
  void SlowLink(int index, const std::string& rate) {
    const auto& [ns, node_end, hub_end] = veth_[index];
    for (const auto& [where, dev] : {std::pair{ns, node_end}, std::pair{hub_, hub_end}}) {
      EXPECT_TRUE(Sh({"ip", "netns", "exec", where, "tc", "qdisc", "add", "dev", dev, "root",
                      "tbf", "rate", rate, "burst", "64kb", "latency", "50ms"}));
    }
  }

  bool Sh(const std::vector<std::string>& argv) {
    std::vector<std::string> full = {"/usr/bin/env"};
    full.insert(full.end(), argv.begin(), argv.end());
    CommandResult r = RunCommand(full, {});
    if (r.exit_code != 0) ADD_FAILURE() << absl::StrJoin(argv, " ") << ": " << r.err;
    return r.exit_code == 0;
  }

  std::string suffix_;
  std::string hub_;
  std::vector<std::string> namespaces_;
  std::map<int, std::tuple<std::string, std::string, std::string>> veth_;
};

TEST_F(NamespaceFleetTest, MatrixShowsTheSlowLink) {
  for (int i = 1; i <= 3; ++i) {
    const std::string ns = AddNode(i);
    agent_prefix_[absl::StrCat("n", i)] = {"/usr/bin/env", "ip", "netns", "exec", ns};
  }
  SlowLink(3, "200mbit");
  StartController();
  for (int i = 1; i <= 3; ++i) StartAgent(absl::StrCat("n", i), {});
  ASSERT_TRUE(WaitForOnlineNodes(3, absl::Seconds(30)));

  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson({"run", "--bench", "net", "--param", "net.pairing=all", "--param",
                       "net.duration_s=2", "--param", "net.warmup_s=0.5", "--param",
                       "net.reverse=0", "--param", "net.latency_count=200", "--wait",
                       "--timeout", "3m"},
                      &run, &code));
  EXPECT_EQ(code, 0);
  ASSERT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
  // Every pair, measured once from its connecting side.
  std::map<std::string, double> gbps;  // "server>client"
  for (const v1::Sample& s : run.samples()) {
    if (s.metric() != "net.tcp.Gbps") continue;
    gbps[s.params().at("peer_node") + ">" + s.node()] = s.value();
  }
  ASSERT_EQ(gbps.size(), 3u);
  for (const auto& [pair, value] : gbps) {
    SCOPED_TRACE(pair);
    if (pair.find("n3") != std::string::npos) {
      EXPECT_GT(value, 0.15);  // 200 Mbit/s less TCP/IP overhead
      EXPECT_LT(value, 0.22);
    } else {
      EXPECT_GT(value, 1.0);  // an unshaped veth: several Gbit/s
    }
  }
  // The human output shows the matrix.
  CommandResult text = Cli({"results", run.run_id()});
  EXPECT_NE(text.out.find("LISTENER"), std::string::npos) << text.out;
  std::cout << text.out;  // the measured matrix, for the test log
}

}  // namespace
}  // namespace fleetbench::testing
