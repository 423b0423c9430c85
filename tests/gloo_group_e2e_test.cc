// The gloo backend of `allreduce` through the product (docs/collectives.md): four real
// agents in four network namespaces on a bridge, a real controller in a hub
// namespace, and a group run (GROUP_MODE_GROUP) started over the gRPC API.
// The members meet through the controller's relay and run gloo over their
// own IPs. One member's link slowed with tbf drags the group's busbw down;
// a member killed mid-collective has the others end inside the group's
// deadline, the run names it, and the next run works. Needs root, iproute2
// and tc.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/token.h"
#include "fleetbench/v1/fleet_service.grpc.pb.h"
#include "fleetbench/v1/reliability.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

// Only addresses inside namespaces this test creates.
constexpr char kSubnet[] = "10.235.0.";
constexpr char kHubAddress[] = "10.235.0.254";
constexpr int kNodes = 4;
// The isolate tests' fleet size: 4, or FLEETBENCH_ISOLATE_NODES (up to 16)
// when bench/isolate_time.sh measures the time to a verdict on a larger one.
int IsolateNodes() {
  const char* env = std::getenv("FLEETBENCH_ISOLATE_NODES");
  const int n = env == nullptr ? kNodes : std::atoi(env);
  return n >= kNodes && n <= 16 ? n : kNodes;
}

class GlooGroupE2eTest : public FleetTest {
 protected:
  void SetUp() override {
    FleetTest::SetUp();
    ASSERT_EQ(geteuid(), 0u) << "creating network namespaces needs root";
    suffix_ = dir_.substr(dir_.size() - 6);
    hub_ = "fbgah" + suffix_;
    // The bridge lives in a hub namespace; the controller and this test's
    // gRPC client stay in the root namespace, on a veth into the bridge.
    ASSERT_TRUE(Sh({"ip", "netns", "add", hub_}));
    ASSERT_TRUE(Sh({"ip", "-n", hub_, "link", "add", "br0", "type", "bridge"}));
    ASSERT_TRUE(Sh({"ip", "-n", hub_, "link", "set", "br0", "up"}));
    const std::string root_end = "gar" + suffix_;
    const std::string root_peer = "gah" + suffix_;
    ASSERT_TRUE(Sh({"ip", "link", "add", root_end, "type", "veth", "peer", "name", root_peer,
                    "netns", hub_}));
    ASSERT_TRUE(Sh({"ip", "addr", "add", std::string(kHubAddress) + "/24", "dev", root_end}));
    ASSERT_TRUE(Sh({"ip", "link", "set", root_end, "up"}));
    ASSERT_TRUE(Sh({"ip", "-n", hub_, "link", "set", root_peer, "master", "br0"}));
    ASSERT_TRUE(Sh({"ip", "-n", hub_, "link", "set", root_peer, "up"}));
    address_ = absl::StrCat(kHubAddress, ":", PickFreePort());
    nodes_ = absl::StrContains(::testing::UnitTest::GetInstance()->current_test_info()->name(),
                               "Isolate")
                 ? IsolateNodes()
                 : kNodes;
    for (int i = 1; i <= nodes_; ++i) {
      const std::string ns = AddNode(i);
      agent_prefix_[Node(i)] = {"/usr/bin/env", "ip", "netns", "exec", ns};
    }
    StartController();
    for (int i = 1; i <= nodes_; ++i) StartAgent(Node(i), {});
    ASSERT_TRUE(WaitForOnlineNodes(nodes_, absl::Seconds(30)));
  }

  void TearDown() override {
    FleetTest::TearDown();  // processes first, then their namespaces
    for (const std::string& ns : namespaces_) Sh({"ip", "netns", "del", ns});
    // Deleting the hub deletes the root veth's peer, and so the pair.
    if (!hub_.empty()) Sh({"ip", "netns", "del", hub_});
  }

  static std::string Node(int i) { return absl::StrCat("n", i); }

