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
#   OURS_ARGS [""]  more key=value for the plugin's client, e.g.
#         "write_bytes=16K" or "rate_Mbps=600" (all streams together)
#   IPERF_ARGS [""]  the same setting for every iperf3 client, e.g. "-l 16K"
#         or "-b 300M" (per stream: 600 Mbit/s over 2 streams)
#   MULTI [1]  0 skips the "iperf3 xP" runs (saves a third of the time).
#   RPS [0]  1 steers each veth's received packets by flow hash to one CPU
#         (rps_cpus = all CPUs), as a NIC's RSS queues do. Without it veth
#         hands each packet to the backlog of the CPU that dequeued it from
#         tbf, so a flow can be split over two CPUs' backlogs and arrive out
#         of order; TCP then retransmits segments that were never lost
#         (docs/network.md, "Retransmits on a veth").
# Each round runs, per link, the plugin once (forward, reverse and a
# latency test, as the agent would) and iperf3 six times:
#   iperf3      one process, `iperf3 -c A -P STREAMS -t DURATION -O OMIT`
#               (then -R). iperf3 3.12 serves all streams from ONE thread.
#   iperf3 again  the same once more (forward, reverse): the control, how
#               far iperf3 is from itself on this machine.
#   iperf3 xP   STREAMS processes at once, each -P 1 on its own port (then
#               -R), receiver rates summed: one thread per stream, as the
#               plugin (and iperf3 >= 3.16) does.
# against the plugin's streams=STREAMS duration_s=DURATION warmup_s=OMIT.
# The order (plugin first or iperf3 first) alternates between rounds.
# iperf3's number is always the receiver's (end.sum_received), as the
# plugin's is. Retransmits: each tool's own count (the plugin's
# net.tcp.retransmits.count, iperf3's sum_sent.retransmits), and, the same
# for both, the sending namespace's TcpRetransSegs and
# TcpExtTCPDSACKRecvSegs deltas from nstat (segments the receiver reported
# as received twice: retransmits that were not needed). The summary gives medians over rounds and, for ratios, the
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
multi=${MULTI:-1}
rps=${RPS:-0}

if [[ -n ${NICE:-} && -z ${FB_NET_VS_IPERF3_SESSION:-} ]]; then
  FB_NET_VS_IPERF3_SESSION=1 exec setsid -w "$0" "$@"
fi
if [[ -n ${NICE:-} ]]; then
  echo "$NICE" >/proc/self/autogroup 2>/dev/null || true
  renice -n "$NICE" -p $$ >/dev/null
fi

for tool in ip tc iperf3 jq setsid nstat; do
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
if [[ $rps == 1 ]]; then
  mask=$(printf '%x' $(((1 << $(nproc)) - 1)))
  in_a sh -c "echo $mask >/sys/class/net/fbvA/queues/rx-0/rps_cpus"
  in_b sh -c "echo $mask >/sys/class/net/fbvB/queues/rx-0/rps_cpus"
fi

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r) $(iperf3 --version | head -1)"
echo "# $(nproc) CPUs, congestion control $(in_a cat /proc/sys/net/ipv4/tcp_congestion_control)"
echo "# veth fbvA $addr_a (ns $ns_a, servers) <-> fbvB $addr_b (ns $ns_b, clients)"
echo "# streams $streams, duration $duration s, omit/warm-up $omit s, rounds $rounds, rps $rps"
echo "# plugin settings: ${OURS_ARGS:-(defaults)}; iperf3 settings: ${IPERF_ARGS:-(defaults)}"

