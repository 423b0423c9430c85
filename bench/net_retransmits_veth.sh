#!/usr/bin/env bash
# bench/net_retransmits_veth.sh — where the retransmits on a tbf-shaped veth
# come from. Runs, on one shaped veth pair, the plugin and iperf3 with the
# same number of streams, as one sending thread (iperf3 -P N, 3.12) and as
# N sending threads (the plugin; N iperf3 processes), each with and without
# RPS on the receiving veth, and prints per run what the kernel counted:
#   retrans   TcpRetransSegs of the sending namespace (nstat delta)
#   dsack     TcpExtTCPDSACKRecvSegs: segments the receiver reported as
#             received twice, i.e. retransmitted although not lost
#   reorder   TcpExtTCPSACKReorder + TCPTSReorder: reordering detected
#   tbf_drop  packets the shaper dropped (tc -s), both veth ends
#   backlog_drop  packets dropped for a full per-CPU backlog
#             (/proc/net/softnet_stat, column 2, all CPUs)
# and one `ss -ti` line per sending socket half-way through the run
# (retrans, reord_seen, dsack_dups per stream) in the log folder.
#
# Needs root, ip, tc, iperf3, jq, nstat, ss. Usage:
#   bench/net_retransmits_veth.sh PATH/TO/fleetbench_net_cli [LOGDIR]
# Settings: RATE [3gbit] BURST [256kbit] STREAMS [2] DURATION [5] OMIT [1]
#   ROUNDS [2] (each round runs every case once, in order).
set -euo pipefail
[[ $# -ge 1 && -x $1 ]] || { echo "usage: $0 PATH/TO/fleetbench_net_cli [LOGDIR]" >&2; exit 2; }
cli=$(realpath "$1")
logdir=${2:-$(mktemp -d)}
mkdir -p "$logdir"
rate=${RATE:-3gbit} burst=${BURST:-256kbit} streams=${STREAMS:-2}
duration=${DURATION:-5} omit=${OMIT:-1} rounds=${ROUNDS:-2}
for tool in ip tc iperf3 jq nstat ss; do
  command -v "$tool" >/dev/null || { echo "$0: needs $tool" >&2; exit 2; }
done
[[ $(id -u) -eq 0 ]] || { echo "$0: needs root" >&2; exit 2; }

ns_a=fbRA ns_b=fbRB addr_a=10.79.0.1 addr_b=10.79.0.2
for ns in $ns_a $ns_b; do
  ip netns list | grep -qw "$ns" && { echo "$0: namespace $ns exists" >&2; exit 2; }
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
ip link add fbRvA netns $ns_a type veth peer name fbRvB netns $ns_b
in_a ip addr add $addr_a/24 dev fbRvA
in_b ip addr add $addr_b/24 dev fbRvB
for ns in $ns_a $ns_b; do ip -n $ns link set lo up; done
in_a ip link set fbRvA up
in_b ip link set fbRvB up
for d in "$ns_a fbRvA" "$ns_b fbRvB"; do
  set -- $d
  ip netns exec "$1" tc qdisc replace dev "$2" root tbf rate "$rate" burst "$burst" latency 50ms
done
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r) $(iperf3 --version | head -1); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# tbf rate $rate burst $burst latency 50ms on both veth ends; $streams streams, $duration s (+$omit s warm-up), forward (fbRB -> fbRA)"

rps() {  # mask for the receiving veth
  in_a sh -c "echo $1 >/sys/class/net/fbRvA/queues/rx-0/rps_cpus"
}
backlog_drops() {
  local sum=0 processed dropped rest
  while read -r processed dropped rest; do sum=$((sum + 16#$dropped)); done </proc/net/softnet_stat
  echo $sum
}
tbf_drops() {
  { in_a tc -s qdisc show dev fbRvA; in_b tc -s qdisc show dev fbRvB; } |
    awk '/dropped/ { gsub(",", ""); for (i = 1; i <= NF; i++) if ($i == "dropped") s += $(i + 1) } END { print s + 0 }'
}
snapshot_ss() {  # label
  sleep "$(awk -v d="$duration" -v o="$omit" 'BEGIN { print o + d / 2 }')"
  in_b ss -tin dst $addr_a 2>/dev/null | grep -E 'retrans|reord|dsack' >"$logdir/ss-$1.txt" || true
}

plugin() {  # streams
  rm -f "$work/port"
  in_a "$cli" server bind=$addr_a accept_timeout_s=30 --port_file="$work/port" 2>/dev/null &
  local server=$!
  pids+=("$server")
  for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.05; done
  in_b "$cli" client peer=$addr_a:$(cat "$work/port") mode=throughput reverse=0 \
    streams="$1" duration_s="$duration" warmup_s="$omit" 2>/dev/null |
    jq -s -r '(.[] | select(.metric == "net.tcp.Gbps") | .value) as $g |
              (.[] | select(.metric == "net.tcp.retransmits.count")) as $r |
              "\($g) \($r.value) \($r.params.spurious_retransmits // "-")"'
  wait "$server"
}
iperf_one() {  # streams: one process, one thread
  in_a iperf3 -s -1 -B $addr_a -p 5301 >/dev/null 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do in_a ss -ltn | grep -q "$addr_a:5301 " && break; sleep 0.05; done
  in_b iperf3 -c $addr_a -p 5301 -P "$1" -t "$duration" -O "$omit" --json |
    jq -r '"\(.end.sum_received.bits_per_second / 1e9) \(.end.sum_sent.retransmits) -"'
  wait
}
iperf_many() {  # streams: one process (and thread) per stream
  local k clients=()
  for ((k = 1; k <= $1; k++)); do in_a iperf3 -s -1 -B $addr_a -p $((5310 + k)) >/dev/null 2>&1 & pids+=($!); done
  for ((k = 1; k <= $1; k++)); do
    for _ in $(seq 100); do in_a ss -ltn | grep -q "$addr_a:$((5310 + k)) " && break; sleep 0.05; done
  done
  for ((k = 1; k <= $1; k++)); do
    in_b iperf3 -c $addr_a -p $((5310 + k)) -P 1 -t "$duration" -O "$omit" --json >"$work/m$k.json" &
    clients+=($!)
  done
  wait "${clients[@]}"
  wait
  jq -rs '"\(map(.end.sum_received.bits_per_second) | add / 1e9) \(map(.end.sum_sent.retransmits) | add) -"' "$work"/m*.json
  rm -f "$work"/m*.json
}

all_cpus=$(printf '%x' $(((1 << $(nproc)) - 1)))
cases=("plugin $streams" "iperf_one $streams" "iperf_many $streams" "plugin 1" "iperf_one 1")
echo
echo "| round | rps | run | senders (threads) | Gbps | retransmits (tool) | spurious (tool) | nstat retrans | nstat dsack | nstat reorder | tbf drops | backlog drops |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for ((round = 1; round <= rounds; round++)); do
  for mask in 0 "$all_cpus"; do
    rps "$mask"
    for c in "${cases[@]}"; do
      set -- $c
      threads=$2
      [[ $1 == iperf_one ]] && threads=1
      label="r$round-rps$mask-$1-$2"
      export NSTAT_HISTORY=$work/nstat
      in_b nstat -n
      b0=$(backlog_drops) t0=$(tbf_drops)
      snapshot_ss "$label" &
      out=$($1 "$2")
      wait $! 2>/dev/null || true
      read -r gbps retr spur <<<"$out"
      read -r nr nd no <<<"$(in_b nstat -s | awk '$1 == "TcpRetransSegs" { r = $2 } $1 == "TcpExtTCPDSACKRecvSegs" { d = $2 }
                          $1 == "TcpExtTCPSACKReorder" || $1 == "TcpExtTCPTSReorder" { o += $2 } END { print r + 0, d + 0, o + 0 }')"
      printf '| %s | %s | %s | %s streams (%s) | %.3f | %s | %s | %s | %s | %s | %s | %s |\n' \
        "$round" "$mask" "$1" "$2" "$threads" "$gbps" "$retr" "$spur" "$nr" "$nd" "$no" \
        $(($(tbf_drops) - t0)) $(($(backlog_drops) - b0))
    done
  done
done
echo
echo "# ss -ti snapshots: $logdir"
