#!/usr/bin/env bash
# bench/controller_start_time.sh FLEETBENCH HISTORY.db MODE
# Time from `fleetbench controller` start to its "listening" line, from a
# cold page cache (needs root: drop_caches), for a history file; MODE inline
# (checked before serving: --verify-inline-mib 1048576) or beside
# (--verify-inline-mib 0). Prints ms to listening and, beside, the check's
# own time once it logs it. A large history to try it on:
#   FLEETBENCH_STORAGE_BENCH_RUNS=10000 FLEETBENCH_STORAGE_BENCH_STATISTICS=1 \
#     FLEETBENCH_STORAGE_BENCH_KEEP=/var/tmp/h10m.db build/bench/fleetbench_store_bench \
#     --gtest_filter='*InsertOneMetric*'
set -euo pipefail
if [[ $# -ne 3 || ! -x $1 || ! -f $2 ]]; then
  echo "usage: $0 PATH/TO/fleetbench HISTORY.db inline|beside" >&2
  exit 2
fi
fb=$1 db=$2 mode=$3
token=$(mktemp); head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$token"
flag=(--verify-inline-mib 1048576); [[ $mode == beside ]] && flag=(--verify-inline-mib 0)
sync; echo 3 > /proc/sys/vm/drop_caches
log=$(mktemp)
start=$(date +%s%N)
coproc C { exec "$fb" controller --listen 127.0.0.1:0 --db "$db" "${flag[@]}" --token-file "$token" 2>"$log"; }
read -r line <&"${C[0]}"
t=$(( ($(date +%s%N) - start) / 1000000 ))
# wait for the background check to end (beside), at most 10 minutes
if [[ $mode == beside ]]; then
  for i in $(seq 6000); do grep -q "checked beside serving\|is corrupt" "$log" && break; sleep 0.1; done
fi
kill $C_PID; wait $C_PID 2>/dev/null || true
echo "$mode listening_ms=$t $(grep -o 'checked beside serving: ok ([^)]*)' "$log" || true)"
rm -f "$log" "$token"