  std::string AddNode(int index) {
    const std::string ns = absl::StrCat("fbga", index, suffix_);
    const std::string node_end = absl::StrCat("ga", index, "n", suffix_);
    const std::string hub_end = absl::StrCat("ga", index, "h", suffix_);
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

  // Shapes what node `index` sends with htb: `base` to everyone, and
  // `slow` (when given) to the node `slow_peer` only, by a u32 filter on
  // its address. Every direction of every pair leaves through some node's
  // link, so each pair runs at the slower of its two senders.
  void ShapeEgress(int index, const std::string& base, int slow_peer = 0,
                   const std::string& slow = "") {
    const auto& [ns, node_end, hub_end] = veth_[index];
    auto tc = [&](std::vector<std::string> args) {
      std::vector<std::string> argv = {"ip", "netns", "exec", ns, "tc"};
      argv.insert(argv.end(), args.begin(), args.end());
      EXPECT_TRUE(Sh(argv));
    };
    tc({"qdisc", "add", "dev", node_end, "root", "handle", "1:", "htb", "default", "20"});
    tc({"class", "add", "dev", node_end, "parent", "1:", "classid", "1:20", "htb", "rate", base,
        "ceil", base, "burst", "256k", "cburst", "256k"});
    if (slow_peer == 0) return;
    tc({"class", "add", "dev", node_end, "parent", "1:", "classid", "1:10", "htb", "rate", slow,
        "ceil", slow, "burst", "64k", "cburst", "64k"});
    tc({"filter", "add", "dev", node_end, "protocol", "ip", "parent", "1:", "prio", "1", "u32",
        "match", "ip", "dst", absl::StrCat(kSubnet, slow_peer, "/32"), "flowid", "1:10"});
  }

  bool Sh(const std::vector<std::string>& argv) {
    std::vector<std::string> full = {"/usr/bin/env"};
    full.insert(full.end(), argv.begin(), argv.end());
    CommandResult r = RunCommand(full, {});
    if (r.exit_code != 0) ADD_FAILURE() << absl::StrJoin(argv, " ") << ": " << r.err;
    return r.exit_code == 0;
  }

  std::unique_ptr<v1::Fleet::Stub> Stub() {
    return v1::Fleet::NewStub(grpc::CreateChannel(address_, Credentials()));
  }
  void Authorize(grpc::ClientContext* context) {
    context->AddMetadata(kAuthMetadataKey, "Bearer " + env_.at("FLEETBENCH_TOKEN"));
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  }

  // One run of allreduce with backend=gloo over every node, as one group
  // (GROUP) or as isolation's pair tests (ISOLATE).
  std::string StartAllreduce(std::map<std::string, std::string> params,
                             absl::Duration timeout,
                             v1::GroupMode mode = v1::GROUP_MODE_GROUP, bool bisect = false) {
    v1::StartRunRequest request;
    v1::BenchmarkSpec* spec = request.add_benchmarks();
    spec->set_name("allreduce");
    params["backend"] = "gloo";
    for (const auto& [k, v] : params) (*spec->mutable_params())[k] = v;
    spec->set_timeout_ms(absl::ToInt64Milliseconds(timeout));
    for (int i = nodes_; i >= 1; --i) request.add_nodes(Node(i));  // any order
    request.mutable_group()->set_mode(mode);
    request.mutable_group()->set_bisect(bisect);
    grpc::ClientContext context;
    Authorize(&context);
    v1::StartRunResponse response;
    grpc::Status s = Stub()->StartRun(&context, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response.run_id();
  }
  v1::Run GetRun(const std::string& run_id, bool samples = false) {
    v1::GetRunRequest request;
    request.set_run_id(run_id);
    request.set_include_samples(samples);
    grpc::ClientContext context;
    Authorize(&context);
    v1::Run run;
    grpc::Status s = Stub()->GetRun(&context, request, &run);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return run;
  }
  // Defined below, beside the isolate tests it serves.
  void IsolateWithSlowN3(bool bisect, v1::Run* run);
  bool WaitForRunEnd(const std::string& run_id, absl::Duration timeout, v1::Run* run) {
    return WaitFor(
        [&] {
          *run = GetRun(run_id, true);
          return run->state() == v1::RUN_STATE_SUCCEEDED ||
                 run->state() == v1::RUN_STATE_FAILED ||
                 run->state() == v1::RUN_STATE_CANCELLED;
        },
        timeout);
  }

  // The headline busbw of a succeeded run, after checking its samples came
  // from rank 0 only and describe the whole group.
  double Headline(const v1::Run& run) {
    EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << run.DebugString();
    double busbw = -1;
    int curve = 0;
    for (const v1::Sample& s : run.samples()) {
      EXPECT_EQ(s.node(), "n1") << s.metric();  // rank 0: the stable order's first
      EXPECT_EQ(s.params().at("ranks"), "4");
      EXPECT_EQ(s.params().at("backend"), "gloo");
      EXPECT_EQ(s.params().at("nodes"), "n1,n2,n3,n4");
      if (s.metric() == "allreduce.gloo.busbw_GBps") busbw = s.value();
      if (s.metric() == "allreduce.gloo.curve_busbw_GBps") ++curve;
    }
    EXPECT_EQ(curve, 1);  // one size
    EXPECT_GT(busbw, 0) << run.DebugString();
    return busbw;
  }

  int nodes_ = kNodes;
  std::string suffix_;
  std::string hub_;
  std::vector<std::string> namespaces_;
  std::map<int, std::tuple<std::string, std::string, std::string>> veth_;
};

const std::map<std::string, std::string> kOneSize = {
    {"min_bytes", "8M"}, {"max_bytes", "8M"}, {"iters", "5"}, {"warmup", "1"}};

TEST_F(GlooGroupE2eTest, ASlowMemberDragsTheGroupAllReduceDown) {
  v1::Run run;
  std::string run_id = StartAllreduce(kOneSize, absl::Minutes(3));
  ASSERT_FALSE(run_id.empty());
  ASSERT_TRUE(WaitForRunEnd(run_id, absl::Minutes(4), &run)) << run.DebugString();
  const double fast = Headline(run);
  ASSERT_EQ(run.groups_size(), 1);
  EXPECT_EQ(run.groups(0).state(), v1::TASK_STATE_SUCCEEDED);

  SlowLink(3, "200mbit");
  run_id = StartAllreduce(kOneSize, absl::Minutes(3));
  ASSERT_TRUE(WaitForRunEnd(run_id, absl::Minutes(4), &run)) << run.DebugString();
  const double slow = Headline(run);
  std::cout << "group of 4, 8 MiB all-reduce busbw GB/s: unshaped " << fast
            << ", n3 at 200 Mbit/s " << slow << "\n";
  // The ring runs at its slowest link: 200 Mbit/s is 0.025 GB/s each way.
  EXPECT_LT(slow, 0.03);
  EXPECT_GT(slow, 0.005);
  EXPECT_GT(fast, 2 * slow);
}

TEST_F(GlooGroupE2eTest, AKilledMemberEndsTheOthersInsideTheDeadlineAndTheNextRunWorks) {
  constexpr absl::Duration kDeadline = absl::Minutes(2);
  // Long enough that the kill lands mid-collective.
  std::map<std::string, std::string> long_run = kOneSize;
  long_run["iters"] = "10000";  // the most the plugin takes: ~minutes
  const std::string run_id = StartAllreduce(long_run, kDeadline);
  ASSERT_FALSE(run_id.empty());
  v1::Run run;
  ASSERT_TRUE(WaitFor(
      [&] {
        run = GetRun(run_id);
        // Running and past the meeting: each member reports the op it is
        // in once the group has met.
        int in_collective = 0;
        for (const v1::NodeTask& t : run.tasks()) {
          in_collective += t.state() == v1::TASK_STATE_RUNNING &&
                           t.progress_message().find("gloo allreduce over 4") !=
                               std::string::npos;
        }
        return in_collective == kNodes;
      },
      absl::Seconds(60)))
      << run.DebugString();
  const absl::Time killed = absl::Now();
  agents_["n3"]->Signal(SIGKILL);
  agents_["n3"]->Wait();
  ASSERT_TRUE(WaitForRunEnd(run_id, kDeadline, &run)) << run.DebugString();
  const absl::Duration took = absl::Now() - killed;
  std::cout << "run ended " << absl::FormatDuration(took) << " after n3 was killed\n";
  EXPECT_LT(took, absl::Seconds(30));  // far inside the 2-minute deadline
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);
  ASSERT_EQ(run.groups_size(), 1);
  EXPECT_NE(run.groups(0).reason().find("n3"), std::string::npos) << run.groups(0).reason();
  for (const v1::NodeTask& t : run.tasks()) {
    EXPECT_NE(t.state(), v1::TASK_STATE_RUNNING) << t.node();
    EXPECT_NE(t.state(), v1::TASK_STATE_SUCCEEDED) << t.node();
  }
  // n3 comes back; no agent is left busy: a new group of all four runs.
  StartAgent("n3", {});
  ASSERT_TRUE(WaitForOnlineNodes(kNodes, absl::Seconds(30)));
  const std::string next = StartAllreduce(kOneSize, absl::Minutes(3));
  ASSERT_TRUE(WaitForRunEnd(next, absl::Minutes(4), &run)) << run.DebugString();
  Headline(run);
}

// --isolate through the product (docs/collectives.md). Every node sends at 800 Mbit/s,
// so the healthy pairs are bound by their links, not by this machine's
// CPUs, and repeat closely; the fault is 200 Mbit/s, a quarter.
const std::map<std::string, std::string> kPairSize = {
    {"min_bytes", "4M"}, {"max_bytes", "4M"}, {"iters", "5"}, {"warmup", "1"}};

std::string Pairs(const v1::Run& run) {
  std::vector<std::string> lines;
  for (const v1::GroupResult& g : run.groups()) {
    lines.push_back(absl::StrCat("pass ", g.pass(), " ", absl::StrJoin(g.members(), "-"), " ",
                                 g.busbw_gbps(), " ", v1::TaskState_Name(g.state()), " ",
                                 g.reason()));
  }
  return absl::StrJoin(lines, "\n");
}

// Every node at 800 Mbit/s but n3 at 200: --isolate (with --bisect or
// without) must end with n3 as the one bad node and no bad link.
void GlooGroupE2eTest::IsolateWithSlowN3(bool bisect, v1::Run* run) {
  const int nodes = nodes_;
  for (int i = 1; i <= nodes; ++i) ShapeEgress(i, i == 3 ? "200mbit" : "800mbit");
  const absl::Time start = absl::Now();
  const std::string run_id =
      StartAllreduce(kPairSize, absl::Minutes(2), v1::GROUP_MODE_ISOLATE, bisect);
  ASSERT_FALSE(run_id.empty());
  ASSERT_TRUE(WaitForRunEnd(run_id, absl::Minutes(8), run)) << run->DebugString();
  std::cout << (bisect ? "bisect, " : "isolate, ") << nodes << " nodes, n3 slow: verdict in "
            << absl::FormatDuration(absl::Now() - start) << " after "
            << run->isolation().pair_tests() << " tests\n"
            << Pairs(*run) << "\n" << run->isolation().summary() << "\n";
  EXPECT_EQ(run->state(), v1::RUN_STATE_SUCCEEDED);
  const v1::IsolationVerdict& v = run->isolation();
  EXPECT_TRUE(v.complete());
  ASSERT_EQ(v.bad_nodes_size(), 1) << Pairs(*run);
  EXPECT_EQ(v.bad_nodes(0), "n3");
  EXPECT_EQ(v.bad_links_size(), 0) << Pairs(*run);
  // The verdict is n3's interruption in the reliability record, and the
  // only one (docs/reliability.md).
  v1::ReliabilityRequest request;
  request.set_list_limit(10);
  grpc::ClientContext context;
  Authorize(&context);
  v1::ReliabilityResponse reliability;
  grpc::Status s = Stub()->Reliability(&context, request, &reliability);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(reliability.interruptions_size(), 1) << reliability.DebugString();
  EXPECT_EQ(reliability.interruptions(0).node(), "n3");
  EXPECT_EQ(reliability.interruptions(0).kind(), v1::INTERRUPTION_KIND_ISOLATED);
  EXPECT_TRUE(absl::StrContains(reliability.interruptions(0).detail(), run->run_id()))
      << reliability.interruptions(0).detail();
}

TEST_F(GlooGroupE2eTest, IsolateNamesTheSlowNode) {
  v1::Run run;
  ASSERT_NO_FATAL_FAILURE(IsolateWithSlowN3(/*bisect=*/false, &run));
  EXPECT_GE(run.isolation().pair_tests(), nodes_ * (nodes_ - 1) / 2);  // every pair once, then more
}

// --isolate --bisect: halves first, then the failing half's members
// re-paired with nodes of the passing half; the same verdict as the
// round-robin, from group tests instead of every pair.
TEST_F(GlooGroupE2eTest, IsolateByBisectionNamesTheSlowNode) {
  v1::Run run;
  ASSERT_NO_FATAL_FAILURE(IsolateWithSlowN3(/*bisect=*/true, &run));
  // The first pass is the two halves, each one group of half the nodes.
  ASSERT_FALSE(run.groups().empty());
  EXPECT_EQ(run.groups(0).pass(), 1);
  EXPECT_EQ(run.groups(0).members_size(), (nodes_ + 1) / 2) << Pairs(run);
}

TEST_F(GlooGroupE2eTest, IsolateNamesTheSlowLinkAndNeitherNode) {
  // Only the traffic between n1 and n2 is slow, both ways.
  ShapeEgress(1, "800mbit", 2, "200mbit");
  ShapeEgress(2, "800mbit", 1, "200mbit");
  for (int i = 3; i <= nodes_; ++i) ShapeEgress(i, "800mbit");
  const std::string run_id =
      StartAllreduce(kPairSize, absl::Minutes(2), v1::GROUP_MODE_ISOLATE);
  ASSERT_FALSE(run_id.empty());
  v1::Run run;
  ASSERT_TRUE(WaitForRunEnd(run_id, absl::Minutes(8), &run)) << run.DebugString();
  std::cout << "isolate, 4 nodes, n1-n2 slow:\n" << Pairs(run) << "\n"
            << run.isolation().summary() << "\n";
  EXPECT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED);
  const v1::IsolationVerdict& v = run.isolation();
  EXPECT_TRUE(v.complete());
  EXPECT_EQ(v.bad_nodes_size(), 0) << Pairs(run);
  ASSERT_EQ(v.bad_links_size(), 1) << Pairs(run);
  std::vector<std::string> ends = {v.bad_links(0).node_a(), v.bad_links(0).node_b()};
  std::sort(ends.begin(), ends.end());
  EXPECT_EQ(ends, (std::vector<std::string>{"n1", "n2"}));
}

}  // namespace
}  // namespace fleetbench::testing
