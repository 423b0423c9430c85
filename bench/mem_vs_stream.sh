#!/usr/bin/env bash
# bench/mem_vs_stream.sh — the "mem" plugin against John McCalpin's stream.c,
# compiled here with the same compiler flags as the plugin's kernels
# (agent/benchmarks/stream/stream_kernels.h), the same array size, repetitions
# and threads (OpenMP threads bound to cores, as the plugin pins its own);
# alternating rounds, median ratio plugin/stream.c of the best rates and
# min-max, per kernel.
#
# stream.c is not in this repository (not ours to copy): give its path.
# Builds nothing of ours. Usage:
#   STREAM_C=/path/to/stream.c bench/mem_vs_stream.sh PATH/TO/host_bench_cli
# Environment (defaults in brackets):
#   ROUNDS [5]  THREADS [nproc]  ARRAY_MIB [100]  REPETITIONS [10]
#       ARRAY_MIB is not a power of two on purpose: stream.c's three arrays
#       are adjacent globals, so at 128 MiB they lie exactly 2^27 bytes
#       apart and its copy loop (alone of the four) runs at ~60% of its
#       scale loop's rate on this VM (docs/fidelity.md, Memory bandwidth) —
#       an artefact of that layout, not of memory.
#   KERNELS ["copy triad"]
#   REF_CFLAGS ["-O2 -fopenmp -fno-tree-loop-distribute-patterns"]: the
#       plugin's RelWithDebInfo -O2 plus the kernels' flag. "-O2 -fopenmp"
#       shows stream.c as GCC 12 makes it by default (its copy a memcpy).
#   CONTROL [0] 1: the plugin's column is a second stream.c run.
# Units: stream.c prints MB/s (10^6 B/s) and counts bytes as the plugin
# does; the script divides by 1000 to compare with the plugin's GB/s.
set -euo pipefail

if [[ $# -lt 1 || ! -x $1 || ! -r ${STREAM_C:-} ]]; then
  echo "usage: STREAM_C=/path/to/stream.c $0 PATH/TO/host_bench_cli" >&2
  exit 2
fi
cli=$1
rounds=${ROUNDS:-5}
threads=${THREADS:-$(nproc)}
array_mib=${ARRAY_MIB:-100}
reps=${REPETITIONS:-10}
kernels=${KERNELS:-"copy triad"}
cflags=${REF_CFLAGS:-"-O2 -fopenmp -fno-tree-loop-distribute-patterns"}
control=${CONTROL:-0}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

elements=$((array_mib * 1048576 / 8))
# shellcheck disable=SC2086
gcc $cflags -DSTREAM_ARRAY_SIZE=$elements -DNTIMES=$reps "$STREAM_C" -o "$work/stream"
if objdump -d "$work/stream" | grep -q 'call.*mem\(cpy\|move\)@plt\|jmp.*mem\(cpy\|move\)@plt'; then
  echo "note: this stream.c build copies with memcpy/memmove ($cflags)" >&2
fi

stream_run() {  # -> "copy GBps triad GBps ..."
  OMP_NUM_THREADS=$threads OMP_PROC_BIND=true OMP_PLACES=cores "$work/stream" |
    awk '/^(Copy|Scale|Add|Triad):/ {k = tolower(substr($1, 1, length($1) - 1)); printf "%s %.6f ", k, $2 / 1000}'
}
plugin_run() {
  local out
  out=$("$cli" mem threads="$threads" array_mib="$array_mib" repetitions="$reps" 2>/dev/null)
  for k in copy scale add triad; do
    printf "%s %s " "$k" "$(python3 "$here/sample_values.py" "mem.$k.GBps" <<<"$out")"
  done
}
pick() {  # "k v k v ..." kernel -> v
  awk -v want="$2" '{for (i = 1; i < NF; i += 2) if ($i == want) print $(i + 1)}' <<<"$1"
}

lines=$work/lines
for ((round = 1; round <= rounds; round++)); do
  if ((control)); then ours_fn=stream_run; else ours_fn=plugin_run; fi
  if ((round % 2)); then
    ours=$($ours_fn); ref=$(stream_run)
  else
    ref=$(stream_run); ours=$($ours_fn)
  fi
  for k in $kernels; do
    echo "mem_${k}_${threads}t $round $(pick "$ours" "$k") $(pick "$ref" "$k")" | tee -a "$lines"
  done
done
echo
echo "plugin/stream.c (best GB/s, $threads threads, $array_mib MiB arrays, $cflags)$( ((control)) && echo ' -- CONTROL: stream.c/stream.c')"
python3 "$here/ratio_summary.py" < "$lines"
