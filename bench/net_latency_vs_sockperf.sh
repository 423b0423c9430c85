#!/usr/bin/env bash
# bench/net_latency_vs_sockperf.sh — the "net" plugin's latency-only mode
# (mode=latency: TCP ping-pong of small messages) against sockperf's TCP
# ping-pong on the same link, alternating, with a sockperf-vs-sockperf
# control. Prints per-round p50/p99 round trips and the medians of the
# per-round ratios.
#
# The link: network namespaces fbLA (10.78.0.1/24, servers) and fbLB
# (10.78.0.2/24, clients) joined by a veth pair, deleted on exit. iperf3
# has no round-trip mode; sockperf (Debian `sockperf`) is the reference:
#   sockperf server --tcp -i 10.78.0.1 -p PORT      (a fresh one per run)
#   sockperf ping-pong --tcp -i 10.78.0.1 -p PORT -m MSG -t SECONDS --full-rtt --no-rdtsc
# (--no-rdtsc: sockperf times with the monotonic clock, as the plugin does,
# not with a TSC frequency it estimated; SOCKPERF_ARGS="" drops it.)
# Both keep Nagle off (sockperf's default for ping-pong, the plugin's
# TCP_NODELAY), both time each round trip on the client from the send to
# the last byte of the reply; sockperf warms up too (its default).
#
# Builds nothing; needs root, ip, sockperf, jq. Usage:
#   bench/net_latency_vs_sockperf.sh PATH/TO/fleetbench_net_cli
# Settings (defaults in brackets): ROUNDS [5]  MSG [64] bytes per message
#   COUNT [20000] the plugin's timed round trips  SOCKPERF_S [2] sockperf's run
#   NICE [unset] as in bench/net_vs_iperf3.sh.
set -euo pipefail

if [[ $# -lt 1 || ! -x $1 ]]; then
  echo "usage: $0 PATH/TO/fleetbench_net_cli" >&2
  exit 2
fi
cli=$(realpath "$1")
rounds=${ROUNDS:-5}
msg=${MSG:-64}
count=${COUNT:-20000}
seconds=${SOCKPERF_S:-2}

if [[ -n ${NICE:-} && -z ${FB_NET_LATENCY_SESSION:-} ]]; then
  FB_NET_LATENCY_SESSION=1 exec setsid -w "$0" "$@"
fi
if [[ -n ${NICE:-} ]]; then
  echo "$NICE" >/proc/self/autogroup 2>/dev/null || true
  renice -n "$NICE" -p $$ >/dev/null
fi
for tool in ip sockperf jq; do
  command -v "$tool" >/dev/null || { echo "$0: needs $tool" >&2; exit 2; }
done
[[ $(id -u) -eq 0 ]] || { echo "$0: needs root (network namespaces)" >&2; exit 2; }

ns_a=fbLA ns_b=fbLB addr_a=10.78.0.1 addr_b=10.78.0.2
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
ip link add fbLvA netns $ns_a type veth peer name fbLvB netns $ns_b
in_a ip addr add $addr_a/24 dev fbLvA
in_b ip addr add $addr_b/24 dev fbLvB
for ns in $ns_a $ns_b; do ip -n $ns link set lo up; done
in_a ip link set fbLvA up
in_b ip link set fbLvB up

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r) $(sockperf --version 2>&1 | grep -o 'Version: [^ ]*' | head -1)"
echo "# $(nproc) CPUs; veth $addr_a (ns $ns_a, servers) <-> $addr_b (ns $ns_b, clients)"
echo "# message $msg B, plugin $count round trips, sockperf $seconds s, rounds $rounds"

ours() {  # -> "p50 p99" in us
  rm -f "$work/port"
  in_a "$cli" server bind=$addr_a accept_timeout_s=30 --port_file="$work/port" \
    2>"$work/ours-server.log" &
  local server=$!
  pids+=("$server")
  for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.05; done
  local args=(client peer=$addr_a:$(cat "$work/port") mode=latency
              latency_count="$count" message_bytes="$msg")
  ((round == 1)) && echo "\$ ip netns exec $ns_b $cli ${args[*]}" >&2
  in_b "$cli" "${args[@]}" 2>"$work/ours-client.log" | jq -s -r \
    '[(.[] | select(.metric == "net.tcp.rtt_p50_us") | .value),
      (.[] | select(.metric == "net.tcp.rtt_p99_us") | .value)] | join(" ")'
  wait "$server"
}

