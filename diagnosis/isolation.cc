#include "diagnosis/isolation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/api_enums.h"
#include "common/reason.h"
#include "common/stats.h"

namespace fleetbench::diagnosis {
namespace {

using Members = std::vector<std::string>;

// How many pass-2 partners each suspect gets when enough nodes passed:
// two, so one sick partner cannot condemn it alone.
constexpr int kPartnersPerSuspect = 2;
// A failure's reason as evidence stays one short clause.
constexpr size_t kReasonChars = 120;

// A group's identity within a pass: its members as a set.
std::string KeyOf(Members members) {
  std::sort(members.begin(), members.end());
  return absl::StrJoin(members, "\x1f");
}

std::string Gbps(double v) { return absl::StrFormat("%.2f GBps", v); }

// The results that ended, by pass and member set (a repeated group: the last).
// A run's view hands over every group it has; one still queued or running
// has not ended and must count neither as a result nor as a failure.
class Results {
 public:
  explicit Results(const std::vector<v1::GroupResult>& done) {
    for (const v1::GroupResult& g : done) {
      if (!IsTerminal(g.state())) continue;
      by_pass_[g.pass()][KeyOf({g.members().begin(), g.members().end()})] = &g;
    }
  }
  const v1::GroupResult* Find(int pass, const Members& members) const {
    auto p = by_pass_.find(pass);
    if (p == by_pass_.end()) return nullptr;
    auto g = p->second.find(KeyOf(members));
    return g == p->second.end() ? nullptr : g->second;
  }
  // How many of `groups` of `pass` have ended.
  int Ended(int pass, const std::vector<Members>& groups) const {
    int n = 0;
    for (const Members& m : groups) n += Find(pass, m) != nullptr;
    return n;
  }

 private:
  std::map<int, std::map<std::string, const v1::GroupResult*>> by_pass_;
};

struct Expectation {
  double busbw = 0;
  std::string source;
};

// A group fails when it did not succeed, reported no busbw, or is below
// the bar.
bool Fails(const v1::GroupResult& g, double bar) {
  return g.state() != v1::TASK_STATE_SUCCEEDED || !(g.busbw_gbps() > 0) || g.busbw_gbps() < bar;
}

// "1.20 GBps" or "failed: n3 did not arrive".
std::string OutcomeText(const v1::GroupResult& g) {
  if (g.state() == v1::TASK_STATE_SUCCEEDED && g.busbw_gbps() > 0) return Gbps(g.busbw_gbps());
  std::string text = g.state() == v1::TASK_STATE_SUCCEEDED ? "no busbw" : TaskStateName(g.state());
  if (!g.reason().empty()) absl::StrAppend(&text, ": ", TruncateReason(g.reason(), kReasonChars));
  return text;
}

// The other member of a pair.
const std::string& Other(const Members& pair, const std::string& node) {
  return pair[0] == node ? pair[1] : pair[0];
}

// What the last pass judges: each suspect's partner pairs, and the pairs
// that may be bad links with the pass they were (re)tested in.
struct Confirmation {
  int pass = 0;
  std::vector<Members> groups;                        // in plan order
  std::map<std::string, std::vector<Members>> partner_pairs;  // suspect -> pairs
  struct LinkCandidate {
    Members pair;
    const v1::GroupResult* first = nullptr;  // the failing test that made it one
    bool retested = false;                   // also run in the last pass
  };
  std::vector<LinkCandidate> links;
};

// The working state of one replay of the passes over `done`.
struct Replay {
  const v1::GroupOptions& options;
  const std::vector<std::string>& nodes;
  Results results;
  double threshold;
  std::map<std::string, int> index;  // node -> position in `nodes`

  Replay(const v1::GroupOptions& o, const std::vector<std::string>& n,
         const std::vector<v1::GroupResult>& done)
      : options(o), nodes(n), results(done), threshold(IsolationThreshold(o)) {
    for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i]] = static_cast<int>(i);
  }
};

