// agent/benchmarks/pairwise/tcp_socket.h — the few TCP socket operations
// the two-node benchmarks need ("net" for its measurement, "rdma" for its
// out-of-band exchange), each bounded in time and cancellable.
//
// Every blocking operation takes a deadline (steady clock) and a CancelFn
// and waits in slices of at most kPollSlice, so no call can hang past its
// deadline or more than a slice past a cancel. Errors:
//   CANCELLED          the CancelFn returned true
//   DEADLINE_EXCEEDED  the deadline passed (the message names the address)
//   UNAVAILABLE        refused, reset, closed by the peer, unresolvable
//   INVALID_ARGUMENT   a malformed "host:port"
//   INTERNAL           a socket call failed for a local reason
//
// Thread safety: a Socket is owned by one thread at a time; the free
// functions keep no state. Linux only (TCP_INFO, accept4).
#ifndef FLEETBENCH_AGENT_BENCHMARKS_PAIRWISE_TCP_SOCKET_H_
#define FLEETBENCH_AGENT_BENCHMARKS_PAIRWISE_TCP_SOCKET_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetbench::agent::pairwise {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;
// True when the caller wants the operation abandoned. May be empty.
using CancelFn = std::function<bool()>;

// Longest single wait inside a blocking operation; bounds how late a cancel
// is noticed.
inline constexpr std::chrono::milliseconds kPollSlice{100};

Deadline DeadlineIn(double seconds);

// An owned file descriptor; closes on destruction. Move-only.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { Close(); }
  Socket(Socket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Close();

 private:
  int fd_ = -1;
};

struct HostPort {
  std::string host;  // name, IPv4 literal or IPv6 literal (no brackets)
  int port = 0;
};

// "host:port" or "[v6]:port"; port 1..65535. INVALID_ARGUMENT otherwise.
absl::StatusOr<HostPort> ParseHostPort(absl::string_view text);
// The inverse: brackets around IPv6 literals.
std::string FormatHostPort(const std::string& host, int port);

// A listening socket on host:port (port 0: ephemeral), non-blocking, with
// SO_REUSEADDR. *bound_port receives the port actually bound.
absl::StatusOr<Socket> Listen(const std::string& host, int port,
                              int* bound_port);

// Accepts one connection (blocking mode, close-on-exec). *peer receives
// "addr:port" of the other end when not null.
absl::StatusOr<Socket> AcceptUntil(const Socket& listener, Deadline deadline,
                                   const CancelFn& cancelled,
                                   std::string* peer);

// Called with each new socket before connect() (options that must be set
// before the handshake, such as buffer sizes); a non-OK status ends the
// attempt with it.
using BeforeConnectFn = std::function<absl::Status(int fd)>;

// Connects to every address `to` resolves to in turn until one answers.
// Returns a socket in blocking mode.
absl::StatusOr<Socket> ConnectUntil(const HostPort& to, Deadline deadline,
                                    const CancelFn& cancelled,
                                    const BeforeConnectFn& before_connect = nullptr);

// Whole-buffer transfers on a blocking or non-blocking socket, waiting with
// poll(). RecvExact returns UNAVAILABLE when the peer closes first.
absl::Status SendAll(int fd, const void* data, size_t size, Deadline deadline,
                     const CancelFn& cancelled);
absl::Status RecvExact(int fd, void* data, size_t size, Deadline deadline,
                       const CancelFn& cancelled);

// OK once `fd` is readable (data or EOF).
absl::Status WaitReadable(int fd, Deadline deadline, const CancelFn& cancelled);

absl::Status SetNoDelay(int fd);
// SO_RCVTIMEO and SO_SNDTIMEO, so that blocking send()/recv() in the data
// threads return EAGAIN now and then and can look at their stop flag.
absl::Status SetBlockingTimeouts(int fd, std::chrono::milliseconds timeout);

// tcpi_total_retrans of the connection: segments retransmitted over its
// life.
absl::StatusOr<uint32_t> TotalRetransmits(int fd);

// "what: strerror" as a Status with a code chosen from errno: refused,
// reset, unreachable and the like are UNAVAILABLE, timeouts
// DEADLINE_EXCEEDED, anything else INTERNAL.
absl::Status ErrnoStatus(int error, absl::string_view what);

}  // namespace fleetbench::agent::pairwise

#endif  // FLEETBENCH_AGENT_BENCHMARKS_PAIRWISE_TCP_SOCKET_H_
