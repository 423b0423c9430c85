#!/usr/bin/env bash
# bench/fault_soak.sh — a bounded fault-injection soak against real
# processes, as users run them (TLS, every agent enrolled with its own
# certificate): quick GEMM runs on three agents, each in its own network
# namespace behind a bridge in the controller's, one of them under a cgroup
# v1 CPU quota (30% of one core), while the controller is killed mid-run
# (SIGKILL, or SIGTERM on every RESTART_TERM-th restart) and started again
# after a gap in which the agents may fail to dial it, agents are SIGKILLed
# mid-run and restarted, an agent's link is cut past the heartbeat timeout
# and restored, and the
# controller's disk (a size-limited tmpfs) fills up and is freed. At the end
# it reads the history with the sqlite3 shell and reports what
# docs/reliability.md records. Run by hand (root, for the tmpfs and the
# namespaces; iproute2); not part of the test command.
#
#   bench/fault_soak.sh [BUILD_DIR]            (default build)
#
# Settings from the environment (defaults in brackets):
#   CONTROLLER_KILLS [20]  runs with a controller SIGKILL mid-run
#   RESTART_TERM [4]       every Nth of those is a SIGTERM instead (0: none)
#   RESTART_GAP_MAX [1.5]  the controller stays away 0..this many seconds
#   SLOW_QUOTA [30]        soak-c's CPU quota, % of one core (0: no cgroup)
#   AGENT_KILLS [10]       runs with an agent SIGKILL (and restart) mid-run
#   PARTITIONS [5]         runs with an agent's link down for 7 s mid-run
#   DISK_FULL [1]          disk-full episodes (a run while the disk is full)
#   WORK [mktemp -d]       where the history, spools and logs go (kept)
#
# Reported: samples of succeeded tasks measured (2 per task: fp32, fp64) vs
# stored, samples stored twice for one (task, metric), runs left
# non-terminal, integrity_check, the time for all nodes to be back online
# after each controller restart (median and worst), and how many tasks lost
# to a partition were settled by their late final reports.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
BIN=$PWD/$BUILD/cli/fleetbench
CONTROLLER_KILLS=${CONTROLLER_KILLS:-20}
AGENT_KILLS=${AGENT_KILLS:-10}
PARTITIONS=${PARTITIONS:-5}
DISK_FULL=${DISK_FULL:-1}
RESTART_TERM=${RESTART_TERM:-4}
RESTART_GAP_MAX=${RESTART_GAP_MAX:-1.5}
SLOW_QUOTA=${SLOW_QUOTA:-30}
WORK=${WORK:-$(mktemp -d /tmp/fleetbench-soak.XXXXXX)}
[[ -x $BIN ]] || { echo "no $BIN; build the fleetbench target" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "needs root (a size-limited tmpfs, network namespaces)" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "needs the sqlite3 shell" >&2; exit 2; }
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }

export FLEETBENCH_TOKEN=soak-$RANDOM$RANDOM
PORT=$((20000 + RANDOM % 20000))
HUB_ADDR=10.233.0.254
export FLEETBENCH_CONTROLLER=$HUB_ADDR:$PORT
AGENTS=(soak-a soak-b soak-c)
mkdir -p "$WORK/db"
mount -t tmpfs -o size=64m tmpfs "$WORK/db"
DB=$WORK/db/history.db
CONTROLLER_PID=
declare -A AGENT_PID AGENT_NS AGENT_LINK
# Every agent enrolls on its first start (the shared token, an admin's,
# enrolls, as in tools/demo.sh) and connects with its certificate after.
ENROLL=$WORK/enroll.token
(umask 077; printf '%s' "$FLEETBENCH_TOKEN" >"$ENROLL")
export FLEETBENCH_CA=$DB.tls/ca.pem
SLOW_CG=

