#!/usr/bin/env bash
# bench/workload_bench.sh [BUILD_DIR] — the workload plugin's two figures
# (docs/workloads.md, docs/fidelity.md "workload"):
#   overhead: a workload that only prints one metric line, from `run` to
#     its stored sample (`fleetbench run ... --wait` as a whole, whose run
#     includes dispatch, the command, the report and its ack), against the
#     same command run by hand;
#   fidelity: deploy/workloads/torch_train_step.py's samples/s through
#     fleetbench against the same script by hand, alternating, ROUNDS each
#     (needs Debian's python3-torch; skipped with the reason without it).
# One controller and one agent on loopback, TLS and an enrolled identity as
# users run them. Prints medians and ranges; builds nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
FB="$BUILD/cli/fleetbench"
ROUNDS=${ROUNDS:-7}
# torch's threads in both (the manifest's OMP_NUM_THREADS is replaced).
THREADS=${THREADS:-2}
[[ -x $FB ]] || { echo "no $FB: build it first" >&2; exit 2; }
WORK=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
(umask 077; head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$WORK/token")
export FLEETBENCH_TOKEN_FILE="$WORK/token"
mkdir -p "$WORK/workloads"
cat > "$WORK/workloads/one_line.json" <<JSON
{"command": ["/bin/echo", "FLEETBENCH_METRIC {\"name\": \"ops_per_s\", \"value\": 1, \"unit\": \"ops/s\", \"direction\": \"higher\"}"],
 "work_unit": "ops", "timeout_s": 60}
JSON
sed -e "s|/opt/fleetbench/workloads/|$PWD/deploy/workloads/|" \
    -e "s|\"OMP_NUM_THREADS\": \"[0-9]*\"|\"OMP_NUM_THREADS\": \"$THREADS\"|" \
    deploy/workloads/torch_train_step.json \
  > "$WORK/workloads/torch_train_step.json"

coproc C { exec "$FB" controller --listen 127.0.0.1:0 --db "$WORK/h.db" 2>"$WORK/controller.log"; }
pids+=("$C_PID")
read -r line <&"${C[0]}"
export FLEETBENCH_CONTROLLER="127.0.0.1:${line##* }" FLEETBENCH_CA="$WORK/h.db.tls/ca.pem"
"$FB" agent --name bench-1 --state-dir "$WORK/agent" --enroll-token-file "$WORK/token" \
  --workload-dir "$WORK/workloads" 2>"$WORK/agent.log" &
pids+=("$!")
for _ in $(seq 1 100); do
  "$FB" nodes --json 2>/dev/null | grep -q NODE_STATUS_ONLINE && break
  sleep 0.1
done

median() { sort -g | awk '{a[NR]=$1} END {m = NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.4g (%.4g-%.4g, n=%d)", m, a[1], a[NR], NR}'; }
now_ms() { date +%s%3N; }

: > "$WORK/run_ms"; : > "$WORK/hand_ms"
for _ in $(seq "$ROUNDS"); do
  t=$(now_ms); "$FB" run --bench workload --param workload.name=one_line --wait >/dev/null 2>&1
  echo $(( $(now_ms) - t )) >> "$WORK/run_ms"
  t=$(now_ms); /bin/echo 'FLEETBENCH_METRIC {}' >/dev/null; echo $(( $(now_ms) - t )) >> "$WORK/hand_ms"
done
echo "overhead: run --wait of a one-line workload: $(median < "$WORK/run_ms") ms; the command by hand: $(median < "$WORK/hand_ms") ms"

if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "fidelity: skipped: /usr/bin/python3 has no torch (apt-get install --no-install-recommends python3-torch)"
  exit 0
fi
: > "$WORK/via"; : > "$WORK/hand"
for _ in $(seq "$ROUNDS"); do
  run=$("$FB" run --bench workload --param workload.name=torch_train_step --wait --json 2>/dev/null |
        sed -n 's/.*"run_id": "\([^"]*\)".*/\1/p' | head -n 1)
  "$FB" results "$run" --json | tr -d '\n ' |
    grep -o '"metric":"workload.torch_train_step.samples_per_s","value":[0-9.e+-]*' |
    sed 's/.*"value"://' >> "$WORK/via"
  # By hand in the environment the agent gives it (its few variables and
  # the manifest's), not this shell's: an OPENBLAS_CORETYPE left in a shell
  # changes the kernels torch runs.
  env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME" OMP_NUM_THREADS="$THREADS" PYTHONUNBUFFERED=1 \
    /usr/bin/python3 deploy/workloads/torch_train_step.py |
    sed -n 's/.*"name": "samples_per_s", "value": \([0-9.e+-]*\).*/\1/p' >> "$WORK/hand"
done
echo "fidelity: torch_train_step samples/s through fleetbench: $(median < "$WORK/via"); by hand: $(median < "$WORK/hand")"
paste "$WORK/via" "$WORK/hand" | awk '{print $1 / $2}' > "$WORK/ratio"
echo "fidelity: pairs (through, by hand): $(paste -d, "$WORK/via" "$WORK/hand" | awk '{printf "%s%s", sep, $1; sep=" "}')"
echo "fidelity: ratio (through / by hand, pair by pair): $(median < "$WORK/ratio")"
