#!/usr/bin/env bash
# bench/net_vs_iperf3.sh — runs the "net" plugin and iperf3 on the same link,
# side by side, and prints fleetbench/iperf3 throughput ratios.
#
# The link: two network namespaces made here, fbA (10.77.0.1/24) and fbB
# (10.77.0.2/24), joined by a veth pair (fbvA in fbA, fbvB in fbB). No
# traffic leaves them; both are deleted on exit, whatever happens. Servers
# run in fbA, clients in fbB, so "forward" is fbB -> fbA and "reverse" is
# fbA -> fbB.
#
# Builds nothing; needs root, ip, tc, iperf3, jq and setsid. Usage:
#   bench/net_vs_iperf3.sh PATH/TO/fleetbench_net_cli
# Settings come from the environment (defaults in brackets):
#   STREAMS [4]  DURATION [10]  OMIT [2]  ROUNDS [3]
#   LINKS ["unlimited 1gbit 200mbit"]  each entry is "unlimited" (the bare
#         veth) or a tbf rate: then both veth ends get
#         `tc qdisc replace dev <veth> root tbf rate <rate> burst 256kbit
#         latency 50ms`, so each direction is shaped on its sending side.
#   NICE [unset]  e.g. -10: run everything in a session of its own whose
#         scheduling group gets this nice value, so that other work on a
#         shared machine disturbs both tools less (same for both).
# Each round runs, per link, the plugin once (forward, reverse and a
# latency test, as the agent would) and iperf3 four times:
#   iperf3      one process, `iperf3 -c A -P STREAMS -t DURATION -O OMIT`
#               (then -R). iperf3 3.12 serves all streams from ONE thread.
#   iperf3 xP   STREAMS processes at once, each -P 1 on its own port (then
#               -R), receiver rates summed: one thread per stream, as the
#               plugin (and iperf3 >= 3.16) does.
# against the plugin's streams=STREAMS duration_s=DURATION warmup_s=OMIT.
# The order (plugin first or iperf3 first) alternates between rounds.
# iperf3's number is always the receiver's (end.sum_received), as the
# plugin's is. The summary gives medians over rounds and, for ratios, the
# median of the per-round ratios with their range. For shaped links it
# also prints the goodput a saturated link carries: rate x MSS/(MTU+14),
# tbf counting each 1448-byte segment as a 1514-byte frame.
set -euo pipefail

