#!/usr/bin/env bash
# The NCCL group path on a GPU machine: what a run on ONE GPU
# (the lent H200) must show, as one script for one device call. Run from a
# bundle made by tools/gpu-bundle.sh (which copies this script into it), or
# from a source tree with build/cli/fleetbench:
#   tools/gpu-bundle.sh build out/gpu-bundle
#   (device) out/gpu-bundle/nccl_gpu_check.sh          # results in $OUT or ./nccl-gpu-check
# Without a GPU it runs too and fails checks 1 and 3 (checked here: the
# rest of the machinery works). A group of one is `--scaling 1`.
# A controller and two agents on loopback: g1 sees the GPU, g2 none
# (CUDA_VISIBLE_DEVICES=""). Checks, each line PASS/FAIL in summary.txt:
#   1. a group of one (g1): allreduce backend=nccl through the group path
#      (rank 0's ncclUniqueId through the controller's relay, a non-blocking
#      communicator, every op of the sweep, a clean finalize) SUCCEEDS, with
#      ranks=1, the sweep's curve and the NCCL facts of the INFO log
#      (nccl_log_version at least; with one rank NCCL opens no net channel);
#   2. a group g1+g2: g2 has no GPU and fails at once; g1 is already inside
#      ncclCommInitRankConfig waiting for rank 1 and must be CANCELLED by the
#      controller and end through ncclCommAbort within seconds (not the
#      group's deadline): the real abort path;
#   3. check 1 again on the same agent: the aborted communicator left no
#      state behind (and the INFO log is captured a second time);
#   4. two agents on the same GPU (g1 and g3, both device 0): NCCL refuses
#      two ranks on one device, and the run must FAIL with NCCL's reason in
#      well under the deadline, never hang.
# What one GPU cannot show: traffic between nodes (busbw of a group of one
# is 0), NET/IB or Socket channels and GPUDirect RDMA (nccl_gdrdma), a peer
# dying mid-collective on real NCCL, and busbw scaling; those need two GPU
# nodes.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# The binary, its libraries and the GPU module (shared with the other GPU
# script): tools/gpu-env.sh, copied into the bundle beside this one.
if [ -f "$HERE/gpu-env.sh" ]; then . "$HERE/gpu-env.sh"; else . "$HERE/../tools/gpu-env.sh"; fi
RESULTS=${OUT:-$PWD/nccl-gpu-check}
STATE=$(mktemp -d)
mkdir -p "$RESULTS"
SUMMARY="$RESULTS/summary.txt"
: > "$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
check() {  # check NAME CONDITION-COMMAND...
  local name=$1; shift
  if "$@"; then say "PASS $name"; else say "FAIL $name"; fi
}

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$STATE"; }
trap cleanup EXIT

say "nccl group check, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi -L 2>/dev/null | head -n 1)"
PORT=$((20000 + RANDOM % 20000))
export FLEETBENCH_CONTROLLER="127.0.0.1:$PORT"
export FLEETBENCH_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
coproc CONTROLLER { exec "$FB" controller --listen "$FLEETBENCH_CONTROLLER" --db "$STATE/history.db" 2>>"$RESULTS/controller.log"; }
pids+=("$CONTROLLER_PID")
read -r -t 30 _ <&"${CONTROLLER[0]}" || { say "FAIL controller did not start"; exit 1; }
export FLEETBENCH_CA="$STATE/history.db.tls/ca.pem"
start_agent() {  # start_agent NAME [ENV=VALUE...]
  local name=$1; shift
  env "$@" "$FB" agent --controller "$FLEETBENCH_CONTROLLER" --name "$name" \
    --state-dir "$STATE/agent-$name" 2>>"$RESULTS/agent-$name.log" &
  pids+=("$!")
}
start_agent g1
start_agent g2 CUDA_VISIBLE_DEVICES=
start_agent g3
for _ in $(seq 1 150); do
  [ "$("$FB" nodes --json 2>/dev/null | grep -c NODE_STATUS_ONLINE)" -ge 3 ] && break
  sleep 0.2
done
"$FB" nodes | tee -a "$SUMMARY"