// Each suspect with up to two partners from `good`, best first: partners it
// has not failed with (only those, when there are any), then partners with
// fewer failures of their own, not yet tested with it, carrying fewer
// pass-2 pairs so far, earlier in the node order. A pair already planned
// for another suspect is taken first when its other end fits.
void PlanPartners(const Replay& r, const std::vector<std::string>& suspects,
                  const std::vector<std::string>& good,
                  const std::map<std::string, std::set<std::string>>& failed_with,
                  const std::map<std::string, std::map<std::string, int>>& tested_with,
                  Confirmation* c) {
  std::set<std::string> planned;
  std::map<std::string, int> load;
  auto add = [&](const Members& pair) {
    if (planned.insert(KeyOf(pair)).second) {
      c->groups.push_back(pair);
      ++load[pair[0]];
      ++load[pair[1]];
    }
  };
  auto count = [](const auto& map, const std::string& key) -> size_t {
    auto it = map.find(key);
    return it == map.end() ? 0 : it->second.size();
  };
  for (const std::string& s : suspects) {
    const auto failed = failed_with.find(s);
    auto failed_together = [&](const std::string& g) {
      return failed != failed_with.end() && failed->second.contains(g);
    };
    auto tested = [&](const std::string& g) {
      auto t = tested_with.find(s);
      if (t == tested_with.end()) return 0;
      auto it = t->second.find(g);
      return it == t->second.end() ? 0 : it->second;
    };
    std::vector<std::string> candidates;
    for (const std::string& g : good) {
      if (g != s) candidates.push_back(g);
    }
    std::sort(candidates.begin(), candidates.end(), [&](const std::string& a, const std::string& b) {
      return std::make_tuple(failed_together(a), count(failed_with, a), tested(a), load[a],
                             r.index.at(a)) <
             std::make_tuple(failed_together(b), count(failed_with, b), tested(b), load[b],
                             r.index.at(b));
    });
    // A partner it failed with proves nothing against it; one is taken
    // only when nothing else passed (a node that failed with everyone).
    if (!candidates.empty() && !failed_together(candidates.front())) {
      std::erase_if(candidates, failed_together);
    }
    // A pair planned for an earlier suspect serves this one too when its
    // other end is a fit partner: fewer pair tests for the same evidence.
    auto pair_of = [&](const std::string& g) {
      return r.index.at(s) < r.index.at(g) ? Members{s, g} : Members{g, s};
    };
    std::vector<std::string> chosen;
    for (const std::string& g : candidates) {
      if (planned.contains(KeyOf(pair_of(g)))) chosen.push_back(g);
    }
    for (const std::string& g : candidates) {
      if (chosen.size() >= kPartnersPerSuspect) break;
      if (std::find(chosen.begin(), chosen.end(), g) == chosen.end()) chosen.push_back(g);
    }
    if (chosen.size() > kPartnersPerSuspect) chosen.resize(kPartnersPerSuspect);
    for (const std::string& g : chosen) {
      c->partner_pairs[s].push_back(pair_of(g));
      add(pair_of(g));
    }
  }
  for (Confirmation::LinkCandidate& link : c->links) {
    if (link.retested) add(link.pair);
  }
}

void SetIncomplete(int pass, int ended, int planned, const std::string& what,
                   v1::IsolationVerdict* v) {
  v->set_complete(false);
  v->set_summary(absl::StrCat("pass ", pass, " running: ", ended, " of ", planned, " ", what,
                              " ended"));
}

