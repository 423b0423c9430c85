#!/usr/bin/env bash
# ab.sh ROUNDS "variant|variant|..." — each round runs every variant, the
# order reversed every other round. A variant is [c0:|c1:|w:]TOOL [ARGS]:
#   c0:/c1:  taskset -c 0 / 1 on the whole process;  w: sample which CPU
#   each thread runs on (where.py) during the timed part
#   TOOL fio | plugin | ab (fsync_ab, the plugin's loop alone) | cli=PATH
# fio and ab run on a file refilled as bench/disk_vs_fio.sh refills fio's;
# the plugin makes its own. All: rw=write bs=4k iodepth=1 fsync=1, ramp 1 s,
# 5 s timed, 512 MiB file, O_DIRECT, io_uring. One line per run.
set -euo pipefail
rounds=$1; IFS='|' read -r -a variants <<<"$2"
dir=/var/tmp/fsync-scratch; f=$dir/ab.dat; mib=${FILE_MIB:-512}
here=$(dirname "$(realpath "$0")")
# AB: fsync_ab built as its header says; CLI: a build's host_bench_cli.
AB=${AB:-$here/fsync_ab}
CLI=${CLI:-$here/../../build/bench/host_bench_cli}
refill() {
  rm -f "$f"; fallocate -l ${mib}MiB "$f"
  fio --name=fill --filename="$f" --rw=write --bs=1M --size=${mib}M --direct=1 --ioengine=io_uring --iodepth=8 --end_fsync=1 --output-format=terse >/dev/null
  sync -f "$f"
  for ((i = 0; i < 250; i++)); do [[ $(tr -s ' ' </sys/block/vda/inflight) == " 0 0" ]] && break; sleep 0.02; done
}
plugin_json() {
  jq -s -r 'map({(.metric|sub("disk.custom.";"")): .value}) | add | "iops \(.iops) write_p50 \(.p50_us) fsync_p50 \(.fsync_p50_us)"'
}
for ((r = 1; r <= rounds; r++)); do
  order=("${variants[@]}")
  if ((r % 2 == 0)); then order=(); for ((i=${#variants[@]}-1;i>=0;i--)); do order+=("${variants[i]}"); done; fi
  for v in "${order[@]}"; do
    pre=(); spec=${v%%:*}; body=$v; w=""
    case $spec in
      c0) pre=(taskset -c 0); body=${v#*:} ;;
      c1) pre=(taskset -c 1); body=${v#*:} ;;
      w) w=1; body=${v#*:} ;;
    esac
    tool=${body%% *}; args=""; [[ $body == *" "* ]] && args=${body#* }
    wfile=$(mktemp)
    [[ $tool != plugin && $tool != cli=* ]] && refill
    if [[ -n $w ]]; then
      delay=1.5; [[ $tool == plugin || $tool == cli=* ]] && delay=4
      (sleep $delay; "$here/where.py" 4 '^fio$' host_bench 'fsync_ab' >"$wfile") &
    fi
    case $tool in
      fio) out=$("${pre[@]}" fio --name=compare --filename="$f" --ioengine=io_uring --direct=1 --numjobs=1 --size=${mib}M --time_based --runtime=${RT:-5} --ramp_time=1 --group_reporting --percentile_list=50:99:99.9 --output-format=json --rw=write --bs=4k --fsync=1 --iodepth=1 $args | jq -r '.jobs[0] | "iops \(.write.iops|floor) write_p50 \(.write.clat_ns.percentile["50.000000"]/1e3) fsync_p50 \(.sync.lat_ns.percentile["50.000000"]/1e3)"') ;;
      ab) out=$("${pre[@]}" $AB --file="$f" --runtime=${RT:-5} $args) ;;
      plugin|cli=*) cli=$CLI; [[ $tool == cli=* ]] && cli=${tool#cli=}
         out=$("${pre[@]}" "$cli" disk --scratch_dir=$dir file_mib=$mib ramp_seconds=1 runtime_seconds=${RT:-5} rw=write bs=4k iodepth=1 fsync=1 $args 2>/dev/null | plugin_json) ;;
    esac
    wait
    rm -f "$f"
    echo "round $r [$v] $out load $(cut -d' ' -f1 /proc/loadavg)"
    [[ -n $w ]] && sed 's/^/    /' "$wfile"
    rm -f "$wfile"
  done
done
