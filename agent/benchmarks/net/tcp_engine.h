// agent/benchmarks/net/tcp_engine.h — node-to-node TCP measurement: the
// engine behind the "net" plugin, usable on its own (net_cli.cc does).
//
// Two roles. The server listens, announces its port through a callback and
// then does what the client asks on a control connection; the client
// connects, runs the tests and gets every result. Per test:
//   forward   client -> server, `streams` connections, one sender thread
//             each writing StreamSettings::write_bytes blocks (at most
//             at StreamSettings::rate_bps); the server counts
//             the bytes it RECEIVES between the end of the warm-up and the
//             end of the window, on its own clock, and reports them back
//             (iperf3 reports the receiver side the same way).
//   reverse   server -> client, the same with the roles swapped: the
//             client receives and counts.
//   latency   one TCP_NODELAY connection, message_bytes ping-pong round
//             trips timed by the client after kLatencyWarmupRoundTrips
//             untimed ones.
// Retransmits are tcpi_total_retrans summed over the SENDING sockets, as a
// delta between the receiver's window-open and window-close messages; so
// are the spurious ones (tcpi_dsack_dups) and reordering events.
// The exchange is in docs/network.md ("Control protocol").
//
// Errors: CANCELLED when `cancelled` returned true; DEADLINE_EXCEEDED when
// the peer did not connect or answer in time; UNAVAILABLE for refused,
// reset or closed connections; ABORTED when the peer gave up (it said why);
// INVALID_ARGUMENT for options out of range. Messages name the address.
//
// Timing: every wait is bounded (accept_timeout_s for the first client,
// fixed slack otherwise) and looks at `cancelled` at least every
// kPollSlice, so a run never hangs and ends within about 0.2 s of a cancel.
//
// Thread safety: each call is independent; it starts and joins its own
// threads (one per stream) and leaves none behind.
//
// Inside: tcp_server.cc and tcp_client.cc are the two roles;
// throughput_window.h how each end takes part in a measured window;
// stream_group.h the data connections' threads; test_request.h the TEST
// message; control_exchange.h the control-connection steps both share.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_NET_TCP_ENGINE_H_
#define FLEETBENCH_AGENT_BENCHMARKS_NET_TCP_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/pairwise/tcp_socket.h"

namespace fleetbench::agent::net {

// iperf3's default TCP block ("-l") for sends and receives.
inline constexpr size_t kStreamBufferBytes = 128 * 1024;
inline constexpr int kLatencyWarmupRoundTrips = 100;
inline constexpr int kMaxStreams = 64;
inline constexpr int kMaxMessageBytes = 1 << 20;
// Limits of StreamSettings (and of the plugin's parameters).
inline constexpr int64_t kMaxWriteBytes = 16 << 20;
inline constexpr int64_t kMinSocketBufferBytes = 4096;
inline constexpr int64_t kMaxSocketBufferBytes = 1 << 30;
inline constexpr double kMaxRateBps = 1e12;  // 1 Tbit/s
// Bumped on any incompatible change to the control exchange. 2: TEST
// carries StreamSettings and is answered ACCEPTING; FINISHED carries the
// sender's spurious retransmits, reordering and congestion control.
inline constexpr int kProtocolVersion = 2;

// How a throughput test's data connections carry bytes, as iperf3's
// options do. Both ends apply the buffers and congestion control to every
// data socket; the sending end writes write_bytes at a time, at most at
// rate_bps; the receiving end reads write_bytes at a time.
struct StreamSettings {
  int64_t write_bytes = kStreamBufferBytes;  // iperf3 -l
  int64_t socket_buffer_bytes = 0;           // iperf3 -w; 0: autotuning
  std::string congestion;                    // iperf3 -C; "": node default
  // All streams together, payload bits per second, each stream taking an
  // equal share (iperf3 -b is per stream: -b rate/streams matches); 0: as
  // fast as the path allows.
  double rate_bps = 0;
};

struct TcpServerOptions {
  std::string bind = "0.0.0.0";
  // How long to wait for the client's control connection.
  double accept_timeout_s = 60;
};

struct TcpClientOptions {
  pairwise::HostPort peer;
  int streams = 4;
  double duration_s = 10;
  double warmup_s = 2;
  bool forward = true;
  bool reverse = true;
  int latency_count = 2000;  // 0: no latency test
  int message_bytes = 64;
  double connect_timeout_s = 10;
  StreamSettings settings;  // throughput tests only
};

struct ThroughputResult {
  int streams = 0;
  uint64_t bytes = 0;   // received in the window, all streams
  double window_s = 0;  // on the receiver's clock
  double gbps = 0;
  int64_t retransmits = -1;  // sender side, over the window; -1 unknown
  // Of those, the ones the receiver reported as duplicates (DSACK): not
  // lost. And reordering events the sender saw. -1 unknown.
  int64_t spurious_retransmits = -1;
  int64_t reordering = -1;
  std::vector<uint64_t> stream_bytes;  // per stream, same window
  StreamSettings settings;             // as asked
  std::string congestion;              // the sending sockets' own
  // SO_SNDBUF / SO_RCVBUF of the client's first data socket as the kernel
  // reports them (twice what was set); -1 unknown.
  int64_t client_sndbuf_bytes = -1;
  int64_t client_rcvbuf_bytes = -1;
};

struct LatencyResult {
  int count = 0;
  int message_bytes = 0;
  double p50_us = 0;
  double p99_us = 0;
  double min_us = 0;
  double max_us = 0;
  double mean_us = 0;
};

struct TcpClientReport {
  std::optional<ThroughputResult> forward;
  std::optional<ThroughputResult> reverse;
  std::optional<LatencyResult> latency;
};

struct TcpServerReport {
  std::string client;  // address:port of the control connection
  int tests = 0;
};

// Called once the server listens, with the port; a non-OK status ends the
// run with that status.
using ListeningFn = std::function<absl::Status(int port)>;
using ProgressFn =
    std::function<void(double fraction, const std::string& message)>;

// Serves one client, then returns. No samples: the client has them.
absl::StatusOr<TcpServerReport> RunTcpServer(
    const TcpServerOptions& options, const ListeningFn& on_listening,
    const pairwise::CancelFn& cancelled, const ProgressFn& progress);

absl::StatusOr<TcpClientReport> RunTcpClient(
    const TcpClientOptions& options, const pairwise::CancelFn& cancelled,
    const ProgressFn& progress);

// Percentiles (common/stats.h, linear interpolation) of round-trip times.
LatencyResult SummarizeRoundTrips(const std::vector<double>& rtt_us,
                                  int message_bytes);

}  // namespace fleetbench::agent::net

#endif  // FLEETBENCH_AGENT_BENCHMARKS_NET_TCP_ENGINE_H_