// The verdict of the last pass: bad nodes, cleared suspects, bad links.
void Judge(const Replay& r, const std::vector<std::string>& suspects, const Confirmation& c,
           double bar, v1::IsolationVerdict* v) {
  auto result_of = [&](const Members& pair) { return r.results.Find(c.pass, pair); };
  // First the suspects that fail with every partner; then the others,
  // leaving out pairs with those (a bad partner proves nothing).
  std::set<std::string> bad;
  for (const std::string& s : suspects) {
    auto it = c.partner_pairs.find(s);
    if (it == c.partner_pairs.end() || it->second.empty()) continue;
    bool all_fail = true;
    for (const Members& pair : it->second) all_fail = all_fail && Fails(*result_of(pair), bar);
    if (all_fail) bad.insert(s);
  }
  std::vector<std::string> bad_text, inconclusive;
  std::set<std::string> cleared;
  for (const std::string& s : suspects) {
    auto it = c.partner_pairs.find(s);
    std::vector<std::string> evidence;
    int passes = 0, fails = 0;
    if (it != c.partner_pairs.end()) {
      for (const Members& pair : it->second) {
        const std::string& partner = Other(pair, s);
        if (!bad.contains(s) && bad.contains(partner)) continue;
        const v1::GroupResult& g = *result_of(pair);
        (Fails(g, bar) ? fails : passes)++;
        evidence.push_back(absl::StrCat(partner, " ", OutcomeText(g)));
      }
    }
    if (bad.contains(s) || (fails > 0 && passes == 0)) {
      v->add_bad_nodes(s);
      bad_text.push_back(absl::StrCat(s, " (with ", absl::StrJoin(evidence, ", "), ")"));
    } else if (passes > 0 && fails == 0) {
      cleared.insert(s);
      v->add_cleared(s);
    } else {
      inconclusive.push_back(
          evidence.empty() ? absl::StrCat(s, " (no partner that passed)")
                           : absl::StrCat(s, " (with ", absl::StrJoin(evidence, ", "), ")"));
    }
  }
  std::vector<std::string> link_text;
  for (const Confirmation::LinkCandidate& link : c.links) {
    // Named only when it failed again: a pair whose end was slow everywhere
    // for a while (then cleared) is not a link, and it was not run again.
    if (!link.retested || !cleared.contains(link.pair[0]) || !cleared.contains(link.pair[1])) {
      continue;
    }
    const v1::GroupResult* again = result_of(link.pair);
    if (!Fails(*again, bar)) continue;  // it did not repeat
    double busbw = link.first->busbw_gbps();
    if (again->state() == v1::TASK_STATE_SUCCEEDED) {
      busbw = busbw > 0 ? std::min(busbw, again->busbw_gbps()) : again->busbw_gbps();
    }
    v1::LinkVerdict* l = v->add_bad_links();
    l->set_node_a(link.pair[0]);
    l->set_node_b(link.pair[1]);
    l->set_busbw_gbps(busbw);
    link_text.push_back(absl::StrCat(link.pair[0], "-", link.pair[1], " (",
                                     OutcomeText(*again),
                                     " together)"));
  }
  std::vector<std::string> parts;
  if (!bad_text.empty()) {
    parts.push_back(absl::StrCat(bad_text.size() == 1 ? "bad node " : "bad nodes ",
                                 absl::StrJoin(bad_text, ", "), ", below ", Gbps(bar),
                                 " with partners that passed elsewhere"));
  }
  if (!link_text.empty()) {
    parts.push_back(absl::StrCat(link_text.size() == 1 ? "bad link " : "bad links ",
                                 absl::StrJoin(link_text, ", "),
                                 ": both ends pass with other partners"));
  }
  if (!inconclusive.empty()) {
    parts.push_back(absl::StrCat("inconclusive ", absl::StrJoin(inconclusive, ", ")));
  }
  const int cleared_count = v->cleared_size();
  if (cleared_count > 0) {
    parts.push_back(absl::StrCat(cleared_count, cleared_count == 1 ? " suspect" : " suspects",
                                 " cleared (", absl::StrJoin(v->cleared(), ", "), ")"));
  }
  if (v->bad_nodes_size() > 0 || v->bad_links_size() > 0) {
    std::vector<std::string> actions;
    if (v->bad_nodes_size() > 0) {
      actions.push_back(v->bad_nodes_size() == 1 ? "leave the node out or replace it"
                                                 : "leave the nodes out or replace them");
    }
    if (v->bad_links_size() > 0) {
      actions.push_back("check the path between the link's ends (port, cable, route)");
    }
    parts.push_back(absl::StrCat(absl::StrJoin(actions, " and "), ", then run --isolate again"));
  } else if (!inconclusive.empty()) {
    parts.push_back("run --isolate again to settle them");
  } else {
    parts.insert(parts.begin(), "no bad node or link: the slow pairs of the first pass did "
                                "not fail again");
  }
  v->set_summary(absl::StrJoin(parts, "; "));
  v->set_complete(true);
}

