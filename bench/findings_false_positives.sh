#!/usr/bin/env bash
# bench/findings_false_positives.sh — how many warning or critical findings a
# healthy fleet gets: a controller and three agents on this machine (the same
# hardware by construction, no fault made), RUNS runs of a suite one node at
# a time, and after each run `fleetbench findings --run RUN --severity
# warning` counted. A healthy fleet should get none; docs/findings.md records
# what this printed.
#
# Builds nothing; needs python3 (for the JSON). Usage:
#   bench/findings_false_positives.sh PATH/TO/fleetbench
# Settings from the environment (defaults in brackets):
#   RUNS [10]  SUITE [quick]  NODES [3]
# Prints one line per run (run id, the findings counted) and the total, and
# each counted finding's one-line summary. Exit 0 however many were counted:
# this is a measurement, not a test.
set -euo pipefail

if [[ $# -lt 1 || ! -x $1 ]]; then
  echo "usage: $0 PATH/TO/fleetbench" >&2
  exit 2
fi
FB=$(readlink -f "$1")
RUNS=${RUNS:-10}
SUITE=${SUITE:-quick}
NODES=${NODES:-3}
PY=/usr/bin/python3

WORK=$(mktemp -d /tmp/fb-falsepos.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

export FLEETBENCH_TOKEN="falsepos-$RANDOM$RANDOM"
PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ADDR="127.0.0.1:$PORT"
export FLEETBENCH_CONTROLLER=$ADDR

"$FB" controller --listen "$ADDR" --db "$WORK/history.db" >"$WORK/controller.out" 2>"$WORK/controller.err" &
PIDS+=($!)
for i in $(seq 1 "$NODES"); do
  "$FB" agent --controller "$ADDR" --name "node$i" --state-dir "$WORK/agent$i" \
    --label price_per_hour=1 >/dev/null 2>"$WORK/agent$i.err" &
  PIDS+=($!)
done

# Wait (with a deadline) until every agent is online.
online() {
  "$FB" nodes --json 2>/dev/null |
    $PY -c 'import json,sys; print(sum(n.get("status")=="NODE_STATUS_ONLINE" for n in json.load(sys.stdin).get("nodes",[])))' \
    2>/dev/null || echo 0
}
deadline=$((SECONDS + 60))
until [[ $(online) -ge $NODES ]]; do
  if ((SECONDS > deadline)); then
    echo "agents did not come online; see $WORK" >&2
    exit 1
  fi
  sleep 0.5  # polling a state other processes reach, with the deadline above
done

total=0
summaries=()
for r in $(seq 1 "$RUNS"); do
  run_id=$("$FB" run --suite "$SUITE" --max-parallel 1 --wait --json |
    $PY -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
  findings=$("$FB" findings --run "$run_id" --severity warning --json)
  count=$(echo "$findings" | $PY -c 'import json,sys; print(len(json.load(sys.stdin).get("findings",[])))')
  while IFS= read -r line; do
    [[ -n $line ]] && summaries+=("run $r: $line")
  done < <(echo "$findings" | $PY -c '
import json,sys
for f in json.load(sys.stdin).get("findings",[]):
    print(f["severity"].replace("SEVERITY_","").lower(), f["subject"]["node"], f["code"], "-", f["summary"])')
  total=$((total + count))
  echo "run $r $run_id: $count warning/critical finding(s)"
done
echo "total: $total warning/critical finding(s) over $RUNS $SUITE runs of $NODES healthy nodes"
for s in "${summaries[@]}"; do echo "  $s"; done