# The controller and the CLI in a hub namespace with a bridge; each agent in
# its own namespace, its veth's hub end on the bridge.
SUF=$(printf '%04x' $((RANDOM % 65536)))
HUB=fbsh$SUF
ip netns add "$HUB"
ip -n "$HUB" link set lo up
ip -n "$HUB" link add br0 type bridge
ip -n "$HUB" addr add "$HUB_ADDR/24" dev br0
ip -n "$HUB" link set br0 up
for i in "${!AGENTS[@]}"; do
  name=${AGENTS[$i]}
  ns=fbs$i$SUF
  ip netns add "$ns"
  ip link add "v${i}n$SUF" netns "$ns" type veth peer name "v${i}h$SUF" netns "$HUB"
  ip -n "$ns" addr add "10.233.0.$((i + 1))/24" dev "v${i}n$SUF"
  ip -n "$ns" link set "v${i}n$SUF" up
  ip -n "$ns" link set lo up
  ip -n "$HUB" link set "v${i}h$SUF" master br0
  ip -n "$HUB" link set "v${i}h$SUF" up
  AGENT_NS[$name]=$ns
  AGENT_LINK[$name]=v${i}h$SUF
done
fb() { ip netns exec "$HUB" "$BIN" "$@"; }

cleanup() {
  set +e
  for name in "${!AGENT_PID[@]}"; do kill -9 "${AGENT_PID[$name]}" 2>/dev/null; done
  [[ -n $CONTROLLER_PID ]] && kill -9 "$CONTROLLER_PID" 2>/dev/null
  wait 2>/dev/null
  umount -l "$WORK/db"
  for name in "${AGENTS[@]}"; do ip netns del "${AGENT_NS[$name]}"; done
  ip netns del "$HUB"
  [[ -n $SLOW_CG ]] && rmdir "$SLOW_CG"
}
trap cleanup EXIT

now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }

# Waits (polling, with a deadline) until COMMAND succeeds.
wait_for() {
  local deadline=$(($(date +%s) + $1)); shift
  until "$@"; do
    (($(date +%s) < deadline)) || return 1
    sleep 0.05
  done
}

start_controller() {
  # The history is copied out of the tmpfs at the end, so every start reuses it.
  ip netns exec "$HUB" "$BIN" controller --listen "$HUB_ADDR:$PORT" --db "$DB" --heartbeat-timeout 5s \
    >"$WORK/controller.out" 2>>"$WORK/controller.log" &
  CONTROLLER_PID=$!
  wait_for 30 grep -q '^listening' "$WORK/controller.out"
}

# soak-c runs (and enrolls) under a CPU quota from its first instruction:
# a shell moves itself into the cgroup and execs the agent.
if ((SLOW_QUOTA > 0)); then
  [[ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]] || { echo "no cgroup v1 cpu controller (SLOW_QUOTA=0 to skip)" >&2; exit 2; }
  SLOW_CG=/sys/fs/cgroup/cpu/fbsoak-$SUF
  mkdir "$SLOW_CG"
  echo 100000 >"$SLOW_CG/cpu.cfs_period_us"
  echo $((SLOW_QUOTA * 1000)) >"$SLOW_CG/cpu.cfs_quota_us"
fi
start_agent() {
  local prefix=(env)
  [[ $1 == soak-c && -n $SLOW_CG ]] && prefix=(sh -c 'echo $$ >"$0" && exec "$@"' "$SLOW_CG/cgroup.procs")
  # The cgroup is entered before `ip netns exec`, which mounts a /sys of
  # the namespace's own without the cgroup hierarchies; its children stay in.
  "${prefix[@]}" ip netns exec "${AGENT_NS[$1]}" "$BIN" agent --name "$1" --state-dir "$WORK/agent-$1" \
    --label price_per_hour=1 --enroll-token-file "$ENROLL" \
    --backoff-reset-after 1s 2>>"$WORK/agent-$1.log" &
  AGENT_PID[$1]=$!
}

online_count() {
  fb nodes --json 2>/dev/null | jq '[.nodes[]? | select(.status == "NODE_STATUS_ONLINE")] | length'
}
all_online() { [[ $(online_count) == "${#AGENTS[@]}" ]]; }

