// The round-robin schedule and the isolation passes, driven to the end on
// made-up fleets: each test says which pairs are slow and checks what is
// named, what is cleared and how many pair tests it took.
#include "diagnosis/isolation.h"

#include <functional>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::diagnosis {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

TEST(RoundRobinRoundsTest, EveryPairOnceAndNoNodeTwiceInARound) {
  for (int n = 2; n <= 12; ++n) {
    SCOPED_TRACE(n);
    const auto rounds = RoundRobinRounds(n);
    EXPECT_EQ(rounds.size(), static_cast<size_t>(n % 2 == 0 ? n - 1 : n));
    std::set<std::pair<int, int>> seen;
    for (const auto& round : rounds) {
      EXPECT_EQ(round.size(), static_cast<size_t>(n / 2));
      std::set<int> busy;
      for (const auto& [a, b] : round) {
        EXPECT_LT(a, b);
        EXPECT_GE(a, 0);
        EXPECT_LT(b, n);
        EXPECT_TRUE(busy.insert(a).second) << a << " twice in a round";
        EXPECT_TRUE(busy.insert(b).second) << b << " twice in a round";
        EXPECT_TRUE(seen.insert({a, b}).second) << a << "-" << b << " twice";
      }
      // Odd n: exactly one node sits each round out.
      EXPECT_EQ(busy.size(), static_cast<size_t>(n - n % 2));
    }
    EXPECT_EQ(seen.size(), static_cast<size_t>(n * (n - 1) / 2));
  }
}

TEST(RoundRobinRoundsTest, OddNodesIdleOncePerRoundEachInTurn) {
  const auto rounds = RoundRobinRounds(5);
  std::multiset<int> idle;
  for (const auto& round : rounds) {
    std::set<int> busy;
    for (const auto& [a, b] : round) busy.insert({a, b});
    for (int i = 0; i < 5; ++i) {
      if (!busy.contains(i)) idle.insert(i);
    }
  }
  EXPECT_THAT(idle, UnorderedElementsAre(0, 1, 2, 3, 4));
}

TEST(RoundRobinRoundsTest, NothingUnderTwoNodes) {
  EXPECT_THAT(RoundRobinRounds(0), IsEmpty());
  EXPECT_THAT(RoundRobinRounds(1), IsEmpty());
  EXPECT_THAT(RoundRobinRounds(2), ElementsAre(ElementsAre(std::pair{0, 1})));
}

// What a made-up fleet measures for a group in a pass.
struct Measured {
  v1::TaskState state = v1::TASK_STATE_SUCCEEDED;
  double busbw = 10;
  std::string reason;
};
using Fleet = std::function<Measured(const std::vector<std::string>& members, int pass)>;

std::vector<std::string> Nodes(int n) {
  std::vector<std::string> nodes;
  for (int i = 1; i <= n; ++i) nodes.push_back("n" + std::to_string(i));
  return nodes;
}

bool Has(const std::vector<std::string>& members, const std::string& node) {
  return std::find(members.begin(), members.end(), node) != members.end();
}

// A node whose NIC is slow: every group with it runs at 2 GBps.
Fleet SlowNode(const std::string& bad) {
  return [bad](const std::vector<std::string>& m, int) {
    return Measured{v1::TASK_STATE_SUCCEEDED, Has(m, bad) ? 2.0 : 10.0, ""};
  };
}

// A slow path between two nodes: only a group holding both is slow.
Fleet SlowLink(const std::string& a, const std::string& b) {
  return [a, b](const std::vector<std::string>& m, int) {
    return Measured{v1::TASK_STATE_SUCCEEDED, Has(m, a) && Has(m, b) ? 3.0 : 10.0, ""};
  };
}

struct Outcome {
  v1::IsolationVerdict verdict;
  std::vector<v1::GroupResult> done;
  int passes = 0;
};

