#!/usr/bin/env bash
# bench/disk_vs_fio.sh — runs the "disk" plugin and fio with the same job,
# side by side, for any workload, and prints ours/fio ratios.
#
# Builds nothing. Usage:
#   bench/disk_vs_fio.sh PATH/TO/host_bench_cli [SCRATCH_DIR]
# SCRATCH_DIR defaults to /var/tmp/fleetbench-fio (created if missing).
# Settings come from the environment (defaults in brackets):
#   CASES ["seq_read seq_write rand_read_4k rand_write_4k"]
#       space-separated; a case is a preset name, or a workload in fio's
#       option names, comma-separated, exactly as the plugin takes them:
#         rw=randread,bs=64k,iodepth=8
#         rw=randrw,rwmixread=70,bs=4k,iodepth=16
#         rw=write,bs=4k,iodepth=1,fsync=1
#         rw=randread,bs=4k,iodepth=32,rate=20M
#       The same text becomes the plugin's params (rw=… bs=…) and fio's
#       options (--rw=… --bs=…): the names and meanings are fio's.
#   WORKLOADS  the old name of CASES (presets only); used when CASES is unset
#   FILE_MIB [1024]  RAMP [2]  RUNTIME [10]  JOBS [1]
#   IODEPTH [empty: each case's, else 8 sequential / 32 random]
#   CONTROL [1] 1: every round also runs fio a second time (its own refilled
#               file, in the same round, the three runs' order alternating),
#               and the summary gives fio/fio beside fleetbench/fio: how far
#               fio disagrees with itself on this disk at the same moment.
#               0: skip it.
#   CPUS [empty]  a taskset CPU list (e.g. 1) that both tools run on; empty:
#               wherever the scheduler puts them. At iodepth=1 the latency of
#               every I/O depends on whether the submitting thread sits on the
#               CPU that takes the disk's completion interrupt: on this
#               2-vCPU VM (virtio-blk, one queue, its IRQ on CPU1) a thread on
#               CPU0 sees 1.5x the write p50 and 0.8x the IOPS of one on CPU1,
#               for fio and the plugin alike, and the scheduler picks per run.
#               Unpinned, a depth-1 ratio compares two placements, not two
#               tools (docs/fidelity.md, "fsync'd 4 KiB writes at depth 1").
#   ROUNDS [1]  each round runs every case once with each tool; the order
#               (ours first or fio first) alternates between rounds, and the
#               summary gives the median, min and max over rounds of the
#               per-round ratio fleetbench/fio.
#
# Before every fio run its file is made the way the plugin makes its own
# right before measuring: removed, fallocate'd, filled with 1 MiB direct
# writes of fio's random data, fsync'ed, and the device let go quiet as the
# plugin does before each workload (disk_settle.h: syncfs, then up to 5 s
# until /sys/block/DEV/inflight reads 0 0). (On VM disks a file filled seconds
# earlier measures differently from one filled minutes earlier, so both
# tools must start from the same state.) Both use O_DIRECT, io_uring, the
# same rw/bs/iodepth/rwmixread/fsync/rate, jobs (each job its own region:
# fio's --size=<region> --offset_increment=<region>), ramp and runtime, and,
# for random workloads, uniform offsets with replacement (--norandommap).
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
cases=${CASES:-${WORKLOADS:-seq_read seq_write rand_read_4k rand_write_4k}}
rounds=${ROUNDS:-1}
control=${CONTROL:-1}
cpus=${CPUS:-}
pin=()
[[ -n $cpus ]] && pin=(taskset -c "$cpus")

for tool in fio jq; do
  command -v "$tool" >/dev/null || { echo "$0: needs $tool" >&2; exit 2; }
