#!/usr/bin/env bash
# bench/run_controller_bench.sh — the controller's (spine's) speed goals,
# measured against real processes on loopback. docs/controller-speed.md
# records the latest results and the commands; docs/results-log.md the
# earlier runs.
#
#   bench/run_controller_bench.sh [BUILD_DIR]      (default build-bench)
#
# Builds nothing; needs BUILD_DIR/cli/fleetbench, BUILD_DIR/bench/
# fleetbench_load and (for the rank goal) BUILD_DIR/bench/fleetbench_rank_bench:
#   cmake -S . -B build-bench && cmake --build build-bench -j2 \
#     --target fleetbench fleetbench_load fleetbench_rank_bench
#
# Settings from the environment (defaults in brackets):
#   STREAMS ["1 2 4"]   ingest: fake agent streams per measurement
#   REPEATS [3]         ingest: measurements per stream count (fresh
#                       controller and database each time)
#   SAMPLES [2000000]   ingest: samples per measurement
#   BATCH [1000]        ingest: samples per report
#   WINDOW [8]          ingest: unacked reports in flight per stream
#   PARAMS [2]          ingest: params per sample (size, dtype)
#   IDLE_AGENTS [1000]  idle: fake agents
#   IDLE_SETTLE [10]    idle: seconds after all are welcomed before measuring
#   CPU_WINDOW [30]     idle: seconds over which controller CPU is measured
#   AGENT_WINDOW [30]   real agent: idle seconds measured
#   PARTS ["ingest idle agent rank"]  which goals to measure
#   WORK [mktemp -d]    where databases and logs go (kept when set)
#   SEED_DB []          ingest: each measurement's controller starts on a
#                       copy of this history (e.g. 50M samples already stored)
#   START_TIMEOUT [30]  seconds to wait for a controller to listen (a large
#                       seeded history is checked at open first)
#
# Goals: ingest >= 100,000 samples/s acked; controller RSS < 300 MB with
# 1000 idle agents; rank over 1,000,000 samples < 100 ms; an idle agent
# < 30 MB RSS and near-zero CPU.
#
# Besides wall-clock rates it reports CPU time, which sharing the cores with
# other work disturbs much less: the controller's actor thread's CPU per
# ingested sample (1e6 / that = the ingest ceiling on an unshared core) and
# how long that thread waited for a CPU (schedstat). The real agent is
# measured as built and, as a diagnostic, as a copy of the binary that cannot
# find the GPU module next to it.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
FB=$BUILD/cli/fleetbench
LOAD=$BUILD/bench/fleetbench_load
RANK_BENCH=$BUILD/bench/fleetbench_rank_bench
for b in "$FB" "$LOAD"; do
  [[ -x $b ]] || { echo "$0: missing $b (build it first, see the header)" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "$0: needs jq" >&2; exit 2; }

STREAMS=${STREAMS:-1 2 4}
REPEATS=${REPEATS:-3}
SAMPLES=${SAMPLES:-2000000}
BATCH=${BATCH:-1000}
WINDOW=${WINDOW:-8}
PARAMS=${PARAMS:-2}
IDLE_AGENTS=${IDLE_AGENTS:-1000}
IDLE_SETTLE=${IDLE_SETTLE:-10}
CPU_WINDOW=${CPU_WINDOW:-30}
AGENT_WINDOW=${AGENT_WINDOW:-30}
PARTS=" ${PARTS:-ingest idle agent rank} "
SEED_DB=${SEED_DB:-}
START_TIMEOUT=${START_TIMEOUT:-30}
want() { [[ $PARTS == *" $1 "* ]]; }
if [[ -n ${WORK:-} ]]; then
  mkdir -p "$WORK"
  keep_work=1
else
  WORK=$(mktemp -d /tmp/fleetbench-spine-bench.XXXXXX)
  keep_work=0
fi
export FLEETBENCH_TOKEN=${FLEETBENCH_TOKEN:-bench-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')}
CLK_TCK=$(getconf CLK_TCK)
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ((keep_work)) || rm -rf "$WORK"
}
trap cleanup EXIT