SWEEP=(--param allreduce.backend=nccl --param allreduce.ops=allreduce,allgather,reducescatter
       --param allreduce.min_bytes=1M --param allreduce.max_bytes=256M)
group_run() {  # group_run FILE NODES: the run's JSON in FILE, whole seconds on stdout
  local file=$1 nodes=$2 start mode=(--group)
  # A group of one is a scaling run of size 1 (--group wants two nodes).
  [[ "$nodes" == *,* ]] || mode=(--scaling 1)
  start=$(date +%s%N)
  timeout 300 "$FB" run --bench allreduce "${SWEEP[@]}" --nodes "$nodes" "${mode[@]}" --wait --json \
    > "$RESULTS/$file" 2> "$RESULTS/$file.err"
  echo $(( ($(date +%s%N) - start) / 1000000000 ))
}
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@" 2>/dev/null; }

# 1. A group of one.
t=$(group_run one.json g1)
say "group of one: $(field "$RESULTS/one.json" 'r["state"]') in ${t}s"
field "$RESULTS/one.json" '"\n".join(f"{s[\"metric\"]} {s[\"params\"].get(\"op\")} {s[\"params\"].get(\"bytes\")} busbw={s[\"value\"]} algbw={s[\"params\"].get(\"algbw_GBps\")}" for s in r.get("samples",[]))' | tee -a "$SUMMARY"
field "$RESULTS/one.json" '{k:v for k,v in r["samples"][0]["params"].items() if k.startswith("nccl") or k in ("ranks","nodes","gpu_name","method")}' | tee -a "$SUMMARY"
check "1 group of one succeeded" [ "$(field "$RESULTS/one.json" 'r["state"]')" = RUN_STATE_SUCCEEDED ]
check "1 ranks=1" [ "$(field "$RESULTS/one.json" 'r["samples"][0]["params"]["ranks"]')" = 1 ]
check "1 NCCL INFO log read" [ -n "$(field "$RESULTS/one.json" 'r["samples"][0]["params"].get("nccl_log_version","")')" ]

# 2. g2 has no GPU: g1 waits in the non-blocking init and is aborted.
t=$(group_run two.json g1,g2)
say "g1+g2 (g2 without GPU): $(field "$RESULTS/two.json" 'r["state"]') in ${t}s"
field "$RESULTS/two.json" '"\n".join(f"{t[\"node\"]} {t[\"state\"]} {t.get(\"reason\",\"\")}" for t in r["tasks"])' | tee -a "$SUMMARY"
check "2 failed" [ "$(field "$RESULTS/two.json" 'r["state"]')" = RUN_STATE_FAILED ]
check "2 ended within 30 s" [ "$t" -lt 30 ]
check "2 g1 aborted, not hung" [ "$(field "$RESULTS/two.json" '[t["state"] for t in r["tasks"] if t["node"]=="g1"][0]')" != TASK_STATE_RUNNING ]

# 3. The same agent again.
t=$(group_run again.json g1)
say "group of one again: $(field "$RESULTS/again.json" 'r["state"]') in ${t}s"
check "3 again succeeded" [ "$(field "$RESULTS/again.json" 'r["state"]')" = RUN_STATE_SUCCEEDED ]
check "3 NCCL INFO log read again" [ -n "$(field "$RESULTS/again.json" 'r["samples"][0]["params"].get("nccl_log_version","")')" ]

# 4. Two ranks on one GPU.
t=$(group_run same_gpu.json g1,g3)
say "g1+g3 on one GPU: $(field "$RESULTS/same_gpu.json" 'r["state"]') in ${t}s: $(field "$RESULTS/same_gpu.json" 'r["groups"][0].get("reason","")')"
check "4 ended within 120 s" [ "$t" -lt 120 ]

# The single-node path still works beside it.
timeout 120 "$FB" probe --bench allreduce --param allreduce.max_bytes=64M > "$RESULTS/probe.txt" 2>&1
say "single-node probe exit $?"
grep -c '^FAIL' "$SUMMARY" | sed 's/^/failures: /' | tee -a "$SUMMARY"