// Runs the passes as the controller does: plan, run every group, ask again.
Outcome Drive(const v1::GroupOptions& options, const std::vector<std::string>& nodes,
              const Fleet& fleet) {
  Outcome out;
  for (int guard = 0; guard < 20; ++guard) {
    const IsolationPass pass = NextIsolationPass(options, nodes, out.done);
    if (pass.groups.empty()) break;
    ++out.passes;
    EXPECT_EQ(pass.pass, out.passes);
    const v1::IsolationVerdict running = JudgeIsolationResults(options, nodes, out.done);
    EXPECT_FALSE(running.complete()) << running.summary();
    for (const auto& members : pass.groups) {
      const Measured m = fleet(members, pass.pass);
      v1::GroupResult g;
      g.set_group_id("g" + std::to_string(out.done.size()));
      for (const auto& n : members) g.add_members(n);
      g.set_pass(pass.pass);
      g.set_state(m.state);
      g.set_reason(m.reason);
      if (m.state == v1::TASK_STATE_SUCCEEDED) g.set_busbw_gbps(m.busbw);
      out.done.push_back(g);
    }
  }
  out.verdict = JudgeIsolationResults(options, nodes, out.done);
  EXPECT_TRUE(out.verdict.complete()) << out.verdict.summary();
  EXPECT_EQ(out.verdict.pair_tests(), static_cast<int>(out.done.size()));
  return out;
}

v1::GroupOptions Isolate() {
  v1::GroupOptions options;
  options.set_mode(v1::GROUP_MODE_ISOLATE);
  return options;
}

v1::GroupOptions Bisect() {
  v1::GroupOptions options = Isolate();
  options.set_bisect(true);
  return options;
}

std::vector<std::string> Names(const google::protobuf::RepeatedPtrField<std::string>& names) {
  return {names.begin(), names.end()};
}

TEST(IsolationTest, FirstPassIsEveryPairInRounds) {
  const IsolationPass pass = NextIsolationPass(Isolate(), Nodes(4), {});
  EXPECT_EQ(pass.pass, 1);
  // Round by round: disjoint pairs next to each other.
  ASSERT_EQ(pass.groups.size(), 6u);
  std::set<std::set<std::string>> pairs;
  for (const auto& g : pass.groups) {
    ASSERT_EQ(g.size(), 2u);
    pairs.insert({g[0], g[1]});
  }
  EXPECT_EQ(pairs.size(), 6u);
  EXPECT_THAT(pass.groups[0], ElementsAre("n1", "n4"));
  EXPECT_THAT(pass.groups[1], ElementsAre("n2", "n3"));
}

TEST(IsolationTest, HealthyFleetPassesInOnePass) {
  const Outcome out = Drive(Isolate(), Nodes(6), SlowNode("none"));
  EXPECT_EQ(out.passes, 1);
  EXPECT_EQ(out.verdict.pair_tests(), 15);
  EXPECT_THAT(Names(out.verdict.bad_nodes()), IsEmpty());
  EXPECT_THAT(out.verdict.bad_links(), IsEmpty());
  EXPECT_DOUBLE_EQ(out.verdict.expected_busbw_gbps(), 10);
  EXPECT_EQ(out.verdict.expectation_source(), "median over 6 nodes of each node's best pair");
  EXPECT_DOUBLE_EQ(out.verdict.threshold(), kDefaultIsolationThreshold);
  EXPECT_THAT(out.verdict.summary(), HasSubstr("all 6 nodes pass"));
}

TEST(IsolationTest, NamesTheSlowNodeAndClearsItsPartners) {
  for (int n : {3, 4, 5, 8}) {
    SCOPED_TRACE(n);
    const Outcome out = Drive(Isolate(), Nodes(n), SlowNode("n3"));
    EXPECT_EQ(out.passes, 2);
    EXPECT_THAT(Names(out.verdict.bad_nodes()), ElementsAre("n3"));
    EXPECT_THAT(out.verdict.bad_links(), IsEmpty());
    // Everyone met n3 in pass 1, so everyone was a suspect; all but n3 cleared.
    std::vector<std::string> others;
    for (const auto& node : Nodes(n)) {
      if (node != "n3") others.push_back(node);
    }
    EXPECT_EQ(Names(out.verdict.cleared()), others);
    EXPECT_THAT(out.verdict.summary(), HasSubstr("bad node n3 (with "));
    EXPECT_THAT(out.verdict.summary(), HasSubstr("2.00 GBps"));
  }
}