run_state() { fb results "$1" --json 2>/dev/null | jq -r '.state // "?"'; }
terminal() { [[ $(run_state "$1") =~ ^RUN_STATE_(SUCCEEDED|FAILED|CANCELLED)$ ]]; }
running() { [[ $(run_state "$1") == RUN_STATE_RUNNING ]]; }

start_run() {
  fb run --bench gemm --param gemm.sizes=192 --param gemm.min_seconds=0.5 \
    --param gemm.max_runs=100000 --param gemm.threads=1 --max-parallel 3
}

RUNS=()
RETURNS=()
start_controller
for name in "${AGENTS[@]}"; do start_agent "$name"; done
wait_for 60 all_online || { echo "agents did not come online" >&2; exit 1; }

# A session counts as healthy (the agents' reconnect backoff starts over)
# after --backoff-reset-after, 1 s here. Killing the controller sooner is a
# crash loop, where the backoff is meant to grow; the return time is
# measured for restarts that each follow a healthy session.
ONLINE_SINCE=$(now)
healthy() { (($(echo "$(since "$ONLINE_SINCE") > 1.5" | bc))); }

echo "controller kills: $CONTROLLER_KILLS"
for ((i = 1; i <= CONTROLLER_KILLS; i++)); do
  wait_for 30 healthy
  run=$(start_run)
  RUNS+=("$run")
  wait_for 30 running "$run" || true
  sleep "0.$((RANDOM % 10))"  # somewhere in the run: it lasts about a second
  sig=KILL
  ((RESTART_TERM > 0 && i % RESTART_TERM == 0)) && sig=TERM
  kill -"$sig" "$CONTROLLER_PID"
  wait "$CONTROLLER_PID" 2>/dev/null || true
  # Away for a while: the agents' redials find nobody listening.
  sleep "$(awk -v r=$RANDOM -v m="$RESTART_GAP_MAX" 'BEGIN { printf "%.2f", r / 32768 * m }')"
  start_controller
  t0=$(now)
  wait_for 60 all_online || { echo "nodes did not return after restart $i" >&2; exit 1; }
  RETURNS+=("$(since "$t0")")
  ONLINE_SINCE=$(now)
  wait_for 120 terminal "$run" || echo "run $run not terminal after restart $i" >&2
done