# /proc readers. cpu_ticks: utime+stime of the whole process (fields 14, 15
# of /proc/PID/stat; the command name may hold spaces, so cut after ')').
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
status_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
# The controller's busiest thread (its actor: every store write happens
# there) as "cpu_ticks runqueue_wait_ms": schedstat's second field is time
# spent runnable but waiting for a CPU, i.e. what sharing the cores cost.
busiest_thread() {
  local best=0 best_t=""
  for t in /proc/"$1"/task/*; do
    local ticks
    ticks=$(sed 's/.*) //' "$t/stat" | awk '{print $12 + $13}')
    if ((ticks > best)); then best=$ticks; best_t=$t; fi
  done
  echo "$best $(awk '{printf "%.0f", $2 / 1e6}' "$best_t/schedstat")"
}
mb() { awk -v kb="$1" 'BEGIN {printf "%.1f", kb / 1024}'; }
cpu_pct() { awk -v t="$1" -v hz="$CLK_TCK" -v s="$2" 'BEGIN {printf "%.2f", 100 * t / hz / s}'; }
median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
minmax() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo "-" hi}'; }

# start_controller DIR: sets CTL_PID and CTL_ADDR.
start_controller() {
  local dir=$1
  mkdir -p "$dir"
  # A copy of SEED_DB is the history the ingest runs add to.
  if [[ -n ${SEED_DB:-} && $dir == */ingest-* ]]; then cp "$SEED_DB" "$dir/history.db"; fi
  "$FB" controller --listen 127.0.0.1:0 --db "$dir/history.db" \
    >"$dir/controller.out" 2>"$dir/controller.log" &
  CTL_PID=$!
  pids+=("$CTL_PID")
  for _ in $(seq 1 $((START_TIMEOUT * 10))); do
    grep -q '^listening ' "$dir/controller.out" 2>/dev/null && break
    sleep 0.1
  done
  local port
  port=$(awk '/^listening /{print $2}' "$dir/controller.out")
  [[ -n $port ]] || { echo "controller did not start; see $dir/controller.log" >&2; exit 1; }
  CTL_ADDR=127.0.0.1:$port
  # TLS, as in production: the CA the controller just made.
  export FLEETBENCH_CA=$dir/history.db.tls/ca.pem
}
stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
wait_for_line() {  # file pattern seconds
  for _ in $(seq 1 $(($3 * 10))); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
online_count() {  # prefix
  "$FB" nodes --json --controller "$CTL_ADDR" |
    jq --arg p "$1" '[.nodes[]? | select(.status == "NODE_STATUS_ONLINE" and (.name | startswith($p)))] | length'
}

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r), $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
echo "# loadavg before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# work dir $WORK"

# ---------------------------------------------------------------- ingest
declare -A ingest_rates ingest_ctl_cpu ingest_actor_us
want ingest || STREAMS=""
for k in $STREAMS; do
  for ((rep = 1; rep <= REPEATS; rep++)); do
    dir=$WORK/ingest-k$k-r$rep
    start_controller "$dir"
    nodes=$(seq -s, -f "ingest-%g" 0 $((k - 1)))
    "$LOAD" --mode ingest --controller "$CTL_ADDR" --streams "$k" --samples "$SAMPLES" \
      --batch "$BATCH" --window "$WINDOW" --params "$PARAMS" --prefix ingest \
      >"$dir/load.out" 2>"$dir/load.err" &
    load_pid=$!
    pids+=("$load_pid")
    wait_for_line "$dir/load.out" "^ready $k" 60 || { echo "ingest: streams not welcomed; see $dir" >&2; exit 1; }
    t0=$(cpu_ticks "$CTL_PID")
    run_id=$("$FB" run --bench gemm --nodes "$nodes" --controller "$CTL_ADDR")
    wait "$load_pid" || { echo "ingest: load tool failed; see $dir/load.err" >&2; exit 1; }
    t1=$(cpu_ticks "$CTL_PID")
    result=$(grep '^{' "$dir/load.out")
    for _ in $(seq 1 50); do
      state=$("$FB" runs --json --controller "$CTL_ADDR" | jq -r --arg r "$run_id" '.runs[] | select(.run_id == $r) | .state')
      [[ $state == RUN_STATE_SUCCEEDED ]] && break
      sleep 0.1
    done
    rate=$(jq -r .samples_per_s <<<"$result")
    secs=$(jq -r .seconds <<<"$result")
    ctl_pct=$(cpu_pct $((t1 - t0)) "$secs")
    read -r actor_ticks actor_wait_ms < <(busiest_thread "$CTL_PID")
    # Actor CPU per sample bounds ingest on an unshared core: 1e6 / us.
    actor_us=$(awk -v t="$actor_ticks" -v hz="$CLK_TCK" -v n="$SAMPLES" 'BEGIN {printf "%.2f", 1e6 * t / hz / n}')
    hwm=$(status_kb "$CTL_PID" VmHWM)
    echo "ingest K=$k #$rep: $rate samples/s (${secs} s, ack p50 $(jq -r .ack_latency_ms_p50 <<<"$result") ms," \
         "p99 $(jq -r .ack_latency_ms_p99 <<<"$result") ms), run $state, controller CPU ${ctl_pct}% of a core," \
         "actor thread $actor_us us CPU/sample (waited ${actor_wait_ms} ms for a CPU)," \
         "controller peak RSS $(mb "$hwm") MB, load tool CPU $(jq -r .load_cpu_s <<<"$result") s"
    ingest_rates[$k]+="$rate "
    ingest_ctl_cpu[$k]+="$ctl_pct "
    ingest_actor_us[$k]+="$actor_us "
    stop "$CTL_PID"
    rm -rf "$dir"/history.db*  # with its TLS folder, history.db.tls/
  done
