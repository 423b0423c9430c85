#!/usr/bin/env bash
# bench/smallfiles_vs_fio.sh — the "smallfiles" plugin and fio reading the
# same folder of small files, side by side: ours/fio ratios.
#
# Builds nothing. Usage:
#   bench/smallfiles_vs_fio.sh PATH/TO/host_bench_cli [DIR]
# DIR defaults to /var/tmp/fleetbench-smallfiles (created if missing); the
# dataset is laid out once by fio in DIR/dataset and removed at the end.
# Settings come from the environment (defaults in brackets):
#   FILES [20000]  FILE_KIB [128]  THREADS [8]  ROUNDS [5]
#   CONTROL [1] 1: every round also runs fio a second time, and the summary
#               gives fio/fio beside fleetbench/fio (the noise floor at the
#               same moment); 0: skip it.
#   FIO_PROCS [0] 1: fio's THREADS jobs run as THREADS fio processes of one
#               job each (--filename_format=sf.<job>.$filenum), started
#               together; their IOPS and bandwidth are summed, p50 is the
#               median of theirs and p99 the largest. Why: one fio with 8
#               jobs spent most of its time in futex calls between its jobs
#               (strace -f -c: 384k futex calls for 20k reads) and read at
#               half the rate its own read latency allows
#               (docs/fidelity.md, Small files against fio).
#
# The dataset: fio --nrfiles=FILES/THREADS --filesize=FILE_KIB k
# --numjobs=THREADS --create_only=1, i.e. THREADS × FILES/THREADS files named
# sf.<job>.<file> directly in the folder. The plugin reads that folder as a
# dataset (path=..., allowed by --dataset_root), all of it, in one random
# order on THREADS threads; fio's THREADS jobs each read their own
# FILES/THREADS files once, a random file at a time
# (--file_service_type=random), with one read of the whole file
# (--bs=FILE_KIB k), psync, buffered. Before every run of either tool each
# file is dropped from the page cache (posix_fadvise DONTNEED), as the
# plugin itself does and as fio's --invalidate=1 does at open. The order of
# the two tools alternates between rounds.
set -euo pipefail

if [[ $# -lt 1 || ! -x $1 ]]; then
  echo "usage: $0 PATH/TO/host_bench_cli [DIR]" >&2
  exit 2
fi
cli=$1
dir=${2:-/var/tmp/fleetbench-smallfiles}
files=${FILES:-20000}
kib=${FILE_KIB:-128}
threads=${THREADS:-8}
rounds=${ROUNDS:-5}
control=${CONTROL:-1}
per_job=$((files / threads))
python=/usr/bin/python3

for tool in fio jq "$python"; do
  command -v "$tool" >/dev/null || { echo "$0: needs $tool" >&2; exit 2; }
done
mkdir -p "$dir"
dir=$(realpath "$dir")
data=$dir/dataset
work=$(mktemp -d)
trap 'rm -rf "$work" "$data"' EXIT

fio_job=(--name=sf --directory="$data" --nrfiles="$per_job" --filesize="${kib}k"
         --numjobs="$threads" --bs="${kib}k" --rw=read --ioengine=psync --direct=0)
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r) $(fio --version) load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $data ($(findmnt -no FSTYPE,SOURCE -T "$dir" 2>/dev/null || echo '?')): $((per_job * threads)) files of ${kib} KiB, ${threads} threads"
[[ $control == 1 ]] && echo "# CONTROL: each round also runs fio a second time (fio/fio column)"
rm -rf "$data"
mkdir -p "$data"
echo "# layout: fio ${fio_job[*]} --create_only=1" >&2
fio "${fio_job[@]}" --create_only=1 >/dev/null
sync

drop_cache() {
  "$python" - "$data" <<'EOF'
import os, sys
d = sys.argv[1]
for n in os.listdir(d):
    fd = os.open(os.path.join(d, n), os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
EOF
}

run_fio() {  # out.json
  local cmd=(fio "${fio_job[@]}" --file_service_type=random --invalidate=1
             --group_reporting --percentile_list=50:99 --output-format=json)
  if [[ ${FIO_PROCS:-0} == 1 ]]; then
    run_fio_processes "$1"
    return
  fi
  echo "\$ ${cmd[*]}" >&2
  drop_cache
  "${cmd[@]}" >"$1"
}

run_fio_processes() {  # out.json: one fio per job, summed into fio's shape
  local j pids=() outs=()
  echo "\$ ${threads} x fio ${fio_job[*]/--numjobs=$threads/--numjobs=1} --filename_format=sf.J.\$filenum ..." >&2
  drop_cache
  for ((j = 0; j < threads; j++)); do
    fio --name=sf --directory="$data" --filename_format="sf.$j.\$filenum" \
      --nrfiles="$per_job" --filesize="${kib}k" --numjobs=1 --bs="${kib}k" --rw=read \
      --ioengine=psync --direct=0 --file_service_type=random --invalidate=1 \
      --percentile_list=50:99 --output-format=json >"$1.$j" &
    pids+=($!)
    outs+=("$1.$j")
  done
  wait "${pids[@]}"
  jq -s '{jobs: [{read: {
      iops: (map(.jobs[0].read.iops) | add),
      bw_bytes: (map(.jobs[0].read.bw_bytes) | add),
      clat_ns: {percentile: {
        "50.000000": (map(.jobs[0].read.clat_ns.percentile["50.000000"]) | sort | .[length / 2 | floor]),
        "99.000000": (map(.jobs[0].read.clat_ns.percentile["99.000000"]) | max)}}}}]}' \
    "${outs[@]}" >"$1"
}

