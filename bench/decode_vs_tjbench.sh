#!/usr/bin/env bash
# bench/decode_vs_tjbench.sh — the "decode" plugin's decode-only rate on one
# core against libjpeg-turbo's own benchmark, tjbench (Debian package
# libjpeg-turbo-progs), on the very same JPEG bytes; prints per-round lines
# and the median ratio plugin/tjbench with its min-max.
#
# Builds nothing. Usage:
#   bench/decode_vs_tjbench.sh PATH/TO/decode_bench_cli
# Environment (defaults in brackets):
#   SIZES ["512x512 1920x1080"]  QUALITY [90]  ROUNDS [5]  SECONDS_EACH [3]
#   CONTROL [0] 1: the plugin's column is a second tjbench run, so the
#               ratios show how far tjbench disagrees with itself here.
#
# Both decode to interleaved RGB with the accurate integer DCT, one thread,
# the same picture over and over (the plugin with images=1 and resize=none
# decodes exactly the file written by --write-jpeg: seed 1). tjbench times
# its loop for -benchtime seconds after -warmup; the plugin runs 5
# repetitions of SECONDS_EACH/5 after its own warm-up and reports the median.
# The order (plugin first or tjbench first) alternates between rounds.
set -euo pipefail

if [[ $# -lt 1 || ! -x $1 ]]; then
  echo "usage: $0 PATH/TO/decode_bench_cli" >&2
  exit 2
fi
cli=$1
sizes=${SIZES:-"512x512 1920x1080"}
quality=${QUALITY:-90}
rounds=${ROUNDS:-5}
seconds=${SECONDS_EACH:-3}
control=${CONTROL:-0}
here=$(cd "$(dirname "$0")" && pwd)
command -v tjbench >/dev/null || { echo "tjbench not found: apt-get install libjpeg-turbo-progs" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

tjbench_fps() {  # file -> frames per second
  tjbench "$1" -rgb -benchtime "$seconds" -warmup 1 -nowrite 2>&1 |
    awk '/Decompress/ && /Frame rate/ {print $(NF-1); exit}'
}

plugin_fps() {  # size -> images per second
  local per
  per=$(awk -v s="$seconds" 'BEGIN {printf "%.3f", s / 5}')
  "$cli" sizes="$1" quality="$quality" modes=one_core resize=none images=1 \
      repetitions=5 seconds="$per" 2>/dev/null |
    python3 -c '
import json, sys
text = sys.stdin.read(); dec = json.JSONDecoder(); i = 0
while i < len(text):
    while i < len(text) and text[i].isspace(): i += 1
    if i >= len(text): break
    d, i = dec.raw_decode(text, i)
    if d["metric"].endswith("one_core.images_per_s"): print(d["value"])'
}

lines=$work/lines
for size in $sizes; do
  file=$work/$size.jpg
  "$cli" --write-jpeg="$file" --size="$size" --quality="$quality" --seed=1 >/dev/null
  for ((round = 1; round <= rounds; round++)); do
    if ((control)); then ours_cmd="tjbench_fps $file"; else ours_cmd="plugin_fps $size"; fi
    if ((round % 2)); then
      ours=$($ours_cmd); ref=$(tjbench_fps "$file")
    else
      ref=$(tjbench_fps "$file"); ours=$($ours_cmd)
    fi
    echo "decode_${size}_q${quality} $round $ours $ref" | tee -a "$lines"
  done
done
echo
echo "plugin/tjbench (decode only, 1 thread, images/s)$( ((control)) && echo ' -- CONTROL: tjbench/tjbench')"
python3 "$here/ratio_summary.py" < "$lines"
