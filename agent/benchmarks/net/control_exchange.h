// agent/benchmarks/net/control_exchange.h — the steps both ends of the TCP
// engine (tcp_engine.h) take on their control connection: expecting the
// next verb, staying quiet through a measured window, and passing an
// error to the peer and back. Internal to the engine.
//
// Errors: a peer's ERROR message becomes its code on this side (ABORTED
// for a peer's cancellation, which is not ours); a message out of turn is
// INTERNAL ("protocol error"); socket errors keep their code and gain
// "net: <what>: " in front. Messages name the peer.
//
// Stateless; thread-compatible.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_NET_CONTROL_EXCHANGE_H_
#define FLEETBENCH_AGENT_BENCHMARKS_NET_CONTROL_EXCHANGE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/benchmarks/net/control_frame.h"
#include "agent/benchmarks/pairwise/tcp_socket.h"

namespace fleetbench::agent::net {

// HELLO's "protocol" field: what a stray connection does not say.
inline constexpr char kProtocolName[] = "fleetbench-net";
// How long the other end may take for a step that involves no measuring
// (connecting the data streams, answering a message, draining the streams
// after a window).
inline constexpr double kStepTimeoutS = 30;
// How long a freshly accepted connection has to say who it is; a stray
// connection (a port scanner, a health check) is dropped after this.
inline constexpr double kHelloTimeoutS = 5;

// The status a peer's ERROR message becomes on this side.
absl::Status FromPeerError(const ControlMessage& message,
                           const std::string& peer);

// Tells the peer why we stop, best effort: the connection may be gone.
void SendErrorBestEffort(int fd, const absl::Status& status);

// "net: <what>: <message>" with the same code; OK stays OK.
absl::Status Annotate(const absl::Status& status, absl::string_view what);

// Receives the next control message and checks its verb. ERROR from the
// peer becomes that error; EOF becomes UNAVAILABLE naming the peer.
absl::StatusOr<ControlMessage> Expect(int fd, const std::string& verb,
                                      pairwise::Deadline deadline,
                                      const pairwise::CancelFn& cancelled,
                                      const std::string& peer);

// Sleeps until `until` while watching the control connection: the peer has
// nothing to say before then, so anything it sends (ERROR, EOF) ends the
// test.
absl::Status QuietUntil(int fd, pairwise::Deadline until,
                        const pairwise::CancelFn& cancelled,
                        const std::string& peer);

}  // namespace fleetbench::agent::net

#endif  // FLEETBENCH_AGENT_BENCHMARKS_NET_CONTROL_EXCHANGE_H_