done
mkdir -p "$dir"
dir=$(realpath "$dir")
fio_file=$dir/fio-compare.dat
work=$(mktemp -d)
trap 'rm -rf "$work"; rm -f "$fio_file"' EXIT

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r) $(fio --version) load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# scratch $dir ($(findmnt -no FSTYPE,SOURCE -T "$dir" 2>/dev/null || echo '?'))"
echo "# file ${file_mib} MiB, ramp ${ramp} s, runtime ${runtime} s, jobs ${jobs}, iodepth ${iodepth:-per case}"
[[ $control == 1 ]] && echo "# CONTROL: each round also runs fio a second time (fio/fio column)"
echo "# CPUs: ${cpus:-unpinned}$([[ -n $cpus ]] && echo " (both tools under taskset -c $cpus)")"
for irq in /proc/irq/*/effective_affinity_list; do
  d=${irq%/effective_affinity_list}
  # The block device's completion interrupts and the CPUs that take them.
  if ls "$d" 2>/dev/null | grep -Eq '^virtio[0-9]+-req|^nvme[0-9]+q[0-9]+'; then
    echo "# disk IRQ $(basename "$d") ($(ls "$d" | grep -E 'virtio|nvme' | head -1)) on CPU $(cat "$irq")"
  fi
done

fill=(fio --name=fill --filename="$fio_file" --rw=write --bs=1M
      --size="${file_mib}M" --direct=1 --ioengine=io_uring --iodepth=8
      --end_fsync=1 --output-format=terse)
echo "# before each fio run: rm -f $fio_file; fallocate -l ${file_mib}MiB $fio_file; ${fill[*]}"
device=$(basename "$(findmnt -no SOURCE -T "$dir" 2>/dev/null || echo none)")
device=${device%%[0-9]*}  # vda1 -> vda; the whole disk holds the queue
refill_fio_file() {
  rm -f "$fio_file"
  fallocate -l "${file_mib}MiB" "$fio_file" 2>/dev/null || true
  "${fill[@]}" >/dev/null
  # As the plugin settles before each workload (disk_settle.h).
  sync -f "$fio_file"
  local inflight=/sys/block/$device/inflight i
  if [[ -r $inflight ]]; then
    for ((i = 0; i < 250; i++)); do
      [[ $(tr -s ' ' <"$inflight") == " 0 0" || $(tr -s ' ' <"$inflight") == "0 0" ]] && break
      sleep 0.02
    done
  fi
}

region_mib=$((file_mib / jobs))

# A case as fio's options, one key=value per line, with the iodepth made
# explicit (the plugin's default when the case has none).
case_options() {  # case
  local c=$1
  case $c in
    seq_read) c=rw=read,bs=1M ;;
    seq_write) c=rw=write,bs=1M ;;
    rand_read_4k) c=rw=randread,bs=4k ;;
    rand_write_4k) c=rw=randwrite,bs=4k ;;
  esac
  local rw=${c#*rw=}; rw=${rw%%,*}
  local qd=$iodepth
  if [[ -z $qd ]]; then
    if [[ ,$c, == *,iodepth=* ]]; then qd=${c#*iodepth=}; qd=${qd%%,*}
    elif [[ $rw == rand* ]]; then qd=32; else qd=8; fi
  fi
  tr ',' '\n' <<<"$c" | grep -v '^iodepth=' || true
  echo "iodepth=$qd"
}

# The metric name prefix the plugin uses for a case.
case_prefix() {  # case
  case $1 in
    seq_read | seq_write | rand_read_4k | rand_write_4k) echo "disk.$1" ;;
    *) echo "disk.custom" ;;
  esac
}

case_metrics() {  # case
  local opts
  opts=$(case_options "$1")
  local m="MBps iops"
  if grep -q '^rw=randrw$' <<<"$opts"; then
    m+=" read_iops write_iops read_p50_us read_p99_us write_p50_us write_p99_us"
  else
    m+=" p50_us p99_us p999_us"
  fi
  if grep -q '^fsync=[1-9]' <<<"$opts"; then m+=" fsync_p50_us fsync_p99_us"; fi
  echo "$m"
}

run_ours() {  # case out.json
  local args=(disk --scratch_dir="$dir" file_mib="$file_mib"
              ramp_seconds="$ramp" runtime_seconds="$runtime" jobs="$jobs")
  case $1 in
    seq_read | seq_write | rand_read_4k | rand_write_4k)
      args+=(workloads="$1")
      [[ -n $iodepth ]] && args+=(iodepth="$iodepth")
      ;;
    *) while read -r kv; do args+=("$kv"); done < <(case_options "$1") ;;
  esac
  echo "\$ ${pin[*]} $cli ${args[*]}" >&2
  "${pin[@]}" "$cli" "${args[@]}" 2>/dev/null | jq -s . >"$2"
}

run_fio() {  # case out.json
  local cmd=(fio --name=compare --filename="$fio_file" --ioengine=io_uring
             --direct=1 --numjobs="$jobs" --size="${region_mib}M" --time_based
             --runtime="$runtime" --ramp_time="$ramp" --group_reporting
             --percentile_list=50:99:99.9 --output-format=json)
  local kv
  while read -r kv; do cmd+=("--$kv"); done < <(case_options "$1")
  ((jobs > 1)) && cmd+=(--offset_increment="${region_mib}M")
  [[ " ${cmd[*]} " == *" --rw=rand"* ]] && cmd+=(--norandommap --randrepeat=0)
  echo "\$ ${pin[*]} ${cmd[*]}" >&2
  refill_fio_file
  "${pin[@]}" "${cmd[@]}" >"$2"
  # The plugin removes its file as soon as it is done, and on a disk
  # mounted with -o discard the freed blocks go back to the host then; fio's
  # file goes the same way at the same point, so that every run starts
  # after the same history whichever tool ran before it.
  rm -f "$fio_file"
}

ours_value() {  # json case metric
  jq -r --arg m "$(case_prefix "$2").$3" '.[] | select(.metric == $m) | .value' "$1"
}

fio_value() {  # json metric
  local pct key
  case $2 in
    *p50_us) pct='"50.000000"' ;;
    *p999_us) pct='"99.900000"' ;;
    *p99_us) pct='"99.000000"' ;;
  esac
  case $2 in
    MBps) key='(.read.bw_bytes + .write.bw_bytes) / 1e6' ;;
    iops) key='.read.iops + .write.iops' ;;
    read_iops) key='.read.iops' ;;
    write_iops) key='.write.iops' ;;
    read_p*) key=".read.clat_ns.percentile[$pct] / 1e3" ;;
    write_p*) key=".write.clat_ns.percentile[$pct] / 1e3" ;;
    fsync_p*) key=".sync.lat_ns.percentile[$pct] / 1e3" ;;
    p*) key="(if .read.io_bytes > 0 then .read else .write end).clat_ns.percentile[$pct] / 1e3" ;;
  esac
  jq -r ".jobs[0] | $key" "$1"
}

rows=$work/rows
: >"$rows"
for ((round = 1; round <= rounds; round++)); do
  n=0
  for c in $cases; do
    n=$((n + 1))
    ours=$work/ours-$n-$round.json
    theirs=$work/fio-$n-$round.json
    again=$work/fio2-$n-$round.json
    if ((round % 2 == 1)); then
      run_ours "$c" "$ours"
      run_fio "$c" "$theirs"
      [[ $control == 1 ]] && run_fio "$c" "$again"
    else
      [[ $control == 1 ]] && run_fio "$c" "$again"
      run_fio "$c" "$theirs"
      run_ours "$c" "$ours"
    fi
    label=$(case_options "$c" | paste -sd, -)
    for what in $(case_metrics "$c"); do
      a=$(ours_value "$ours" "$c" "$what")
      b=$(fio_value "$theirs" "$what")
      f=0
      [[ $control == 1 ]] && f=$(fio_value "$again" "$what")
      echo "$round $label $what ${a:-0} ${b:-0} ${f:-0}" >>"$rows"
    done
  done
done

echo
echo "Per round:"
printf '| round | case | metric | fleetbench | fio | fleetbench/fio | fio again/fio |\n'
printf '|---|---|---|---|---|---|---|\n'
while read -r round label what a b f; do
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }')
  ctl=$(awk -v a="$f" -v b="$b" 'BEGIN { if (b > 0 && a > 0) printf "%.3f", a / b; else print "n/a" }')
  printf '| %s | %s | %s | %.1f | %.1f | %s | %s |\n' \
    "$round" "$label" "$what" "$a" "$b" "$ratio" "$ctl"
done <"$rows"

echo
echo "Over ${rounds} round(s), per-round ratios:"
printf '| case | metric | fleetbench (median) | fio (median) | fleetbench/fio median | min–max | fio/fio median | min–max |\n'
printf '|---|---|---|---|---|---|---|---|\n'
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
    if (n == 0) return 0
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  function lo(list,   v) { return sort(list, v) ? v[1] : 0 }
  function hi(list,   n, v) { n = sort(list, v); return n ? v[n] : 0 }
  {
    key = $2 " " $3
    if (!(key in ours)) order[++keys] = key
    ours[key] = ours[key] " " $4
    fio[key] = fio[key] " " $5
    if ($5 > 0) ratio[key] = ratio[key] " " ($4 / $5)
    if ($5 > 0 && $6 > 0) ctl[key] = ctl[key] " " ($6 / $5)
  }
  END {
    for (k = 1; k <= keys; k++) {
      split(order[k], f, " ")
      r = ratio[order[k]]; c = ctl[order[k]]
      printf "| %s | %s | %.1f | %.1f | %.3f | %.3f–%.3f | %.3f | %.3f–%.3f |\n", f[1], f[2],
             median(ours[order[k]]), median(fio[order[k]]), median(r), lo(r), hi(r),
             median(c), lo(c), hi(c)
    }
  }' "$rows"
