#!/bin/bash
# bench/gloo_vs_torch.sh — fleetbench's gloo all-reduce against PyTorch's
# torch.distributed all_reduce with the gloo backend: the same sizes,
# iterations and warm-up, RANKS processes on loopback each, in alternating
# rounds (fleetbench, torch, torch, fleetbench, ...) so drift on the
# machine hits both. Prints both curves (median busbw per size over the rounds) and the
# ratio fleetbench/torch at the largest size (goal >= 0.95).
#
# This is the standalone comparison: bench/gloo_bench.cc drives the engine
# directly, meeting through a folder. The comparison through the product
# (agents in namespaces, a group run over the controller) needs group runs.
#
# NETNS=1 (root): each rank in its own network namespace on a bridge, with
# its own IP (10.233.0.R+1), as agents on separate hosts: both tools' ranks
# listen on that IP (torch through GLOO_SOCKET_IFNAME).
#
# PRODUCT=1 (implies NETNS=1): fleetbench's rounds go through the product:
# a controller on the bridge, one `fleetbench agent` per namespace, and each
# round one group run of `allreduce` backend=gloo over the four started
# over the gRPC API (bench/gloo_product_run.py; the members meet through the
# controller's relay). Needs the Python stubs: cmake --build build --target
# fleetbench fleetbench_python_stubs.
# SHAPE=RATE (with NETNS=1): every rank's link under tbf at RATE (e.g.
# 1gbit), so the link, not the CPU, bounds both tools.
# NICE=N: ranks run under nice -n N (e.g. -10 on a machine busy with builds).
#
# Usage: [NETNS=1] [SHAPE=RATE] [NICE=N] bench/gloo_vs_torch.sh [BUILD_DIR] [RANKS] [ROUNDS] [MIN_BYTES] [MAX_BYTES] [ITERS] [WARMUP]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
ranks=${2:-4}
rounds=${3:-3}
min_bytes=${4:-1048576}
max_bytes=${5:-268435456}
iters=${6:-20}
warmup=${7:-5}
driver=$build/bench/fleetbench_gloo_bench
[[ -x $driver ]] || { echo "gloo_vs_torch: build fleetbench_gloo_bench first ($driver)" >&2; exit 2; }
/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null ||
  { echo "gloo_vs_torch: /usr/bin/python3 has no torch (apt-get install python3-torch)" >&2; exit 2; }
