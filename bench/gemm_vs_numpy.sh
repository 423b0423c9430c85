#!/usr/bin/env bash
# bench/gemm_vs_numpy.sh — the gemm plugin against numpy's matmul (Debian's
# numpy, the same system OpenBLAS) on the same shapes, transposes, dtype and
# thread count; alternating rounds, median ratio plugin/numpy and min-max.
#
# Builds nothing. Usage:
#   bench/gemm_vs_numpy.sh PATH/TO/fleetbench_plugin_cli
# Environment (defaults in brackets):
#   CASES ["fp32:1024:1024:1024:N:N fp32:3000:3000:3000:N:N
#           fp32:4096:1024:256:N:N fp32:1024:3000:512:T:N fp32:2048:2048:2048:N:T
#           fp64:1500:1000:2000:T:T"]   dtype:m:n:k:transa:transb
#   ROUNDS [5]  MIN_SECONDS [2]  THREADS [nproc]
#   CONTROL [0] 1: the plugin's column is a second numpy run.
# numpy picks the BLAS call from the arrays' strides: a.T of a C-ordered
# array is passed to OpenBLAS as a transposed operand, so both tools make
# the same cblas_?gemm call; OPENBLAS_NUM_THREADS pins numpy's threads.
set -euo pipefail

if [[ $# -lt 1 || ! -x $1 ]]; then
  echo "usage: $0 PATH/TO/fleetbench_plugin_cli" >&2
  exit 2
fi
cli=$1
cases=${CASES:-"fp32:1024:1024:1024:N:N fp32:3000:3000:3000:N:N fp32:4096:1024:256:N:N fp32:1024:3000:512:T:N fp32:2048:2048:2048:N:T fp64:1500:1000:2000:T:T"}
rounds=${ROUNDS:-5}
min_seconds=${MIN_SECONDS:-2}
threads=${THREADS:-$(nproc)}
control=${CONTROL:-0}
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT

numpy_rate() {
  OPENBLAS_NUM_THREADS=$threads "$py" "$here/numpy_gemm.py" "$@" "$min_seconds"
}
plugin_rate() {
  local dtype=$1 m=$2 n=$3 k=$4 ta=$5 tb=$6
  "$cli" gemm dtypes="$dtype" m="$m" n="$n" k="$k" transa="$ta" transb="$tb" \
      threads="$threads" min_seconds="$min_seconds" 2>/dev/null |
    "$py" "$here/sample_values.py" "gemm.cpu.$dtype.tflops"
}

for spec in $cases; do
  IFS=: read -r dtype m n k ta tb <<<"$spec"
  for ((round = 1; round <= rounds; round++)); do
    if ((control)); then ours_fn=numpy_rate; else ours_fn=plugin_rate; fi
    if ((round % 2)); then
      ours=$($ours_fn "$dtype" "$m" "$n" "$k" "$ta" "$tb")
      ref=$(numpy_rate "$dtype" "$m" "$n" "$k" "$ta" "$tb")
    else
      ref=$(numpy_rate "$dtype" "$m" "$n" "$k" "$ta" "$tb")
      ours=$($ours_fn "$dtype" "$m" "$n" "$k" "$ta" "$tb")
    fi
    echo "gemm_${dtype}_${m}x${n}x${k}_${ta}${tb} $round $ours $ref" | tee -a "$lines"
  done
done
echo
echo "plugin/numpy (TFLOP/s, $threads threads)$( ((control)) && echo ' -- CONTROL: numpy/numpy')"
"$py" "$here/ratio_summary.py" < "$lines"
