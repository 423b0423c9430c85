// agent/benchmarks/net/socket_tuning.h — the per-socket settings a
// throughput test may ask for (buffer sizes, congestion control) and the
// kernel's TCP counters of a connection (internal to the TCP engine,
// tcp_engine.h). Linux only.
//
// Pure wrappers around setsockopt/getsockopt; no state. Errors: a
// congestion control the node does not have, or may not use, is
// FAILED_PRECONDITION naming it and what the node offers; any other
// failure is the errno's status (pairwise::ErrnoStatus).
#ifndef FLEETBENCH_AGENT_BENCHMARKS_NET_SOCKET_TUNING_H_
#define FLEETBENCH_AGENT_BENCHMARKS_NET_SOCKET_TUNING_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetbench::agent::net {

// Counters from TCP_INFO over a connection's life; -1 where the kernel does
// not report one (tcpi_dsack_dups and tcpi_reord_seen need Linux 5.0).
struct TcpCounters {
  int64_t retransmits = -1;  // tcpi_total_retrans: segments sent again
  // tcpi_dsack_dups: retransmitted segments the receiver says it already
  // had (DSACK), i.e. not lost but late: reordering, or a timer too eager.
  int64_t spurious_retransmits = -1;
  int64_t reordering = -1;  // tcpi_reord_seen: reordering events seen
};

absl::StatusOr<TcpCounters> ReadTcpCounters(int fd);
// after - before, field by field; -1 where either is unknown.
TcpCounters Subtract(const TcpCounters& after, const TcpCounters& before);
// a + b, field by field; -1 where either is unknown.
TcpCounters Add(const TcpCounters& a, const TcpCounters& b);

// SO_SNDBUF and SO_RCVBUF to `bytes` (as iperf3 -w does; the kernel doubles
// the value for its bookkeeping and caps it at net.core.[wr]mem_max). For
// iperf3's meaning, set them before the handshake (on the connecting socket
// and on the listener): Linux fixes the window clamp from the receive
// buffer then, and a buffer set later allows a larger window.
absl::Status SetSocketBuffers(int fd, int64_t bytes);
// What the kernel reports for SO_SNDBUF / SO_RCVBUF now (-1 on failure).
struct SocketBuffers {
  int64_t send_bytes = -1;
  int64_t receive_bytes = -1;
};
SocketBuffers ReadSocketBuffers(int fd);

// TCP_CONGESTION. A name the node lacks (not in
// net.ipv4.tcp_available_congestion_control) or may not use (not in
// tcp_allowed_congestion_control, without CAP_NET_ADMIN) is
// FAILED_PRECONDITION: "net: congestion: 'x' is not available on this node
// (it has: reno cubic bbr)".
absl::Status SetCongestion(int fd, const std::string& name);
// The connection's congestion control, "" when it cannot be read.
std::string ReadCongestion(int fd);

// A congestion control's name as the kernel spells them: 1..15 characters
// of [a-z0-9_-] (TCP_CA_NAME_MAX is 16 with the NUL).
bool IsCongestionName(absl::string_view name);

}  // namespace fleetbench::agent::net

#endif  // FLEETBENCH_AGENT_BENCHMARKS_NET_SOCKET_TUNING_H_