done

# ------------------------------------------------------------------ idle
if want idle || want agent; then
dir=$WORK/idle
start_controller "$dir"
sleep 2
base_rss=$(status_kb "$CTL_PID" VmRSS)
b0=$(cpu_ticks "$CTL_PID")
sleep 10
b1=$(cpu_ticks "$CTL_PID")
base_cpu=$(cpu_pct $((b1 - b0)) 10)
hold=$((IDLE_SETTLE + CPU_WINDOW + 20))
if want idle; then
"$LOAD" --mode idle --controller "$CTL_ADDR" --agents "$IDLE_AGENTS" --hold "$hold" --prefix idle \
  >"$dir/load.out" 2>"$dir/load.err" &
load_pid=$!
pids+=("$load_pid")
wait_for_line "$dir/load.out" "^ready " 120 || { echo "idle: agents not welcomed; see $dir" >&2; exit 1; }
welcomed=$(awk '/^ready /{print $2}' "$dir/load.out")
sleep "$IDLE_SETTLE"
c0=$(cpu_ticks "$CTL_PID")
sleep "$CPU_WINDOW"
c1=$(cpu_ticks "$CTL_PID")
idle_cpu=$(cpu_pct $((c1 - c0)) "$CPU_WINDOW")
idle_rss=$(status_kb "$CTL_PID" VmRSS)
idle_anon=$(status_kb "$CTL_PID" RssAnon)
idle_hwm=$(status_kb "$CTL_PID" VmHWM)
idle_threads=$(status_kb "$CTL_PID" Threads)
idle_online=$(online_count idle-)
wait "$load_pid" || true
idle_result=$(grep '^{' "$dir/load.out" || echo '{}')
echo "idle: controller alone: RSS $(mb "$base_rss") MB, CPU ${base_cpu}%"
echo "idle: $welcomed of $IDLE_AGENTS welcomed; nodes --json: $idle_online online;" \
     "controller RSS $(mb "$idle_rss") MB (anon $(mb "$idle_anon") MB, peak $(mb "$idle_hwm") MB)," \
     "$idle_threads threads, CPU ${idle_cpu}% of a core over ${CPU_WINDOW} s"
echo "idle: load tool: $idle_result"
fi

# ------------------------------------------------------------ real agent
# The same controller, now without the fake agents. measure_agent LABEL BINARY
# appends a summary row to agent_rows.
agent_rows=()
measure_agent() {
  local label=$1 bin=$2 name=agent-idle-$1 adir=$WORK/agent-$1
  mkdir -p "$adir"
  "$bin" agent --controller "$CTL_ADDR" --name "$name" --state-dir "$adir/state" 2>"$adir/agent.log" &
  local pid=$!
  pids+=("$pid")
  for _ in $(seq 1 300); do
    [[ $(online_count "$name") == 1 ]] && break
    sleep 0.1
  done
  sleep 5
  local a0 a1 cpu cpu_ms rss anon file threads online
  a0=$(cpu_ticks "$pid")
  sleep "$AGENT_WINDOW"
  a1=$(cpu_ticks "$pid")
  cpu=$(cpu_pct $((a1 - a0)) "$AGENT_WINDOW")
  cpu_ms=$(awk -v t=$((a1 - a0)) -v hz="$CLK_TCK" 'BEGIN {printf "%.0f", 1000 * t / hz}')
  rss=$(status_kb "$pid" VmRSS)
  anon=$(status_kb "$pid" RssAnon)
  file=$(status_kb "$pid" RssFile)
  threads=$(status_kb "$pid" Threads)
  online=$(online_count "$name")
  echo "agent ($label): online=$online RSS $(mb "$rss") MB (anon $(mb "$anon") MB, file $(mb "$file") MB)," \
       "$threads threads, CPU ${cpu}% (${cpu_ms} ms in ${AGENT_WINDOW} s)," \
       "cuBLAS mapped: $(grep -c cublas "/proc/$pid/maps" || true) mappings"
  stop "$pid"
  agent_rows+=("$(printf '%-44s %-22s %-24s %s' "agent idle RSS ($label)" "< 30 MB" "$(mb "$rss") MB" \
    "anon $(mb "$anon") MB, file $(mb "$file") MB")")
  agent_rows+=("$(printf '%-44s %-22s %-24s %s' "agent idle CPU ($label)" "near zero" "${cpu}%" \
    "${cpu_ms} ms in ${AGENT_WINDOW} s")")
}
if want agent; then
  measure_agent as-built "$FB"
  # Diagnostic: the same binary where it cannot find the GPU module
  # (libfleetbench_gpu.so, found next to the executable), to show what the
  # module and the CUDA libraries it links cost an idle agent.
  if [[ -e $(dirname "$FB")/libfleetbench_gpu.so ]]; then
    mkdir -p "$WORK/no-gpu-module"
    cp "$FB" "$WORK/no-gpu-module/fleetbench"
    measure_agent no-gpu-module "$WORK/no-gpu-module/fleetbench"
  fi
