#!/usr/bin/env bash
# bench/disk_vs_fio.sh — runs the "disk" plugin and fio with the same
# settings, side by side, and prints ours/fio ratios.
#
# Builds nothing. Usage:
#   bench/disk_vs_fio.sh PATH/TO/host_bench_cli [SCRATCH_DIR]
# SCRATCH_DIR defaults to /var/tmp/fleetbench-fio (created if missing).
# Settings come from the environment (defaults in brackets):
#   FILE_MIB [1024]  RAMP [2]  RUNTIME [10]  JOBS [1]
#   IODEPTH [empty: the plugin's defaults, 8 sequential / 32 random]
#   WORKLOADS ["seq_read seq_write rand_read_4k rand_write_4k"]
#   CONTROL [0] 1: a null experiment: the plugin's column is a second fio
#               run with the same settings (its own refilled file), so the
#               ratios show how far fio disagrees with itself on this disk.
#   ROUNDS [1]  each round runs every workload once with each tool; the
#               order (ours first or fio first) alternates between rounds,
#               and the summary gives the median over rounds of the
#               per-round ratio fleetbench/fio.
#
# Before every fio run its file is made the way the plugin makes its own
# right before measuring: removed, fallocate'd, filled with 1 MiB direct
# writes of fio's random data, fsync'ed. (On VM disks a file filled seconds
# earlier measures differently from one filled minutes earlier, so both
# tools must start from the same state.) Both use O_DIRECT, io_uring, the same
# block size, iodepth, jobs (each job its own region: fio's --size=<region>
# --offset_increment=<region>), ramp and runtime, and, for random
# workloads, uniform offsets with replacement (--norandommap). The iodepth
# and block size given to fio are read back from the plugin's own samples,
# so both always run the same case.
set -euo pipefail

if [[ $# -lt 1 || ! -x $1 ]]; then
  echo "usage: $0 PATH/TO/host_bench_cli [SCRATCH_DIR]" >&2
  exit 2
fi
cli=$1
dir=${2:-/var/tmp/fleetbench-fio}
file_mib=${FILE_MIB:-1024}
ramp=${RAMP:-2}
runtime=${RUNTIME:-10}
jobs=${JOBS:-1}
iodepth=${IODEPTH:-}
workloads=${WORKLOADS:-seq_read seq_write rand_read_4k rand_write_4k}
rounds=${ROUNDS:-1}
control=${CONTROL:-0}

for tool in fio jq; do
  command -v "$tool" >/dev/null || { echo "$0: needs $tool" >&2; exit 2; }
done
mkdir -p "$dir"
dir=$(realpath "$dir")
fio_file=$dir/fio-compare.dat
work=$(mktemp -d)
trap 'rm -rf "$work"; rm -f "$fio_file"' EXIT

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r) $(fio --version)"
echo "# scratch $dir ($(findmnt -no FSTYPE,SOURCE -T "$dir" 2>/dev/null || echo '?'))"
echo "# file ${file_mib} MiB, ramp ${ramp} s, runtime ${runtime} s, jobs ${jobs}, iodepth ${iodepth:-defaults}"
[[ $control == 1 ]] && echo "# CONTROL: the fleetbench column is a second fio run"

fill=(fio --name=fill --filename="$fio_file" --rw=write --bs=1M
      --size="${file_mib}M" --direct=1 --ioengine=io_uring --iodepth=8
      --end_fsync=1 --output-format=terse)
echo "# before each fio run: rm -f $fio_file; fallocate -l ${file_mib}MiB $fio_file; ${fill[*]}"
refill_fio_file() {
  rm -f "$fio_file"
  fallocate -l "${file_mib}MiB" "$fio_file" 2>/dev/null || true
  "${fill[@]}" >/dev/null
}

region_mib=$((file_mib / jobs))

run_ours() {  # workload out.json
  if [[ $control == 1 ]]; then
    run_fio_as_ours "$@"
    return
  fi
  local args=(disk --scratch_dir="$dir" workloads="$1" file_mib="$file_mib"
              ramp_seconds="$ramp" runtime_seconds="$runtime" jobs="$jobs")
  [[ -n $iodepth ]] && args+=(iodepth="$iodepth")
  echo "\$ $cli ${args[*]}" >&2
  "$cli" "${args[@]}" 2>/dev/null | jq -s . >"$2"
}

run_fio() {  # workload iodepth block_bytes out.json
  local w=$1 qd=$2 bs=$3 rw
  case $w in
    seq_read) rw=read ;;
    seq_write) rw=write ;;
    rand_read_4k) rw=randread ;;
    rand_write_4k) rw=randwrite ;;
  esac
  local cmd=(fio --name="$w" --filename="$fio_file" --ioengine=io_uring
             --direct=1 --rw="$rw" --bs="$bs" --iodepth="$qd"
             --numjobs="$jobs" --size="${region_mib}M" --time_based
             --runtime="$runtime" --ramp_time="$ramp" --group_reporting
             --percentile_list=50:99:99.9 --output-format=json)
  ((jobs > 1)) && cmd+=(--offset_increment="${region_mib}M")
  [[ $rw == rand* ]] && cmd+=(--norandommap --randrepeat=0)
  echo "\$ ${cmd[*]}" >&2
  refill_fio_file
  "${cmd[@]}" >"$4"
  # The plugin removes its file as soon as it is done, and on a disk
  # mounted with -o discard the freed blocks go back to the host then; fio's
  # file goes the same way at the same point, so that every run starts
  # after the same history whichever tool ran before it.
  rm -f "$fio_file"
}

