// diagnosis/isolation.h — which node or which link makes a group of nodes
// scale badly (docs/collectives.md). Pure: the caller (the
// controller's group planning) runs the collectives and passes in the
// groups that ended; these functions say which groups to run next and what
// the results so far conclude. See diagnosis/finding.h for the layer's
// contract.
//
// Round-robin (the default):
//   pass 1  every pair of nodes once, in rounds of disjoint pairs (the
//           circle method), so a round runs at once;
//   judge   the expectation is --expect-busbw or, over the nodes, the
//           median of each node's best pass-1 pair (that succeeded); a
//           pair fails when it did not
//           succeed or its busbw is below (1 - threshold) x the expectation;
//           the members of failing pairs are suspects;
//   pass 2  each suspect is paired with up to two nodes that passed (a pair
//           of theirs passed), preferring nodes it has not failed with and
//           has not been tested with; each failing pair whose two ends both
//           passed a pair elsewhere is run again;
//   verdict a suspect that fails with every pass-2 partner is a bad node;
//           one that passes with every partner is cleared; a pass-1 pair
//           whose ends are both cleared and that fails again is a bad link.
// Bisection (`bisect`, for large fleets): the nodes are halved and each
// half runs as one group; a failing group of four or more is halved again,
// each pass one level, until the failing groups have two or three members;
// those members are the suspects of a last pass that pairs each with nodes
// of passing groups (and runs a failing pair again), judged as above. The expectation is --expect-busbw or
// the best pass-1 half.
#ifndef FLEETBENCH_DIAGNOSIS_ISOLATION_H_
#define FLEETBENCH_DIAGNOSIS_ISOLATION_H_

#include <string>
#include <utility>
#include <vector>

#include "fleetbench/v1/run.pb.h"

namespace fleetbench::diagnosis {

// A pair fails below (1 - kDefaultIsolationThreshold) x the expectation:
// 0.8x. Run-to-run noise of a TCP or RDMA collective at a large size is a
// few percent; a throttled link or a sick NIC costs far more than 20%.
inline constexpr double kDefaultIsolationThreshold = 0.2;

// The rounds of the circle method over nodes 0..n-1: for even n, n-1 rounds
// of n/2 disjoint pairs; for odd n, n rounds of (n-1)/2 pairs, one node idle
// in each. Every pair appears exactly once; within a pair the lower index
// comes first. Empty for n < 2.
std::vector<std::vector<std::pair<int, int>>> RoundRobinRounds(int n);

// The threshold `options` asks for: its own when set, else the default.
double IsolationThreshold(const v1::GroupOptions& options);

// The groups of the next pass to run (members in rank order) and its
// number. `done` holds the groups that ended, of every pass so far; an
// empty `groups` means no further pass is needed. For the first pass give
// an empty `done`.
struct IsolationPass {
  int pass = 0;
  std::vector<std::vector<std::string>> groups;
};
IsolationPass NextIsolationPass(const v1::GroupOptions& options,
                                const std::vector<std::string>& nodes,
                                const std::vector<v1::GroupResult>& done);

// What the groups so far conclude. complete = false while a pass is still
// running or still to run; the summary then says which.
v1::IsolationVerdict JudgeIsolationResults(const v1::GroupOptions& options,
                                           const std::vector<std::string>& nodes,
                                           const std::vector<v1::GroupResult>& done);

}  // namespace fleetbench::diagnosis

#endif  // FLEETBENCH_DIAGNOSIS_ISOLATION_H_