// A median of the pairs would miss these: with 4 nodes a node at 0.7x is in
// half the pairs, which drags the pairs' median to 0.85x and the bar to
// 0.68x; the median of the nodes' best pairs stays at the healthy 10.
TEST(IsolationTest, AMildlySlowNodeAmongFourIsNamed) {
  const Fleet mild = [](const std::vector<std::string>& m, int) {
    return Measured{v1::TASK_STATE_SUCCEEDED, Has(m, "n2") ? 7.0 : 10.0, ""};
  };
  const Outcome out = Drive(Isolate(), Nodes(4), mild);
  EXPECT_DOUBLE_EQ(out.verdict.expected_busbw_gbps(), 10);
  EXPECT_EQ(out.verdict.expectation_source(), "median over 4 nodes of each node's best pair");
  EXPECT_THAT(Names(out.verdict.bad_nodes()), ElementsAre("n2"));
}

TEST(IsolationTest, SecondPassGivesEachSuspectTwoDifferentGoodPartners) {
  const auto nodes = Nodes(6);
  std::vector<v1::GroupResult> done = Drive(Isolate(), nodes, SlowLink("n2", "n5")).done;
  std::map<std::string, std::set<std::string>> partners;
  for (const auto& g : done) {
    if (g.pass() != 2) continue;
    partners[g.members(0)].insert(g.members(1));
    partners[g.members(1)].insert(g.members(0));
  }
  // n2 and n5 each with two partners other than each other, and once more
  // together (the link re-run).
  for (const std::string s : {"n2", "n5"}) {
    std::set<std::string> others = partners[s];
    EXPECT_TRUE(others.contains(s == std::string("n2") ? "n5" : "n2"));
    others.erase("n2");
    others.erase("n5");
    EXPECT_EQ(others.size(), 2u) << s;
  }
}

TEST(IsolationTest, SecondPassSharesPairsBetweenSuspects) {
  // One slow node among 8 makes all 8 suspects; each still gets two
  // partners, but a pair serves both its ends: 9 pass-2 tests, not 16.
  const Outcome slow_node = Drive(Isolate(), Nodes(8), SlowNode("n3"));
  EXPECT_EQ(slow_node.verdict.pair_tests(), 28 + 9);
  std::map<std::string, int> pairs_of;
  for (const auto& g : slow_node.done) {
    if (g.pass() != 2) continue;
    for (const auto& m : g.members()) ++pairs_of[m];
  }
  for (const auto& node : Nodes(8)) EXPECT_GE(pairs_of[node], 2) << node;
  // A slow link: two partners for each end and the pair once more.
  EXPECT_EQ(Drive(Isolate(), Nodes(8), SlowLink("n1", "n2")).verdict.pair_tests(), 28 + 5);
}

TEST(IsolationTest, NamesTheSlowLinkAndNeitherEnd) {
  for (int n : {3, 4, 7, 8}) {
    SCOPED_TRACE(n);
    const Outcome out = Drive(Isolate(), Nodes(n), SlowLink("n1", "n2"));
    EXPECT_THAT(Names(out.verdict.bad_nodes()), IsEmpty());
    ASSERT_EQ(out.verdict.bad_links_size(), 1);
    EXPECT_EQ(out.verdict.bad_links(0).node_a(), "n1");
    EXPECT_EQ(out.verdict.bad_links(0).node_b(), "n2");
    EXPECT_DOUBLE_EQ(out.verdict.bad_links(0).busbw_gbps(), 3);
    EXPECT_THAT(Names(out.verdict.cleared()), ElementsAre("n1", "n2"));
    EXPECT_THAT(out.verdict.summary(), HasSubstr("bad link n1-n2"));
  }
}

TEST(IsolationTest, ASlowPairThatDoesNotRepeatIsCleared) {
  // n2-n4 was slow once (a neighbour's backup): it passes when run again.
  const Outcome out = Drive(Isolate(), Nodes(5), [](const std::vector<std::string>& m, int pass) {
    const bool slow = pass == 1 && Has(m, "n2") && Has(m, "n4");
    return Measured{v1::TASK_STATE_SUCCEEDED, slow ? 1.0 : 10.0, ""};
  });
  EXPECT_THAT(Names(out.verdict.bad_nodes()), IsEmpty());
  EXPECT_THAT(out.verdict.bad_links(), IsEmpty());
  EXPECT_THAT(Names(out.verdict.cleared()), ElementsAre("n2", "n4"));
  EXPECT_THAT(out.verdict.summary(), HasSubstr("no bad node or link"));
}

