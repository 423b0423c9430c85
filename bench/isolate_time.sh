#!/usr/bin/env bash
# bench/isolate_time.sh — time to an --isolate verdict on N nodes in network
# namespaces on this machine: the end-to-end test's slow-node
# scenario (every node sends at 800 Mbit/s, n3 at 200 Mbit/s; 4 MiB gloo
# all-reduce per pair) on a larger fleet. Prints the time to the verdict,
# the pair tests it took and the verdict, against the N(N-1)/2 pairs of
# the first pass. Needs root (namespaces, tc). docs/collectives.md, "Time to
# a verdict, measured", has what it printed.
#   bench/isolate_time.sh BUILD_DIR [NODES, default 8]
set -euo pipefail
BUILD=${1:?usage: $0 BUILD_DIR [NODES]}
NODES=${2:-8}
FLEETBENCH_ISOLATE_NODES=$NODES "$BUILD/tests/gloo_group_e2e_test" \
  --gtest_filter='*IsolateNamesTheSlowNode*' | grep -E "^isolate|^bad node|^pass|OK|FAILED"
echo "all pairs of $NODES nodes: $((NODES * (NODES - 1) / 2))"