// The expectation when the user gave none; nullopt when nothing succeeded.
std::optional<Expectation> ExpectationOf(const v1::GroupOptions& options,
                                         const std::vector<const v1::GroupResult*>& groups,
                                         bool best) {
  if (options.expect_busbw_gbps() > 0) {
    return Expectation{options.expect_busbw_gbps(), "--expect-busbw"};
  }
  std::vector<double> values;
  for (const v1::GroupResult* g : groups) {
    if (g->state() == v1::TASK_STATE_SUCCEEDED && g->busbw_gbps() > 0) {
      values.push_back(g->busbw_gbps());
    }
  }
  if (values.empty()) return std::nullopt;
  if (best) {
    return Expectation{*std::max_element(values.begin(), values.end()),
                       absl::StrCat("best of ", values.size(), " first-pass groups")};
  }
  // Each node's best pair, then the median over nodes: a node's best pair
  // is with a healthy partner unless the node itself is slow, so the figure
  // stays healthy while fewer than half the nodes are bad. The median of
  // the pairs does not: one bad node is in 2/n of them, so with 3 nodes (2
  // of 3 pairs) or 4 (3 of 6) it would be the bad node's figure.
  std::map<std::string, double> best_of_node;
  for (const v1::GroupResult* g : groups) {
    if (g->state() != v1::TASK_STATE_SUCCEEDED || !(g->busbw_gbps() > 0)) continue;
    for (const std::string& m : g->members()) {
      double& b = best_of_node[m];
      b = std::max(b, g->busbw_gbps());
    }
  }
  std::vector<double> bests;
  for (const auto& [node, b] : best_of_node) bests.push_back(b);
  return Expectation{Median(bests), absl::StrCat("median over ", bests.size(),
                                                 " nodes of each node's best pair")};
}

std::string FirstFailure(const std::vector<const v1::GroupResult*>& groups) {
  for (const v1::GroupResult* g : groups) {
    if (g->state() != v1::TASK_STATE_SUCCEEDED || !(g->busbw_gbps() > 0)) {
      return absl::StrCat(absl::StrJoin(g->members(), "-"), " ", OutcomeText(*g));
    }
  }
  return "";
}

std::vector<Members> PairsOf(const std::vector<std::string>& nodes) {
  std::vector<Members> pairs;
  for (const auto& round : RoundRobinRounds(static_cast<int>(nodes.size()))) {
    for (const auto& [a, b] : round) pairs.push_back({nodes[a], nodes[b]});
  }
  return pairs;
}

// The two halves of a group, in order; the first takes the odd member.
std::pair<Members, Members> Halves(const Members& group) {
  const size_t first = (group.size() + 1) / 2;
  return {Members(group.begin(), group.begin() + first), Members(group.begin() + first, group.end())};
}