TEST(IsolationTest, ANodeSlowOnlyInThePassOneNamesNoLink) {
  // n2 was slow with everyone in pass 1 (a backup on its host), then fine:
  // everyone is cleared, and none of its pass-1 pairs is called a link.
  const Outcome out = Drive(Isolate(), Nodes(5), [](const std::vector<std::string>& m, int pass) {
    return Measured{v1::TASK_STATE_SUCCEEDED, pass == 1 && Has(m, "n2") ? 1.0 : 10.0, ""};
  });
  EXPECT_THAT(Names(out.verdict.bad_nodes()), IsEmpty());
  EXPECT_THAT(out.verdict.bad_links(), IsEmpty());
  EXPECT_EQ(Names(out.verdict.cleared()), Nodes(5));
}

TEST(IsolationTest, APairThatFailedOutrightCountsAsFailingWithItsReason) {
  const Outcome out = Drive(Isolate(), Nodes(5), [](const std::vector<std::string>& m, int) {
    if (Has(m, "n5")) return Measured{v1::TASK_STATE_FAILED, 0, "n5 did not arrive"};
    return Measured{};
  });
  EXPECT_THAT(Names(out.verdict.bad_nodes()), ElementsAre("n5"));
  EXPECT_THAT(out.verdict.summary(), HasSubstr("failed: n5 did not arrive"));
}

TEST(IsolationTest, TwoSlowNodesAreBothNamed) {
  const Outcome out = Drive(Isolate(), Nodes(8), [](const std::vector<std::string>& m, int) {
    return Measured{v1::TASK_STATE_SUCCEEDED, Has(m, "n2") || Has(m, "n7") ? 2.0 : 10.0, ""};
  });
  EXPECT_THAT(Names(out.verdict.bad_nodes()), ElementsAre("n2", "n7"));
  EXPECT_THAT(out.verdict.bad_links(), IsEmpty());
}

TEST(IsolationTest, ThresholdIsAParameter) {
  // 7.5 of 10 fails at the default (0.8x) but not at threshold 0.3 (0.7x).
  Fleet mild = [](const std::vector<std::string>& m, int) {
    return Measured{v1::TASK_STATE_SUCCEEDED, Has(m, "n1") ? 7.5 : 10.0, ""};
  };
  EXPECT_THAT(Names(Drive(Isolate(), Nodes(6), mild).verdict.bad_nodes()), ElementsAre("n1"));
  v1::GroupOptions loose = Isolate();
  loose.set_threshold(0.3);
  const Outcome out = Drive(loose, Nodes(6), mild);
  EXPECT_THAT(Names(out.verdict.bad_nodes()), IsEmpty());
  EXPECT_DOUBLE_EQ(out.verdict.threshold(), 0.3);
  EXPECT_EQ(out.passes, 1);
}

TEST(IsolationTest, AnExplicitExpectationEveryPairMissesNamesNoNode) {
  v1::GroupOptions options = Isolate();
  options.set_expect_busbw_gbps(40);
  const Outcome out = Drive(options, Nodes(4), SlowNode("none"));
  EXPECT_EQ(out.verdict.expectation_source(), "--expect-busbw");
  EXPECT_DOUBLE_EQ(out.verdict.expected_busbw_gbps(), 40);
  EXPECT_THAT(Names(out.verdict.bad_nodes()), IsEmpty());
  EXPECT_THAT(out.verdict.summary(), HasSubstr("no node passed"));
}

TEST(IsolationTest, NoPairSucceededSaysWhy) {
  const Outcome out = Drive(Isolate(), Nodes(3), [](const std::vector<std::string>&, int) {
    return Measured{v1::TASK_STATE_FAILED, 0, "gloo: connection refused"};
  });
  EXPECT_EQ(out.passes, 1);
  EXPECT_THAT(out.verdict.summary(), HasSubstr("no pair of the first pass succeeded"));
  EXPECT_THAT(out.verdict.summary(), HasSubstr("connection refused"));
}

