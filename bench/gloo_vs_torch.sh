#!/bin/bash
# bench/gloo_vs_torch.sh — fleetbench's gloo all-reduce against PyTorch's
# torch.distributed all_reduce with the gloo backend: the same sizes,
# iterations and warm-up, RANKS processes on loopback each, in alternating
# rounds (fleetbench, torch, fleetbench, ...) so drift on the machine hits
# both. Prints both curves (median busbw per size over the rounds) and the
# ratio fleetbench/torch at the largest size (goal >= 0.95).
#
# This is the standalone comparison: bench/gloo_bench.cc drives the engine
# directly, meeting through a folder. The comparison through the product
# (agents in namespaces, a group run over the controller) needs group runs.
#
# Usage: bench/gloo_vs_torch.sh [BUILD_DIR] [RANKS] [ROUNDS] [MIN_BYTES] [MAX_BYTES] [ITERS] [WARMUP]
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
trap 'rm -rf "$work"' EXIT

run_ranks() {  # tool round
  local tool=$1 round=$2 dir=$work/$1.$2 pids=()
  mkdir -p "$dir"
  for ((r = 0; r < ranks; r++)); do
    if [[ $tool == fleetbench ]]; then
      "$driver" "$r" "$ranks" "$dir" "$min_bytes" "$max_bytes" "$iters" "$warmup" \
        > "$dir/out.$r" &
    else
      /usr/bin/python3 "$here/torch_gloo_allreduce.py" "$r" "$ranks" "$dir/store" \
        "$min_bytes" "$max_bytes" "$iters" "$warmup" > "$dir/out.$r" &
    fi
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  cp "$dir/out.0" "$work/$tool.round$round"
}

for ((i = 1; i <= rounds; i++)); do
  run_ranks fleetbench "$i"
  run_ranks torch "$i"
done

/usr/bin/python3 - "$work" "$rounds" "$ranks" <<'PY'
import statistics, sys
work, rounds, ranks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def curve(tool):
    per = {}
    for i in range(1, rounds + 1):
        for line in open("%s/%s.round%d" % (work, tool, i)):
            b, _, _, busbw = line.split()
            per.setdefault(int(b), []).append(float(busbw))
    return {b: statistics.median(v) for b, v in per.items()}
fb, th = curve("fleetbench"), curve("torch")
print("ranks=%d rounds=%d (median busbw per size, GB/s)" % (ranks, rounds))
print("%12s %12s %12s %7s" % ("bytes", "fleetbench", "torch", "ratio"))
for b in sorted(fb):
    t = th.get(b, float("nan"))
    print("%12d %12.3f %12.3f %7.3f" % (b, fb[b], t, fb[b] / t if t else float("nan")))
largest = max(fb)
ratio = fb[largest] / th[largest]
print("ratio at the largest size (%d B): %.3f (goal >= 0.95): %s" %
      (largest, ratio, "met" if ratio >= 0.95 else "NOT met"))
PY