fi
stop "$CTL_PID"
fi

# ------------------------------------------------------------------ rank
rank_lines=""
if want rank; then
  if [[ -x $RANK_BENCH ]]; then
    mkdir -p "$WORK/rank"
    "$RANK_BENCH" --fleetbench "$FB" --db "$WORK/rank/history.db" \
      >"$WORK/rank/bench.out" 2>"$WORK/rank/bench.log" || echo "rank: failures; see $WORK/rank/bench.log" >&2
    rank_lines=$(grep '^{' "$WORK/rank/bench.out")
    echo "$rank_lines"
  else
    echo "rank: $RANK_BENCH not built, skipped" >&2
  fi
fi

# --------------------------------------------------------------- summary
echo
echo "# loadavg after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-44s %-22s %-24s %s\n' GOAL TARGET "MEASURED (median)" "SPREAD / NOTE"
for k in $STREAMS; do
  r=${ingest_rates[$k]}
  printf '%-44s %-22s %-24s %s\n' "ingest, $k stream(s), acked samples/s" ">= 100000" \
    "$(tr ' ' '\n' <<<"$r" | grep . | median)" \
    "$(tr ' ' '\n' <<<"$r" | grep . | minmax) over $REPEATS; ctl CPU $(tr ' ' '\n' <<<"${ingest_ctl_cpu[$k]}" | grep . | median)%; actor $(tr ' ' '\n' <<<"${ingest_actor_us[$k]}" | grep . | median) us/sample"
done
if want idle; then
printf '%-44s %-22s %-24s %s\n' "controller RSS, $IDLE_AGENTS idle agents" "< 300 MB" "$(mb "$idle_rss") MB" \
  "anon $(mb "$idle_anon") MB; alone $(mb "$base_rss") MB; $idle_online online"
printf '%-44s %-22s %-24s %s\n' "controller CPU, $IDLE_AGENTS idle agents" "(measure)" "${idle_cpu}% of a core" \
  "over ${CPU_WINDOW} s; alone ${base_cpu}%"
fi
if [[ -n $rank_lines ]]; then
  while read -r line; do
    what=$(jq -r .what <<<"$line")
    if [[ $what == controller* ]]; then
      printf '%-44s %-22s %-24s %s\n' "controller RSS after ranking 1M (CLI runs)" "(measure)" \
        "$(mb "$(jq -r .rss_kb <<<"$line")") MB" \
        "peak $(mb "$(jq -r .peak_rss_kb <<<"$line")") MB, anon $(mb "$(jq -r .anon_kb <<<"$line")") MB"
      continue
    fi
    [[ $what == cli* || $what == FleetCore* || $what == Store* ]] || continue
    target="< 100 ms"
    [[ $what == *floor* || $what == Store* ]] && target="(part of it)"
    printf '%-44s %-22s %-24s %s\n' "rank 1M: ${what:0:35}" "$target" "$(jq -r .median_ms <<<"$line") ms" \
      "$(jq -r '"\(.min_ms)-\(.max_ms) over \(.repeats); cold \(.cold_ms); CPU \(.median_cpu_ms)"' <<<"$line")"
  done <<<"$rank_lines"
fi
for row in "${agent_rows[@]}"; do echo "$row"; done