TEST(IsolationTest, IncompleteWhileAPassRuns) {
  const auto nodes = Nodes(4);
  IsolationPass first = NextIsolationPass(Isolate(), nodes, {});
  std::vector<v1::GroupResult> done(1);
  done[0].set_pass(1);
  for (const auto& n : first.groups[0]) done[0].add_members(n);
  done[0].set_state(v1::TASK_STATE_SUCCEEDED);
  done[0].set_busbw_gbps(10);
  const v1::IsolationVerdict v = JudgeIsolationResults(Isolate(), nodes, done);
  EXPECT_FALSE(v.complete());
  EXPECT_EQ(v.summary(), "pass 1 running: 1 of 6 pairs ended");
  // Mid-pass there is nothing new to plan.
  EXPECT_THAT(NextIsolationPass(Isolate(), nodes, done).groups, IsEmpty());
}

// The controller's view of a run judges every group it has, the running
// ones too: a group still queued or running has not ended, so it neither
// fails the first pass nor counts toward it. (The demo printed "no pair of
// the first pass succeeded ... (paris-1-tokyo-1 running)" mid-pass.)
TEST(IsolationTest, GroupsStillQueuedOrRunningHaveNotEnded) {
  const auto nodes = Nodes(3);
  const IsolationPass first = NextIsolationPass(Isolate(), nodes, {});
  ASSERT_EQ(first.groups.size(), 3u);
  std::vector<v1::GroupResult> all;
  const v1::TaskState states[] = {v1::TASK_STATE_SUCCEEDED, v1::TASK_STATE_RUNNING,
                                  v1::TASK_STATE_QUEUED};
  for (size_t i = 0; i < first.groups.size(); ++i) {
    v1::GroupResult& g = all.emplace_back();
    g.set_pass(1);
    for (const auto& n : first.groups[i]) g.add_members(n);
    g.set_state(states[i]);
    if (i == 0) g.set_busbw_gbps(10);
  }
  const v1::IsolationVerdict v = JudgeIsolationResults(Isolate(), nodes, all);
  EXPECT_FALSE(v.complete());
  EXPECT_EQ(v.summary(), "pass 1 running: 1 of 3 pairs ended");
  all[0].set_state(v1::TASK_STATE_RUNNING);  // none ended yet: still running, not "none succeeded"
  EXPECT_EQ(JudgeIsolationResults(Isolate(), nodes, all).summary(),
            "pass 1 running: 0 of 3 pairs ended");
}

TEST(IsolationTest, BisectionNamesTheSlowNodeWithFewerTests) {
  const Outcome out = Drive(Bisect(), Nodes(8), SlowNode("n6"));
  EXPECT_THAT(Names(out.verdict.bad_nodes()), ElementsAre("n6"));
  EXPECT_EQ(out.verdict.expectation_source(), "best of 2 first-pass groups");
  // Halves of 8, then of 4, then the 2 suspects re-paired twice each.
  EXPECT_EQ(out.passes, 3);
  EXPECT_LT(out.verdict.pair_tests(), 28);
  EXPECT_EQ(out.verdict.pair_tests(), 2 + 2 + 4 + 1);  // + the failing pair again
  EXPECT_THAT(Names(out.verdict.cleared()), ElementsAre("n5"));
}

TEST(IsolationTest, BisectionNamesALinkWithinAFailingPair) {
  const Outcome out = Drive(Bisect(), Nodes(8), SlowLink("n1", "n2"));
  EXPECT_THAT(Names(out.verdict.bad_nodes()), IsEmpty());
  ASSERT_EQ(out.verdict.bad_links_size(), 1);
  EXPECT_EQ(out.verdict.bad_links(0).node_a(), "n1");
}

TEST(IsolationTest, BisectionSaysWhenTheFaultLiesBetweenHalves) {
  // n1-n3 is slow: the first half (n1..n4) fails, its halves n1,n2 and
  // n3,n4 both pass.
  const Outcome out = Drive(Bisect(), Nodes(8), SlowLink("n1", "n3"));
  EXPECT_THAT(Names(out.verdict.bad_nodes()), IsEmpty());
  EXPECT_THAT(out.verdict.summary(), HasSubstr("n1,n2,n3,n4 failed together but each half passed"));
}

}  // namespace
}  // namespace fleetbench::diagnosis
