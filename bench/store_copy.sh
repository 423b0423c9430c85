#!/bin/bash
# How fast `fleetbench store copy` moves a SQLite history into PostgreSQL
# (docs/benchmarks.md, "Moving a history into PostgreSQL"), printed, never
# asserted:
#
#   bench/store_copy.sh [BUILD_DIR]
#
# Makes a history of 1,000,000 samples with the gemm plugin's per-run
# statistics as params (bench/store_bench.cc, FLEETBENCH_STORAGE_BENCH_*
# sizes it), starts a PostgreSQL server of its own in a temp folder (a Unix
# socket, fsync on as installed; as `nobody` when run as root), copies the
# history into an empty database three times (a fresh database each time)
# and prints each run's JSON line.
set -euo pipefail
build=${1:-build}
fleetbench=$build/cli/fleetbench
bindir=${FLEETBENCH_PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
work=$(mktemp -d /tmp/fleetbench-copy-bench.XXXXXX)
chmod 755 "$work"
as_pg=()
if [ "$(id -u)" = 0 ]; then
  chown nobody "$work"
  as_pg=(runuser -u nobody --)
fi
cleanup() {
  "${as_pg[@]}" "$bindir/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

FLEETBENCH_STORAGE_BENCH_STATISTICS=1 FLEETBENCH_STORAGE_BENCH_KEEP="$work/history.db" \
  "$build/bench/fleetbench_store_bench" --gtest_filter='*InsertOneMetricThenRank' \
  >"$work/store_bench.log" 2>&1
echo "history: $(du -h "$work/history.db" | cut -f1), $(grep -m1 'file size' "$work/store_bench.log")"

"${as_pg[@]}" "$bindir/initdb" -D "$work/data" -U fleetbench --auth=trust >"$work/initdb.log"
"${as_pg[@]}" "$bindir/pg_ctl" -D "$work/data" -l "$work/server.log" -w \
  -o "-k $work -c listen_addresses=''" start >/dev/null
for i in 1 2 3; do
  "${as_pg[@]}" "$bindir/createdb" -h "$work" -U fleetbench "copy$i"
  "$fleetbench" store copy --from "$work/history.db" \
    --to "postgresql://fleetbench@localhost/copy$i?host=$work" --json 2>/dev/null
done