// Replays the passes over the results so far. Returns the next pass to run
// (groups empty when none) and fills the verdict.
IsolationPass Walk(const v1::GroupOptions& options, const std::vector<std::string>& nodes,
                   const std::vector<v1::GroupResult>& done, v1::IsolationVerdict* v) {
  Replay r(options, nodes, done);
  v->set_threshold(r.threshold);
  v->set_pair_tests(static_cast<int>(done.size()));
  const bool bisect = options.bisect();
  const std::string unit = bisect ? "groups" : "pairs";

  // Pass 1.
  std::vector<Members> first;
  if (bisect) {
    auto [a, b] = Halves(nodes);
    first = {a, b};
  } else {
    first = PairsOf(nodes);
  }
  if (const int ended = r.results.Ended(1, first); ended < static_cast<int>(first.size())) {
    SetIncomplete(1, ended, static_cast<int>(first.size()), unit, v);
    return IsolationPass{1, ended == 0 ? first : std::vector<Members>{}};
  }
  std::vector<const v1::GroupResult*> first_results;
  for (const Members& m : first) first_results.push_back(r.results.Find(1, m));
  const std::optional<Expectation> expected = ExpectationOf(options, first_results, bisect);
  if (!expected) {
    v->set_complete(true);
    v->set_summary(absl::StrCat("no ", bisect ? "group" : "pair",
                                " of the first pass succeeded, so there is no expectation to "
                                "judge by (", FirstFailure(first_results),
                                "); check the agents, or give --expect-busbw"));
    return {};
  }
  v->set_expected_busbw_gbps(expected->busbw);
  v->set_expectation_source(expected->source);
  const double bar = (1 - r.threshold) * expected->busbw;

  // Who failed with whom, who passed, who was tested with whom.
  std::map<std::string, std::set<std::string>> failed_with;
  std::map<std::string, std::map<std::string, int>> tested_with;
  std::set<std::string> passed;  // in a group that passed
  std::vector<std::string> suspects;
  Confirmation c;
  std::vector<std::string> notes;
  int pass = 1;
  auto record = [&](const Members& m, const v1::GroupResult& g) {
    const bool fails = Fails(g, bar);
    for (const std::string& a : m) {
      for (const std::string& b : m) {
        if (a == b) continue;
        ++tested_with[a][b];
        if (fails) failed_with[a].insert(b);
      }
      if (!fails) passed.insert(a);
    }
    return fails;
  };
  std::set<std::string> suspect_set;
  if (!bisect) {
    for (const Members& m : first) {
      const v1::GroupResult& g = *r.results.Find(1, m);
      if (record(m, g)) c.links.push_back({m, &g, false});
    }
    for (const std::string& n : nodes) {
      if (failed_with.contains(n)) suspect_set.insert(n);
    }
    // A failing pair is run again when both ends passed a pair elsewhere:
    // only then can it be the link rather than a node.
    for (Confirmation::LinkCandidate& link : c.links) {
      link.retested = passed.contains(link.pair[0]) && passed.contains(link.pair[1]);
    }
  } else {
    // Halve failing groups of four or more, one level per pass.
    std::vector<Members> level = first;
    while (true) {
      std::vector<Members> next;
      for (const Members& m : level) {
        const v1::GroupResult& g = *r.results.Find(pass, m);
        if (!record(m, g)) continue;
        if (m.size() >= 4) {
          auto [a, b] = Halves(m);
          next.push_back(a);
          next.push_back(b);
        } else {
          for (const std::string& n : m) suspect_set.insert(n);
          // A failing pair: the link, if both ends pass elsewhere and it
          // fails again in the last pass.
          if (m.size() == 2) c.links.push_back({m, &g, true});
        }
      }
      if (next.empty()) break;
      ++pass;
      if (const int ended = r.results.Ended(pass, next); ended < static_cast<int>(next.size())) {
        SetIncomplete(pass, ended, static_cast<int>(next.size()), unit, v);
        return IsolationPass{pass, ended == 0 ? next : std::vector<Members>{}};
      }
      // A failing group whose halves both passed: the fault lies between
      // them, which halving cannot name.
      for (size_t i = 0; i + 1 < next.size(); i += 2) {
        if (!Fails(*r.results.Find(pass, next[i]), bar) &&
            !Fails(*r.results.Find(pass, next[i + 1]), bar)) {
          std::vector<std::string> all = next[i];
          all.insert(all.end(), next[i + 1].begin(), next[i + 1].end());
          notes.push_back(absl::StrCat(absl::StrJoin(all, ","),
                                       " failed together but each half passed (a link between "
                                       "the halves: run --isolate without --bisect on them)"));
        }
      }
      level = std::move(next);
    }
  }
  for (const std::string& n : nodes) {
    if (suspect_set.contains(n)) suspects.push_back(n);
  }
  if (suspects.empty()) {
    v->set_complete(true);
    v->set_summary(notes.empty()
                       ? absl::StrCat("all ", nodes.size(), " nodes pass: no ",
                                      bisect ? "group" : "pair", " below ", Gbps(bar), " (",
                                      absl::StrFormat("%.2g", 1 - r.threshold), " x ",
                                      Gbps(expected->busbw), ", ", expected->source, ")")
                       : absl::StrCat("no bad node named: ", absl::StrJoin(notes, "; ")));
    return {};
  }
  std::vector<std::string> good;
  for (const std::string& n : nodes) {
    if (passed.contains(n) && (bisect ? !suspect_set.contains(n) : true)) good.push_back(n);
  }
  if (good.empty()) {
    v->set_complete(true);
    v->set_summary(absl::StrCat("no node passed: every ", bisect ? "group" : "pair",
                                " is below ", Gbps(bar), " (", expected->source,
                                "), so no partner is known good; the fault is shared (the "
                                "network, the expectation) or every node is slow"));
    return {};
  }
  c.pass = pass + 1;
  PlanPartners(r, suspects, good, failed_with, tested_with, &c);
  if (const int ended = r.results.Ended(c.pass, c.groups);
      ended < static_cast<int>(c.groups.size())) {
    SetIncomplete(c.pass, ended, static_cast<int>(c.groups.size()),
                  absl::StrCat("pairs re-testing ", suspects.size(),
                               suspects.size() == 1 ? " suspect" : " suspects"),
                  v);
    return IsolationPass{c.pass, ended == 0 ? c.groups : std::vector<Members>{}};
  }
  Judge(r, suspects, c, bar, v);
  if (!notes.empty()) v->set_summary(absl::StrCat(v->summary(), "; ", absl::StrJoin(notes, "; ")));
  return {};
}

}  // namespace