# The sending namespace's TCP counters, as "retransmitted dsack_segments";
# nstat -n before a run resets the history, nstat -a after reads deltas.
# nstat keeps its history in one file per user unless told otherwise: one
# file per namespace here.
nstat_reset() {
  NSTAT_HISTORY=$work/nstat.$ns_a in_a nstat -n
  NSTAT_HISTORY=$work/nstat.$ns_b in_b nstat -n
}
nstat_read() {  # ns
  NSTAT_HISTORY=$work/nstat.$1 ip netns exec "$1" nstat -s 2>/dev/null |
    awk '$1 == "TcpRetransSegs" { r = $2 } $1 == "TcpExtTCPDSACKRecvSegs" { d = $2 }
         END { printf "%d %d\n", r, d }'
}

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
              latency_count=2000 ${OURS_ARGS:-})
  echo "\$ ip netns exec $ns_b $cli ${args[*]}" >&2
  nstat_reset
  in_b "$cli" "${args[@]}" 2>"$work/ours-client.log" | jq -s . >"$1"
  nstat_read $ns_b >"$1.nstat-forward"
  nstat_read $ns_a >"$1.nstat-reverse"
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
  nstat_reset
  for ((k = 0; k < procs; k++)); do
    port=$((5201 + k))
    local cmd=(iperf3 -c $addr_a -p $port -P "$per" -t "$duration" -O "$omit" --json "${flag[@]}" ${IPERF_ARGS:-})
    ((k == 0)) && echo "\$ ip netns exec $ns_b ${cmd[*]}$( ((procs > 1)) && echo " (x$procs, ports 5201..$((5200 + procs)))")" >&2
    in_b "${cmd[@]}" >"$work/iperf3-$k.json" &
    clients+=($!)
  done
  for pid in "${clients[@]}"; do wait "$pid"; done
  for pid in "${servers[@]}"; do wait "$pid" || true; done
  local sender=$ns_b
  [[ $2 == reverse ]] && sender=$ns_a
  local counters
  counters=$(nstat_read $sender)
  jq -rs --arg c "$counters" '[(map(.end.sum_received.bits_per_second) | add / 1e9),
           (map(.end.sum_sent.retransmits // 0) | add), $c] | join(" ")' \
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
    runs=("single forward" "single reverse" "again forward" "again reverse")
    ((multi)) && runs+=("multi forward" "multi reverse")
    if ((round % 2 == 1)); then run_ours "$ours"; fi
    for r in "${runs[@]}"; do
      set -- $r
      kind=$1
      [[ $kind == again ]] && kind=single
      run_iperf3 "$kind" "$2" "$work/iperf3-$1-$2"
    done
    if ((round % 2 == 0)); then run_ours "$ours"; fi
    for dir in forward reverse; do
      metric=net.tcp.Gbps
      [[ $dir == reverse ]] && metric=net.tcp.reverse.Gbps
      read -r single_gbps single_retrans single_nr single_nd <"$work/iperf3-single-$dir"
      read -r again_gbps again_retrans again_nr again_nd <"$work/iperf3-again-$dir"
      multi_gbps=0 multi_retrans=- multi_nr=- multi_nd=-
      ((multi)) && read -r multi_gbps multi_retrans multi_nr multi_nd <"$work/iperf3-multi-$dir"
      ours_retrans=$(ours_value "$ours" net.tcp.retransmits.count)
      if [[ $dir == reverse ]]; then
        ours_retrans=$(jq -r '.[] | select(.metric == "net.tcp.reverse.Gbps") | .params.retransmits // "-"' "$ours")
      fi
      read -r ours_nr ours_nd <"$ours.nstat-$dir"
      # Fields: round link dir | Gbps: ours single again multi | tools'
      # retransmits: ours single again multi | nstat retrans/dsack: ours
      # single again multi | load
      echo "$round $link $dir $(ours_value "$ours" $metric) $single_gbps $again_gbps $multi_gbps" \
           "$ours_retrans $single_retrans $again_retrans $multi_retrans" \
           "$ours_nr/$ours_nd $single_nr/$single_nd $again_nr/$again_nd $multi_nr/$multi_nd" \
           "$(cut -d' ' -f1 /proc/loadavg)" >>"$rows"
    done
    echo "# round $round $link: rtt p50 $(ours_value "$ours" net.tcp.rtt_p50_us) us, p99 $(ours_value "$ours" net.tcp.rtt_p99_us) us (fleetbench ping-pong, 64 B)"
  done
done

mtu=$(in_a cat /sys/class/net/fbvA/mtu)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0 && a != "-") printf "%.3f", a / b; else print "n/a" }'; }
echo
echo "Per round (Gbps; ratio = fleetbench / iperf3; control = iperf3 again / iperf3;"
echo "retransmits as each tool counts them in its window; nstat: the sending"
echo "namespace's TcpRetransSegs/TCPDSACKRecvSegs over the whole run, warm-up included):"
printf '| round | link | direction | fleetbench | iperf3 | ratio | control | iperf3 x%s | ratio | retransmits fleetbench / iperf3 / again / x%s | nstat retrans/dsack fleetbench / iperf3 / again / x%s | load |\n' "$streams" "$streams" "$streams"
printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
while read -r round link dir a b c d ra rb rc rd na nb nc nd load; do
  printf '| %s | %s | %s | %.3f | %.3f | %s | %s | %.3f | %s | %s / %s / %s / %s | %s / %s / %s / %s | %s |\n' \
    "$round" "$link" "$dir" "$a" "$b" "$(ratio "$a" "$b")" "$(ratio "$c" "$b")" \
    "$d" "$(ratio "$a" "$d")" "$ra" "$rb" "$rc" "$rd" "$na" "$nb" "$nc" "$nd" "$load"
done <"$rows"

echo
echo "Over ${rounds} round(s): medians, and for ratios the median of the per-round ratios [min..max]."
echo "Retransmit ratios use the tools' own counts (a round where iperf3 saw 0 is left out)."
printf '| link | direction | saturated goodput | fleetbench Gbps | iperf3 Gbps | ratio | control (iperf3/iperf3) | iperf3 x%s | ratio | retransmits fleetbench | iperf3 | ratio | control |\n' "$streams"
printf '|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
awk -v mtu="$mtu" '
  function sortv(list, v,   n, i, j, t) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] + 0 > v[j] + 0; j--) {
      t = v[j]; v[j] = v[j-1]; v[j-1] = t
    }
    return n
  }
  function median(list,   n, v) {
    n = sortv(list, v)
    if (n == 0) return "n/a"
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  function range(list,   n, v) {
    n = sortv(list, v)
    if (n == 0) return "n/a"
    return sprintf("%.3f [%.3f..%.3f]", median(list), v[1], v[n])
  }
  function num(x) { return x == "n/a" ? x : sprintf("%.3f", x) }
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
    multi[key] = multi[key] " " $7
    if ($5 > 0) rs[key] = rs[key] " " ($4 / $5)
    if ($5 > 0) rc[key] = rc[key] " " ($6 / $5)
    if ($7 > 0) rm[key] = rm[key] " " ($4 / $7)
    if ($8 != "-") rto[key] = rto[key] " " $8
    rti[key] = rti[key] " " $9
    if ($9 > 0 && $8 != "-") rtr[key] = rtr[key] " " ($8 / $9)
    if ($9 > 0) rtc[key] = rtc[key] " " ($10 / $9)
  }
  END {
    for (k = 1; k <= keys; k++) {
      key = order[k]
      split(key, f, " ")
      printf "| %s | %s | %s | %.3f | %.3f | %s | %s | %s | %s | %s | %s | %s | %s |\n",
             f[1], f[2], goodput(f[1]), median(ours[key]), median(single[key]),
             range(rs[key]), range(rc[key]), num(median(multi[key])), range(rm[key]),
             median(rto[key]), median(rti[key]), range(rtr[key]), range(rtc[key])
    }
  }' "$rows"
