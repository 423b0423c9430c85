// agent/benchmarks/net/throughput_window.h — the measured window of a
// forward or reverse test, as each end of the TCP engine (tcp_engine.h)
// takes part in it. Internal to the engine.
//
// The RECEIVING end owns the window, whichever direction the test runs:
// it stays quiet through the warm-up, reads its stream counters, sends
// OPEN, stays quiet through the duration and reads them again. The
// SENDING end reads its sockets' TCP counters (retransmits, spurious
// retransmits, reordering) when OPEN arrives and again when CLOSE does. So the receiver knows the bytes and the window,
// the sender the retransmits; the server tells the client its half (in
// CLOSE when it receives, in FINISHED when it sends), and the client makes
// the result from both (ThroughputFromWindow).
//
// Both Measure functions leave the streams' threads to the caller (which
// starts them, checks their errors and finishes them); their errors are
// those of control_exchange.h.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_NET_THROUGHPUT_WINDOW_H_
#define FLEETBENCH_AGENT_BENCHMARKS_NET_THROUGHPUT_WINDOW_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/benchmarks/net/control_frame.h"
#include "agent/benchmarks/net/socket_tuning.h"
#include "agent/benchmarks/net/stream_group.h"
#include "agent/benchmarks/net/tcp_engine.h"
#include "agent/benchmarks/net/test_request.h"
#include "agent/benchmarks/pairwise/tcp_socket.h"

namespace fleetbench::agent::net {

// What the receiving end counted in the window.
struct ReceivedWindow {
  std::vector<uint64_t> stream_bytes;  // per stream
  uint64_t bytes = 0;                  // their sum
  pairwise::Clock::duration window{};
};

// What the sending end saw of the window.
struct SentWindow {
  TcpCounters counters;    // over the window, all streams; -1 unknown
  std::string congestion;  // the sending sockets' congestion control
  ControlMessage close;    // the receiver's CLOSE, as it came
};

// The receiving end's window: quiet through the warm-up, counters read,
// OPEN sent (then `on_open`), quiet through the duration, counters read.
// The caller then checks the streams' errors and sends CLOSE.
absl::StatusOr<ReceivedWindow> MeasureReceivedWindow(
    int control_fd, const TestRequest& test, StreamGroup& group,
    const pairwise::CancelFn& cancelled, const std::string& peer,
    const std::function<void()>& on_open);

// The sending end's window: OPEN awaited, retransmits read (then
// `on_open`), CLOSE awaited, retransmits read, the senders told to stop.
// The caller then finishes the streams.
absl::StatusOr<SentWindow> MeasureSentWindow(
    int control_fd, const TestRequest& test, StreamGroup& group,
    const pairwise::CancelFn& cancelled, const std::string& peer,
    const std::function<void()>& on_open);

// The receiving server's CLOSE, and the client's reading of it. INTERNAL
// ("protocol error", naming the peer) when the counts are missing.
ControlMessage EncodeCountsClose(const ReceivedWindow& window);
absl::StatusOr<ReceivedWindow> DecodeCountsClose(const ControlMessage& close,
                                                 const std::string& peer);

// The sending server's FINISHED (its counters and congestion control), and
// the client's reading of it (-1 / "" for what is absent; no `close`).
ControlMessage EncodeSenderFinished(const SentWindow& sent);
SentWindow DecodeSenderFinished(const ControlMessage& finished);

// The result of a window: the receiver's counts, the sender's counters.
ThroughputResult ThroughputFromWindow(const TestRequest& test,
                                      const ReceivedWindow& window,
                                      const SentWindow& sender);

}  // namespace fleetbench::agent::net

#endif  // FLEETBENCH_AGENT_BENCHMARKS_NET_THROUGHPUT_WINDOW_H_