echo "agent kills: $AGENT_KILLS"
for ((i = 1; i <= AGENT_KILLS; i++)); do
  run=$(start_run)
  RUNS+=("$run")
  wait_for 30 running "$run" || true
  sleep "0.$((RANDOM % 10))"
  victim=${AGENTS[$((RANDOM % ${#AGENTS[@]}))]}
  kill -9 "${AGENT_PID[$victim]}"
  wait "${AGENT_PID[$victim]}" 2>/dev/null || true
  start_agent "$victim"
  wait_for 60 all_online || { echo "agent $victim did not return" >&2; exit 1; }
  wait_for 120 terminal "$run" || echo "run $run not terminal after agent kill $i" >&2
done

echo "partitions: $PARTITIONS"
for ((i = 1; i <= PARTITIONS; i++)); do
  run=$(start_run)
  RUNS+=("$run")
  wait_for 30 running "$run" || true
  victim=${AGENTS[$((RANDOM % ${#AGENTS[@]}))]}
  ip -n "$HUB" link set "${AGENT_LINK[$victim]}" down
  sleep 7  # past the 5 s heartbeat timeout: its task is declared lost
  ip -n "$HUB" link set "${AGENT_LINK[$victim]}" up
  wait_for 120 terminal "$run" || echo "run $run not terminal after partition $i" >&2
  wait_for 60 all_online || { echo "agent $victim did not return after partition $i" >&2; exit 1; }
done

echo "disk-full episodes: $DISK_FULL"
FULL_RECOVERY=()
for ((i = 1; i <= DISK_FULL; i++)); do
  run=$(start_run)
  RUNS+=("$run")
  wait_for 30 running "$run" || true
  dd if=/dev/zero of="$WORK/db/filler" bs=64k 2>/dev/null || true  # until ENOSPC
  wait_for 60 bash -c "ip netns exec $HUB '$BIN' nodes --json | jq -e '.store_error // empty' >/dev/null" ||
    echo "the store never failed in disk-full episode $i (the run may have ended first)" >&2
  sleep 2  # held for a while, as a disk stays full until someone notices
  rm -f "$WORK/db/filler"
  t0=$(now)
  wait_for 120 terminal "$run" || echo "run $run not terminal after disk-full episode $i" >&2
  FULL_RECOVERY+=("$(since "$t0")")
done

# Everything settles: no spooled report left unacknowledged.
wait_for 60 bash -c "! ls $WORK/agent-*/spool/*.report >/dev/null 2>&1" ||
  echo "reports left in spools: $(ls $WORK/agent-*/spool/*.report 2>/dev/null | wc -l)" >&2
kill -TERM "$CONTROLLER_PID"
wait "$CONTROLLER_PID" 2>/dev/null || true
CONTROLLER_PID=
cp "$DB" "$WORK/history.db"

q() { sqlite3 -batch -noheader "$WORK/history.db" "$1"; }
runs_sql=$(printf "'%s'," "${RUNS[@]}")
runs_sql=${runs_sql%,}
succeeded_tasks=$(q "SELECT count(*) FROM tasks t JOIN runs r ON r.key = t.run_key
  WHERE r.run_id IN ($runs_sql) AND t.state = 4")
measured=$((succeeded_tasks * 2))
stored=$(q "SELECT count(*) FROM samples s JOIN runs r ON r.key = s.run_key
  JOIN nodes n ON n.id = s.node_id JOIN tasks t ON t.run_key = s.run_key AND t.node = n.name
  WHERE r.run_id IN ($runs_sql) AND t.state = 4")
duplicates=$(q "SELECT coalesce(sum(c - 1), 0) FROM (SELECT count(*) c FROM samples
  GROUP BY run_key, node_id, metric_id HAVING count(*) > 1)")
non_terminal=$(q "SELECT count(*) FROM runs WHERE run_id IN ($runs_sql)
  AND state NOT IN ('succeeded', 'failed', 'cancelled')")
lost=$(q "SELECT count(*) FROM tasks t JOIN runs r ON r.key = t.run_key
  WHERE r.run_id IN ($runs_sql) AND t.state = 8")
integrity=$(q "PRAGMA integrity_check")
settled_late=$(grep -c "settled .* by its late final report" "$WORK/controller.log" || true)
stats() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "median %.2f s, worst %.2f s", a[int((NR+1)/2)], a[NR]}'; }

echo
echo "runs: ${#RUNS[@]} ($CONTROLLER_KILLS controller kills, $AGENT_KILLS agent kills, $PARTITIONS partitions, $DISK_FULL disk-full)"
echo "tasks succeeded: $succeeded_tasks, lost: $lost, settled by a late final report: $settled_late"
echo "samples of succeeded tasks: measured $measured, stored $stored, missing $((measured - stored))"
echo "duplicate samples: $duplicates"
echo "runs left non-terminal: $non_terminal"
echo "integrity_check: $integrity"
((${#RETURNS[@]})) && echo "nodes back after a controller restart: $(stats "${RETURNS[@]}")"
((${#FULL_RECOVERY[@]})) && echo "run terminal after the disk was freed: $(stats "${FULL_RECOVERY[@]}")"
echo "agents on their own certificate (mTLS): $(cat "$WORK"/agent-*.log | grep -c "certificate (mTLS)") agent starts of $((${#AGENTS[@]} + AGENT_KILLS))"
echo "agent dials that found no controller: $(cat "$WORK"/agent-*.log | grep -c "failed to connect")"
echo "logs and history in $WORK"