std::vector<std::vector<std::pair<int, int>>> RoundRobinRounds(int n) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  if (n < 2) return rounds;
  // Odd n: a dummy node makes it even; whoever meets it sits the round out.
  const int m = n % 2 == 0 ? n : n + 1;
  // The circle: node m-1 stays put, the others turn one place per round.
  for (int round = 0; round < m - 1; ++round) {
    std::vector<std::pair<int, int>> pairs;
    auto add = [&](int a, int b) {
      if (a >= n || b >= n) return;  // the dummy
      pairs.emplace_back(std::min(a, b), std::max(a, b));
    };
    add(m - 1, round);
    for (int k = 1; k < m / 2; ++k) {
      add((round + k) % (m - 1), (round - k + (m - 1)) % (m - 1));
    }
    std::sort(pairs.begin(), pairs.end());
    rounds.push_back(std::move(pairs));
  }
  return rounds;
}

double IsolationThreshold(const v1::GroupOptions& options) {
  return options.threshold() > 0 ? options.threshold() : kDefaultIsolationThreshold;
}

IsolationPass NextIsolationPass(const v1::GroupOptions& options,
                                const std::vector<std::string>& nodes,
                                const std::vector<v1::GroupResult>& done) {
  v1::IsolationVerdict ignored;
  return Walk(options, nodes, done, &ignored);
}

v1::IsolationVerdict JudgeIsolationResults(const v1::GroupOptions& options,
                                           const std::vector<std::string>& nodes,
                                           const std::vector<v1::GroupResult>& done) {
  v1::IsolationVerdict verdict;
  Walk(options, nodes, done, &verdict);
  return verdict;
}

}  // namespace fleetbench::diagnosis
