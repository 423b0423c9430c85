#!/usr/bin/env bash
# The main job, end to end on one machine: install what is missing, build,
# start a controller on an embedded SQLite file and three local agents with
# different labels, import a price catalog (one agent's label overrides it),
# run the quick suite, a collective over all three agents as one group and
# --isolate over their pairs, print the findings, the rankings, a cost of
# work, the team's own workload ranked by its cost, the interruption
# record and a rank at a job size, and a few Prometheus series.
set -euo pipefail
cd "$(dirname "$0")/.."
./deploy/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target fleetbench
FB="$BUILD_DIR/cli/fleetbench"

STATE=${FLEETBENCH_DEMO_DIR:-$PWD/.fleetbench/demo}
mkdir -p "$STATE"
DB="$STATE/history.db"
PORT=${FLEETBENCH_DEMO_PORT:-7070}
HTTP="127.0.0.1:$((PORT + 1))"
export FLEETBENCH_CONTROLLER="127.0.0.1:$PORT"
export FLEETBENCH_TOKEN_FILE="$STATE/token"
[ -s "$FLEETBENCH_TOKEN_FILE" ] || (umask 077; head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$FLEETBENCH_TOKEN_FILE")

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

# The controller prints "listening PORT" once it serves; wait for that line.
coproc CONTROLLER { exec "$FB" controller --listen "$FLEETBENCH_CONTROLLER" --http-listen "$HTTP" --db "$DB" 2>>"$STATE/controller.log"; }
pids+=("$CONTROLLER_PID")
read -r -t 30 line <&"${CONTROLLER[0]}" || { echo "controller did not start; see $STATE/controller.log" >&2; exit 1; }
echo "controller: $line (log $STATE/controller.log)"
# TLS by default (docs/security.md): the controller made a CA beside its
# database on first start; the CLI and the agents check it with that CA.
export FLEETBENCH_CA="$DB.tls/ca.pem"
grep -h "^TLS: " "$STATE/controller.log" | tail -n 1 || true

# Each agent enrolls once: it makes its key in its state folder, the
# controller signs a certificate for its name, and from then on it connects
# with that certificate (mTLS) instead of the shared token. Enrolling takes
# an enrollment token, or an admin's: here the demo's shared one.
ENROLL_TOKEN_FILE="$FLEETBENCH_TOKEN_FILE"
# The team's own workload (docs/workloads.md): each agent's operator declares
# it; a run can only name it. Here a data-preparation step from
# deploy/workloads/, its manifest pointed at this checkout.
mkdir -p "$STATE/workloads"
sed "s|/opt/fleetbench/workloads/|$PWD/deploy/workloads/|" deploy/workloads/json_records.json \
  > "$STATE/workloads/json_records.json"
start_agent() {
  local name=$1; shift
  "$FB" agent --name "$name" --state-dir "$STATE/agent-$name" --enroll-token-file "$ENROLL_TOKEN_FILE" \
    --workload-dir "$STATE/workloads" "$@" 2>>"$STATE/agent-$name.log" &
  pids+=("$!")
}
# tokyo-1's price label overrides the catalog; the others are priced by it.
start_agent tokyo-1 --label provider=acme --label region=ap-tokyo --label instance_type=c6.large --label price_per_hour=0.34
start_agent ohio-1  --label provider=acme --label region=us-ohio  --label instance_type=c6.large
start_agent paris-1 --label provider=zeta --label region=eu-paris --label instance_type=z2.std   --label spot=true
# The CLI on the controller's host may use its local socket: no TLS
# handshake, the same token (docs/security.md, "The local socket").
[ -S "$DB.sock" ] && export FLEETBENCH_CONTROLLER="unix:$DB.sock"
"$FB" prices import deploy/prices.example.csv
"$FB" prices list

for _ in $(seq 1 100); do
  online=$("$FB" nodes --json | grep -c '"status": "NODE_STATUS_ONLINE"' || true)
  [ "$online" -ge 3 ] && break
  sleep 0.2
done
"$FB" nodes
echo
# The three "nodes" share this machine: measure one at a time.
"$FB" run --suite quick --max-parallel 1 --wait
echo
# All-reduce across the three agents as one group: gloo over TCP, the
# controller as the rendezvous (docs/collectives.md); then --isolate: every
# pair once, suspects re-paired with nodes that passed. Exit 3 would mean a
# bad node or link was named: on one shared machine that is noise, not a
# fault, so the demo goes on.
"$FB" run --bench allreduce --param allreduce.backend=gloo --param allreduce.max_bytes=16M --group --wait
echo
"$FB" run --bench allreduce --param allreduce.backend=gloo --param allreduce.min_bytes=16M \
  --param allreduce.max_bytes=16M --isolate --wait || [ $? -eq 3 ]
echo
# What fleetbench concludes about each node, and why (docs/findings.md).
"$FB" findings
echo
"$FB" rank --metric gemm.cpu.fp32.tflops --by node
echo
"$FB" rank --metric gemm.cpu.fp32.tflops --by instance_type --price spot
echo
"$FB" rank --profile cpu
echo
"$FB" cost --metric gemm.cpu.fp32.tflops --work 1e15
echo
# The workload, by name, one node at a time; ranked and costed in its own
# unit (records), from the metric line it printed.
"$FB" run --bench workload --param workload.name=json_records --param workload.records=5000 \
  --param workload.rounds=3 --max-parallel 1 --wait
echo
"$FB" rank --metric workload.json_records.records_per_s --by instance_type
echo
"$FB" cost --metric workload.json_records.records_per_s --work 1e9 --by instance_type
echo
# How often each instance type was interrupted per node-hour online (a
# fresh demo has minutes of record: "not enough data"), and the workload
# ranked for a 64-node job, each type's goodput from that record
# (docs/reliability.md, docs/ranking.md "Goodput").
"$FB" reliability --by instance_type
echo
"$FB" rank --metric workload.json_records.records_per_s --by instance_type --job-nodes 64
echo
# What the workload printed besides its metric, stored with each task.
RUN=$("$FB" runs --limit 1 --json | sed -n 's/.*"run_id": "\([^"]*\)".*/\1/p' | head -n 1)
"$FB" results "$RUN" --log | sed -n '/^--- log of/,$p' | head -n 7
echo
# The same numbers as Prometheus scrapes them (docs/operations.md).
curl -fsS -H "Authorization: Bearer $(cat "$FLEETBENCH_TOKEN_FILE")" "http://$HTTP/metrics" |
  grep -E '^fleetbench_(gemm_cpu_fp32|allreduce_gloo_busbw|agents_connected)' | head -n 6 || true
echo
echo "dashboard: http://$HTTP/ while the controller runs (log in with the token in $FLEETBENCH_TOKEN_FILE; docs/dashboard.md)"
echo "history: $DB (sqlite3 $DB 'select count(*) from samples')"