# CONTROL=1: fio in the plugin's place, its output reshaped into samples.
run_fio_as_ours() {  # workload out.json
  local w=$1 qd bs raw=$work/control-$1.json
  case $w in seq_*) qd=${iodepth:-8}; bs=1M ;; *) qd=${iodepth:-32}; bs=4k ;; esac
  run_fio "$w" "$qd" "$bs" "$raw"
  jq --arg w "$w" --arg qd "$qd" '.jobs[0] | (.read.io_bytes > 0) as $r
    | (if $r then .read else .write end) as $d
    | [{metric: "disk.\($w).MBps", value: ($d.bw_bytes / 1e6)},
       {metric: "disk.\($w).iops", value: $d.iops},
       {metric: "disk.\($w).p50_us", value: ($d.clat_ns.percentile["50.000000"] / 1e3)},
       {metric: "disk.\($w).p99_us", value: ($d.clat_ns.percentile["99.000000"] / 1e3)},
       {metric: "disk.\($w).p999_us", value: ($d.clat_ns.percentile["99.900000"] / 1e3)}]
    | map(. + {params: {iodepth: $qd}})' "$raw" >"$2"
}

ours_value() {  # json metric
  jq -r --arg m "$2" '.[] | select(.metric == $m) | .value' "$1"
}

fio_value() {  # json direction what
  local key
  case $3 in
    MBps) key='.bw_bytes / 1e6' ;;
    iops) key='.iops' ;;
    p50_us) key='.clat_ns.percentile["50.000000"] / 1e3' ;;
    p99_us) key='.clat_ns.percentile["99.000000"] / 1e3' ;;
    p999_us) key='.clat_ns.percentile["99.900000"] / 1e3' ;;
  esac
  jq -r ".jobs[0].$2 | $key" "$1"
}

rows=$work/rows
: >"$rows"
for ((round = 1; round <= rounds; round++)); do
  for w in $workloads; do
    ours=$work/ours-$w-$round.json
    theirs=$work/fio-$w-$round.json
    if ((round % 2 == 1)); then
      run_ours "$w" "$ours"
    fi
    qd=$(jq -r '.[0].params.iodepth' "$ours" 2>/dev/null || true)
    if [[ -z $qd || $qd == null ]]; then
      # fio goes first this round: the plugin's defaults, as it would use.
      case $w in seq_*) qd=${iodepth:-8} ;; *) qd=${iodepth:-32} ;; esac
    fi
    case $w in seq_*) bs=1M ;; *) bs=4k ;; esac
    run_fio "$w" "$qd" "$bs" "$theirs"
    if ((round % 2 == 0)); then
      run_ours "$w" "$ours"
    fi
    case $w in *read*) direction=read ;; *) direction=write ;; esac
    case $w in
      seq_*) whats="MBps" ;;
      *) whats="iops p50_us p99_us p999_us" ;;
    esac
    for what in $whats; do
      a=$(ours_value "$ours" "disk.$w.$what")
      b=$(fio_value "$theirs" "$direction" "$what")
      echo "$round $w $what $qd $a $b" >>"$rows"
    done
  done
done

echo
echo "Per round:"
printf '| round | workload | metric | iodepth | fleetbench | fio | ratio |\n'
printf '|---|---|---|---|---|---|---|\n'
while read -r round w what qd a b; do
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }')
  printf '| %s | %s | %s | %s | %.1f | %.1f | %s |\n' \
    "$round" "$w" "$what" "$qd" "$a" "$b" "$ratio"
done <"$rows"

echo
echo "Median over ${rounds} round(s):"
printf '| workload | metric | iodepth | fleetbench | fio | ratio (median of per-round) |\n'
printf '|---|---|---|---|---|---|\n'
awk '
  function median(list,   n, i, j, t, v) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] + 0 > v[j] + 0; j--) {
      t = v[j]; v[j] = v[j-1]; v[j-1] = t
    }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  {
    key = $2 " " $3 " " $4
    if (!(key in ours)) order[++keys] = key
    ours[key] = ours[key] " " $5
    fio[key] = fio[key] " " $6
    if ($6 > 0) ratio[key] = ratio[key] " " ($5 / $6)
  }
  END {
    for (k = 1; k <= keys; k++) {
      split(order[k], f, " ")
      printf "| %s | %s | %s | %.1f | %.1f | %.3f |\n", f[1], f[2], f[3],
             median(ours[order[k]]), median(fio[order[k]]), median(ratio[order[k]])
    }
  }' "$rows"