# A fresh sockperf server per run (one that served a client before answers
# the next one several times slower here), started as ip's own process (ip
# netns exec execs it) so that its pid is the server's.
sockperf_port=11111
theirs() {  # -> "p50 p99" in us
  ip netns exec $ns_a sockperf server --tcp -i $addr_a -p $sockperf_port \
    >"$work/sockperf-server.log" 2>&1 &
  local server=$!
  for _ in $(seq 100); do
    in_a ss -ltn 2>/dev/null | grep -q "$addr_a:$sockperf_port " && break
    sleep 0.05
  done
  local cmd=(sockperf ping-pong --tcp -i $addr_a -p $sockperf_port -m "$msg" -t "$seconds" --full-rtt
             ${SOCKPERF_ARGS---no-rdtsc})
  ((round == 1)) && echo "\$ ip netns exec $ns_b ${cmd[*]}" >&2
  timeout $((seconds + 30)) ip netns exec $ns_b "${cmd[@]}" >"$work/sockperf.log" 2>&1 || true
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  # Its listening port must be free before the next one binds it.
  for _ in $(seq 100); do
    in_a ss -ltn 2>/dev/null | grep -q "$addr_a:$sockperf_port " || break
    sleep 0.05
  done
  awk '/percentile 50.000 =/ { p50 = $NF } /percentile 99.000 =/ { p99 = $NF }
       END { if (p50 == "" || p99 == "") exit 1; print p50, p99 }' "$work/sockperf.log" ||
    { echo "$0: no percentiles in sockperf's output:" >&2; cat "$work/sockperf.log" >&2; exit 1; }
}

rows=$work/rows
: >"$rows"
for ((round = 1; round <= rounds; round++)); do
  if ((round % 2 == 1)); then
    a=$(ours); b=$(theirs); c=$(theirs)
  else
    b=$(theirs); c=$(theirs); a=$(ours)
  fi
  echo "$round $a $b $c $(cut -d' ' -f1 /proc/loadavg)" >>"$rows"
done

echo
echo "Per round (round trip, us; ratio = fleetbench / sockperf; control = sockperf again / sockperf):"
echo "| round | fleetbench p50 | sockperf p50 | ratio | control | fleetbench p99 | sockperf p99 | ratio | control | load |"
echo "|---|---|---|---|---|---|---|---|---|---|"
awk '{ printf "| %s | %.2f | %.2f | %.3f | %.3f | %.2f | %.2f | %.3f | %.3f | %s |\n",
         $1, $2, $4, $2 / $4, $6 / $4, $3, $5, $3 / $5, $7 / $5, $8 }' "$rows"
echo
echo "Median over $rounds rounds [min..max of the per-round ratios]:"
echo "| percentile | fleetbench us | sockperf us | ratio | control (sockperf/sockperf) |"
echo "|---|---|---|---|---|"
awk '
  function sortv(list, v,   n, i, j, t) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] + 0 > v[j] + 0; j--) {
      t = v[j]; v[j] = v[j-1]; v[j-1] = t
    }
    return n
  }
  function median(list,   n, v) { n = sortv(list, v); return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
  function range(list,   n, v) { n = sortv(list, v); return sprintf("%.3f [%.3f..%.3f]", median(list), v[1], v[n]) }
  { o50 = o50 " " $2; o99 = o99 " " $3; s50 = s50 " " $4; s99 = s99 " " $5
    r50 = r50 " " ($2 / $4); r99 = r99 " " ($3 / $5); c50 = c50 " " ($6 / $4); c99 = c99 " " ($7 / $5) }
  END {
    printf "| p50 | %.2f | %.2f | %s | %s |\n", median(o50), median(s50), range(r50), range(c50)
    printf "| p99 | %.2f | %.2f | %s | %s |\n", median(o99), median(s99), range(r99), range(c99)
  }' "$rows"