run_ours() {  # out.json
  local cmd=("$cli" smallfiles --dataset_root="$data" path="$data" threads="$threads")
  echo "\$ ${cmd[*]}" >&2
  drop_cache
  "${cmd[@]}" 2>/dev/null | jq -s . >"$1"
}

fio_value() {  # json metric
  case $2 in
    files_per_s) jq -r '.jobs[0].read.iops' "$1" ;;
    MBps) jq -r '.jobs[0].read.bw_bytes / 1e6' "$1" ;;
    read_p50_us) jq -r '.jobs[0].read.clat_ns.percentile["50.000000"] / 1e3' "$1" ;;
    read_p99_us) jq -r '.jobs[0].read.clat_ns.percentile["99.000000"] / 1e3' "$1" ;;
  esac
}

ours_value() {  # json metric
  jq -r --arg m "smallfiles.$2" '.[] | select(.metric == $m) | .value' "$1"
}

# One unmeasured pass first: on a host-cached virtual disk the first reads
# after a large write pay for the host's writeback of it.
run_fio "$work/warmup.json"

rows=$work/rows
: >"$rows"
for ((round = 1; round <= rounds; round++)); do
  ours=$work/ours-$round.json
  theirs=$work/fio-$round.json
  again=$work/fio2-$round.json
  if ((round % 2 == 1)); then
    run_ours "$ours"
    run_fio "$theirs"
    [[ $control == 1 ]] && run_fio "$again"
  else
    [[ $control == 1 ]] && run_fio "$again"
    run_fio "$theirs"
    run_ours "$ours"
  fi
  for what in files_per_s MBps read_p50_us read_p99_us; do
    f=0
    [[ $control == 1 ]] && f=$(fio_value "$again" "$what")
    echo "$round $what $(ours_value "$ours" "$what") $(fio_value "$theirs" "$what") $f" >>"$rows"
  done
done

echo
echo "Per round:"
printf '| round | metric | fleetbench | fio | fleetbench/fio | fio again/fio |\n|---|---|---|---|---|---|\n'
awk '{ printf "| %s | %s | %.1f | %.1f | %.3f | %.3f |\n", $1, $2, $3, $4, ($4 > 0 ? $3 / $4 : 0), ($4 > 0 ? $5 / $4 : 0) }' "$rows"
echo
echo "Over ${rounds} round(s), fleetbench/fio per round:"
printf '| metric | fleetbench (median) | fio (median) | fleetbench/fio median | min–max | fio/fio median | min–max |\n|---|---|---|---|---|---|---|\n'
awk '
  function sort(list, v,   n, i, j, t) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] + 0 > v[j] + 0; j--) {
      t = v[j]; v[j] = v[j-1]; v[j-1] = t
    }
    return n
  }
  function median(list,   n, v) {
    n = sort(list, v)
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  function lo(list,   v) { sort(list, v); return v[1] }
  function hi(list,   n, v) { n = sort(list, v); return v[n] }
  {
    if (!($2 in ours)) order[++keys] = $2
    ours[$2] = ours[$2] " " $3; fio[$2] = fio[$2] " " $4
    if ($4 > 0) ratio[$2] = ratio[$2] " " ($3 / $4)
    if ($4 > 0 && $5 > 0) ctl[$2] = ctl[$2] " " ($5 / $4)
  }
  END {
    for (k = 1; k <= keys; k++) {
      m = order[k]
      c = (m in ctl) ? ctl[m] : " 0"
      printf "| %s | %.1f | %.1f | %.3f | %.3f–%.3f | %.3f | %.3f–%.3f |\n", m, median(ours[m]),
             median(fio[m]), median(ratio[m]), lo(ratio[m]), hi(ratio[m]), median(c), lo(c), hi(c)
    }
  }' "$rows"