if [[ $# -lt 1 || ! -x $1 ]]; then
  echo "usage: $0 PATH/TO/fleetbench_net_cli" >&2
  exit 2
fi
cli=$(realpath "$1")
streams=${STREAMS:-4}
duration=${DURATION:-10}
omit=${OMIT:-2}
rounds=${ROUNDS:-3}
links=${LINKS:-unlimited 1gbit 200mbit}

if [[ -n ${NICE:-} && -z ${FB_NET_VS_IPERF3_SESSION:-} ]]; then
  FB_NET_VS_IPERF3_SESSION=1 exec setsid -w "$0" "$@"
fi
if [[ -n ${NICE:-} ]]; then
  echo "$NICE" >/proc/self/autogroup 2>/dev/null || true
  renice -n "$NICE" -p $$ >/dev/null
fi

for tool in ip tc iperf3 jq setsid; do
  command -v "$tool" >/dev/null || { echo "$0: needs $tool" >&2; exit 2; }
done
if [[ $(id -u) -ne 0 ]]; then
  echo "$0: needs root (network namespaces)" >&2
  exit 2
fi

ns_a=fbA
ns_b=fbB
addr_a=10.77.0.1
addr_b=10.77.0.2
for ns in $ns_a $ns_b; do
  if ip netns list | grep -qw "$ns"; then
    echo "$0: namespace $ns already exists; remove it (ip netns del $ns) first" >&2
    exit 2
  fi
done

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip netns del $ns_a 2>/dev/null || true
  ip netns del $ns_b 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

in_a() { ip netns exec $ns_a "$@"; }
in_b() { ip netns exec $ns_b "$@"; }

ip netns add $ns_a
ip netns add $ns_b
ip link add fbvA netns $ns_a type veth peer name fbvB netns $ns_b
in_a ip addr add $addr_a/24 dev fbvA
in_b ip addr add $addr_b/24 dev fbvB
for ns in $ns_a $ns_b; do ip -n $ns link set lo up; done
in_a ip link set fbvA up
in_b ip link set fbvB up

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r) $(iperf3 --version | head -1)"
echo "# $(nproc) CPUs, congestion control $(in_a cat /proc/sys/net/ipv4/tcp_congestion_control)"
echo "# veth fbvA $addr_a (ns $ns_a, servers) <-> fbvB $addr_b (ns $ns_b, clients)"
echo "# streams $streams, duration $duration s, omit/warm-up $omit s, rounds $rounds"

shape() {  # link
  local dev
  for dev in "$ns_a fbvA" "$ns_b fbvB"; do
    set -- $dev
    if [[ $link == unlimited ]]; then
      ip netns exec "$1" tc qdisc del dev "$2" root 2>/dev/null || true
    else
      local cmd=(tc qdisc replace dev "$2" root tbf rate "$link" burst 256kbit latency 50ms)
      echo "\$ ip netns exec $1 ${cmd[*]}" >&2
      ip netns exec "$1" "${cmd[@]}"
    fi
  done
}

wait_for_file() {  # path
  for _ in $(seq 100); do
    [[ -s $1 ]] && return 0
    sleep 0.05
  done
  echo "$0: $1 did not appear" >&2
  return 1
}

run_ours() {  # out.json
  rm -f "$work/port"
  echo "\$ ip netns exec $ns_a $cli server bind=$addr_a accept_timeout_s=30 --port_file=PORT_FILE &" >&2
  in_a "$cli" server bind=$addr_a accept_timeout_s=30 --port_file="$work/port" \
    2>"$work/ours-server.log" &
  local server=$!
  pids+=("$server")
  wait_for_file "$work/port"
  local args=(client peer=$addr_a:$(cat "$work/port") streams="$streams"
              duration_s="$duration" warmup_s="$omit" reverse=1
              latency_count=2000)
  echo "\$ ip netns exec $ns_b $cli ${args[*]}" >&2
  in_b "$cli" "${args[@]}" 2>"$work/ours-client.log" | jq -s . >"$1"
  wait "$server"
}

wait_listening() {  # port
  for _ in $(seq 100); do
    in_a ss -ltn 2>/dev/null | grep -q "$addr_a:$1 " && return 0
    sleep 0.05
  done
  echo "$0: iperf3 server on port $1 did not start" >&2
  return 1
}

# run_iperf3 single|multi forward|reverse out: writes "Gbps retransmits".
run_iperf3() {
  local procs=1 per=$streams flag=() port servers=() clients=()
  [[ $1 == multi ]] && { procs=$streams; per=1; }
  [[ $2 == reverse ]] && flag=(-R)
  echo "\$ ip netns exec $ns_a iperf3 -s -1 -B $addr_a -p 5201 &$( ((procs > 1)) && echo " (x$procs, ports 5201..$((5200 + procs)))")" >&2
  for ((k = 0; k < procs; k++)); do
    port=$((5201 + k))
    in_a iperf3 -s -1 -B $addr_a -p $port >/dev/null 2>&1 &
    servers+=($!)
    pids+=($!)
  done
  for ((k = 0; k < procs; k++)); do wait_listening $((5201 + k)); done
  for ((k = 0; k < procs; k++)); do
    port=$((5201 + k))
    local cmd=(iperf3 -c $addr_a -p $port -P "$per" -t "$duration" -O "$omit" --json "${flag[@]}")
    ((k == 0)) && echo "\$ ip netns exec $ns_b ${cmd[*]}$( ((procs > 1)) && echo " (x$procs, ports 5201..$((5200 + procs)))")" >&2
    in_b "${cmd[@]}" >"$work/iperf3-$k.json" &
    clients+=($!)
  done
  for pid in "${clients[@]}"; do wait "$pid"; done
  for pid in "${servers[@]}"; do wait "$pid" || true; done
  jq -rs '[(map(.end.sum_received.bits_per_second) | add / 1e9),
           (map(.end.sum_sent.retransmits // 0) | add)] | @tsv' \
    "$work"/iperf3-?.json "$work"/iperf3-??.json 2>/dev/null >"$3" || true
  rm -f "$work"/iperf3-*.json
}

ours_value() {  # json metric
  jq -r --arg m "$2" '.[] | select(.metric == $m) | .value' "$1"
}

rows=$work/rows
: >"$rows"
for ((round = 1; round <= rounds; round++)); do
  for link in $links; do
    shape
    ours=$work/ours-$link-$round.json
    runs=("single forward" "single reverse" "multi forward" "multi reverse")
    if ((round % 2 == 1)); then run_ours "$ours"; fi
    for r in "${runs[@]}"; do
      set -- $r
      run_iperf3 "$1" "$2" "$work/iperf3-$1-$2"
    done
    if ((round % 2 == 0)); then run_ours "$ours"; fi
    for dir in forward reverse; do
      metric=net.tcp.Gbps
      [[ $dir == reverse ]] && metric=net.tcp.reverse.Gbps
      read -r single_gbps single_retrans <"$work/iperf3-single-$dir"
      read -r multi_gbps _ <"$work/iperf3-multi-$dir"
      ours_retrans=-
      [[ $dir == forward ]] && ours_retrans=$(ours_value "$ours" net.tcp.retransmits)
      [[ $dir == forward ]] || single_retrans=-
      echo "$round $link $dir $(ours_value "$ours" $metric) $single_gbps $multi_gbps $ours_retrans $single_retrans $(cut -d' ' -f1 /proc/loadavg)" >>"$rows"
    done
    echo "# round $round $link: rtt p50 $(ours_value "$ours" net.tcp.rtt_p50_us) us, p99 $(ours_value "$ours" net.tcp.rtt_p99_us) us (fleetbench ping-pong, 64 B)"
  done
done

mtu=$(in_a cat /sys/class/net/fbvA/mtu)
echo
echo "Per round (Gbps; ratio = fleetbench / iperf3):"
printf '| round | link | direction | fleetbench | iperf3 | ratio | iperf3 x%s | ratio | retransmits fleetbench / iperf3 | load |\n' "$streams"
printf '|---|---|---|---|---|---|---|---|---|---|\n'
while read -r round link dir a b c ra rb load; do
  printf '| %s | %s | %s | %.3f | %.3f | %s | %.3f | %s | %s / %s | %s |\n' \
    "$round" "$link" "$dir" "$a" "$b" \
    "$(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }')" \
    "$c" \
    "$(awk -v a="$a" -v b="$c" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }')" \
    "$ra" "$rb" "$load"
done <"$rows"

echo
echo "Median over ${rounds} round(s) (Gbps; ratio: median of per-round ratios [min..max]):"
printf '| link | direction | saturated goodput | fleetbench | iperf3 | ratio | iperf3 x%s | ratio |\n' "$streams"
printf '|---|---|---|---|---|---|---|---|\n'
awk -v mtu="$mtu" '
  function median(list,   n, i, j, t, v) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] + 0 > v[j] + 0; j--) {
      t = v[j]; v[j] = v[j-1]; v[j-1] = t
    }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  function lo(list,   n, i, v, m) { n = split(list, v, " "); m = v[1]; for (i = 2; i <= n; i++) if (v[i] + 0 < m + 0) m = v[i]; return m }
  function hi(list,   n, i, v, m) { n = split(list, v, " "); m = v[1]; for (i = 2; i <= n; i++) if (v[i] + 0 > m + 0) m = v[i]; return m }
  function goodput(link,   r, unit) {
    if (link == "unlimited") return "-"
    r = link + 0; unit = tolower(substr(link, length(r "") + 1))
    if (unit ~ /^g/) r *= 1e9; else if (unit ~ /^m/) r *= 1e6; else if (unit ~ /^k/) r *= 1e3
    return sprintf("%.3f", r * (mtu - 52) / (mtu + 14) / 1e9)
  }
  {
    key = $2 " " $3
    if (!(key in ours)) order[++keys] = key
    ours[key] = ours[key] " " $4
    single[key] = single[key] " " $5
    multi[key] = multi[key] " " $6
    if ($5 > 0) rs[key] = rs[key] " " ($4 / $5)
    if ($6 > 0) rm[key] = rm[key] " " ($4 / $6)
  }
  END {
    for (k = 1; k <= keys; k++) {
      key = order[k]
      split(key, f, " ")
      printf "| %s | %s | %s | %.3f | %.3f | %.3f [%.3f..%.3f] | %.3f | %.3f [%.3f..%.3f] |\n",
             f[1], f[2], goodput(f[1]), median(ours[key]), median(single[key]),
             median(rs[key]), lo(rs[key]), hi(rs[key]), median(multi[key]),
             median(rm[key]), lo(rm[key]), hi(rm[key])
    }
  }' "$rows"