work=$(mktemp -d)
product=${PRODUCT:-0}
netns=${NETNS:-0}
[[ $product == 1 ]] && netns=1
daemons=()
tag=$$
cleanup() {
  for p in "${daemons[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${daemons[@]}"; do wait "$p" 2>/dev/null || true; done
  if [[ $netns == 1 ]]; then
    for ((r = 0; r < ranks; r++)); do ip netns del "fbg$r.$tag" 2>/dev/null || true; done
    ip netns del "fbghub.$tag" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
if [[ $netns == 1 ]]; then
  hub=fbghub.$tag
  ip netns add "$hub"
  ip -n "$hub" link add br0 type bridge
  ip -n "$hub" link set br0 up
  for ((r = 0; r < ranks; r++)); do
    ns=fbg$r.$tag
    ip netns add "$ns"
    ip link add fbg0 netns "$ns" type veth peer name "h$r" netns "$hub"
    ip -n "$ns" addr add "10.233.0.$((r + 1))/24" dev fbg0
    ip -n "$ns" link set fbg0 up
    ip -n "$ns" link set lo up
    ip -n "$hub" link set "h$r" master br0
    ip -n "$hub" link set "h$r" up
    if [[ -n ${SHAPE:-} ]]; then
      ip netns exec "$ns" tc qdisc add dev fbg0 root tbf rate "$SHAPE" burst 1mb latency 50ms
      ip netns exec "$hub" tc qdisc add dev "h$r" root tbf rate "$SHAPE" burst 1mb latency 50ms
    fi
  done
fi
if [[ $product == 1 ]]; then
  fleetbench=$build/cli/fleetbench
  stubs=$build/tests/python_client/gen
  [[ -x $fleetbench && -d $stubs ]] ||
    { echo "gloo_vs_torch: build fleetbench and fleetbench_python_stubs first" >&2; exit 2; }
  # The controller stays in this namespace, on a veth into the bridge.
  ip link add "fbgr$tag" type veth peer name hr netns "$hub"
  ip addr add 10.233.0.254/24 dev "fbgr$tag"
  ip link set "fbgr$tag" up
  ip -n "$hub" link set hr master br0
  ip -n "$hub" link set hr up
  token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  (umask 077; echo "$token" > "$work/token")
  "$fleetbench" controller --listen 10.233.0.254:0 --db "$work/history.db" \
    --token-file "$work/token" > "$work/controller.out" 2> "$work/controller.log" &
  daemons+=($!)
  for ((t = 0; t < 300; t++)); do
    port=$(sed -n 's/^listening //p' "$work/controller.out")
    [[ -n $port ]] && break
    sleep 0.1
  done
  [[ -n $port ]] || { echo "gloo_vs_torch: controller did not start" >&2; exit 1; }
  nodes=""
  for ((r = 0; r < ranks; r++)); do
    ip netns exec "fbg$r.$tag" nice -n "${NICE:-0}" "$fleetbench" agent \
      --controller "10.233.0.254:$port" --name "r$r" --state-dir "$work/agent-r$r" \
      --token-file "$work/token" --ca "$work/history.db.tls/ca.pem" \
      > /dev/null 2> "$work/agent-r$r.log" &
    daemons+=($!)
    nodes+="${nodes:+,}r$r"
  done
fi
in_rank() {  # rank command...: run in the rank's namespace when NETNS=1
  local r=$1; shift
  local nice=(nice -n "${NICE:-0}")
  if [[ $netns == 1 ]]; then
    "${nice[@]}" ip netns exec "fbg$r.$tag" env GLOO_SOCKET_IFNAME=fbg0 "$@"
  else
    "${nice[@]}" "$@"
  fi
}
address_of() { if [[ $netns == 1 ]]; then echo "10.233.0.$(($1 + 1))"; else echo 127.0.0.1; fi; }

run_ranks() {  # tool round
  local tool=$1 round=$2 dir=$work/$1.$2 pids=()
  mkdir -p "$dir"
  for ((r = 0; r < ranks; r++)); do
    if [[ $tool == fleetbench && $product == 1 ]]; then
      ((r == 0)) || continue
      /usr/bin/python3 "$here/gloo_product_run.py" "$stubs" "10.233.0.254:$port" "$token" \
        "$nodes" "$min_bytes" "$max_bytes" "$iters" "$warmup" "$work/history.db.tls/ca.pem" \
        > "$dir/out.0" &
    elif [[ $tool == fleetbench ]]; then
      in_rank "$r" "$driver" "$r" "$ranks" "$dir" "$min_bytes" "$max_bytes" "$iters" \
        "$warmup" "$(address_of "$r")" > "$dir/out.$r" &
    else
      in_rank "$r" /usr/bin/python3 "$here/torch_gloo_allreduce.py" "$r" "$ranks" "$dir/store" \
        "$min_bytes" "$max_bytes" "$iters" "$warmup" > "$dir/out.$r" &
    fi
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  cp "$dir/out.0" "$work/$tool.round$round"
}

# Alternating, and which tool goes first alternates too (A B, B A, ...), so
# neither always runs on the machine the other just warmed or loaded.
for ((i = 1; i <= rounds; i++)); do
  if ((i % 2)); then
    run_ranks fleetbench "$i"
    run_ranks torch "$i"
  else
    run_ranks torch "$i"
    run_ranks fleetbench "$i"
  fi
done

/usr/bin/python3 - "$work" "$rounds" "$ranks" "$netns" "${SHAPE:-}" "$product" <<'PY'
import statistics, sys
work, rounds, ranks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def rounds_of(tool):
    out = []
    for i in range(1, rounds + 1):
        pts = {}
        for line in open("%s/%s.round%d" % (work, tool, i)):
            if not line.startswith("#"):
                b, _, _, busbw = line.split()
                pts[int(b)] = float(busbw)
        out.append(pts)
    return out
def curve(tool):
    per = {}
    for i in range(1, rounds + 1):
        for line in open("%s/%s.round%d" % (work, tool, i)):
            if line.startswith("#"):
                continue
            b, _, _, busbw = line.split()
            per.setdefault(int(b), []).append(float(busbw))
    return {b: statistics.median(v) for b, v in per.items()}
fb, th = curve("fleetbench"), curve("torch")
print("ranks=%d rounds=%d netns=%s shape=%s product=%s (median busbw per size, GB/s)" %
      (ranks, rounds, sys.argv[4], sys.argv[5] or "none", sys.argv[6]))
print("%12s %12s %12s %7s" % ("bytes", "fleetbench", "torch", "ratio"))
for b in sorted(fb):
    t = th.get(b, float("nan"))
    print("%12d %12.3f %12.3f %7.3f" % (b, fb[b], t, fb[b] / t if t else float("nan")))
largest = max(fb)
ratio = fb[largest] / th[largest]
per_round = [f[largest] / t[largest]
             for f, t in zip(rounds_of("fleetbench"), rounds_of("torch"))]
print("ratio at the largest size (%d B): %.3f [per round %.3f..%.3f] (goal >= 0.95): %s" %
      (largest, ratio, min(per_round), max(per_round),
       "met" if ratio >= 0.95 else "NOT met"))
PY
