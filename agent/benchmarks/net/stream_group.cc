#include "agent/benchmarks/net/stream_group.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "agent/benchmarks/net/tcp_engine.h"

namespace fleetbench::agent::net {

using ::fleetbench::agent::pairwise::CancelFn;
using ::fleetbench::agent::pairwise::Clock;
using ::fleetbench::agent::pairwise::Deadline;
using ::fleetbench::agent::pairwise::ErrnoStatus;
using ::fleetbench::agent::pairwise::SetBlockingTimeouts;
using ::fleetbench::agent::pairwise::Socket;

namespace {

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

StreamGroup::StreamGroup(std::vector<Socket> sockets)
    : sockets_(std::move(sockets)),
      counters_(std::make_unique<PaddedCounter[]>(sockets_.size())) {}

StreamGroup::~StreamGroup() {
  Abort();
  JoinAll();
}

absl::Status StreamGroup::Prepare() {
  for (const Socket& s : sockets_) {
    if (absl::Status st = SetBlockingTimeouts(s.fd(), kDataSlice); !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

absl::Status StreamGroup::SetNoDelay() {
  for (const Socket& s : sockets_) {
    if (absl::Status st = pairwise::SetNoDelay(s.fd()); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status StreamGroup::Apply(const StreamSettings& settings) {
  for (const Socket& s : sockets_) {
    if (settings.socket_buffer_bytes > 0) {
      if (absl::Status st = SetSocketBuffers(s.fd(), settings.socket_buffer_bytes);
          !st.ok()) {
        return st;
      }
    }
    if (!settings.congestion.empty()) {
      if (absl::Status st = SetCongestion(s.fd(), settings.congestion);
          !st.ok()) {
        return st;
      }
    }
  }
  return absl::OkStatus();
}

void StreamGroup::StartSenders(const StreamSettings& settings) {
  const size_t write_bytes = static_cast<size_t>(settings.write_bytes);
  const double stream_rate_bps =
      sockets_.empty() ? 0 : settings.rate_bps / sockets_.size();
  for (size_t i = 0; i < sockets_.size(); ++i) {
    Launch([this, i, write_bytes, stream_rate_bps] {
      SendLoop(i, write_bytes, stream_rate_bps);
    });
  }
}

void StreamGroup::StartReceivers(int64_t read_bytes) {
  for (size_t i = 0; i < sockets_.size(); ++i) {
    Launch([this, i, read_bytes] {
      ReceiveLoop(i, static_cast<size_t>(read_bytes));
    });
  }
}

void StreamGroup::StartEchoers(int message_bytes) {
  for (size_t i = 0; i < sockets_.size(); ++i) {
    Launch([this, i, message_bytes] { EchoLoop(i, message_bytes); });
  }
}

std::vector<uint64_t> StreamGroup::StreamBytes() const {
  std::vector<uint64_t> out(sockets_.size());
  for (size_t i = 0; i < sockets_.size(); ++i) {
    out[i] = counters_[i].value.load(std::memory_order_relaxed);
  }
  return out;
}

TcpCounters StreamGroup::Counters() const {
  TcpCounters sum{0, 0, 0};
  for (const Socket& s : sockets_) {
    absl::StatusOr<TcpCounters> c = ReadTcpCounters(s.fd());
    if (!c.ok()) return TcpCounters{};
    sum = Add(sum, *c);
  }
  return sum;
}

std::string StreamGroup::Congestion() const {
  return sockets_.empty() ? "" : ReadCongestion(sockets_[0].fd());
}

SocketBuffers StreamGroup::Buffers() const {
  return sockets_.empty() ? SocketBuffers{} : ReadSocketBuffers(sockets_[0].fd());
}

absl::Status StreamGroup::Finish(Deadline deadline, const CancelFn& cancelled) {
  absl::Status result = absl::OkStatus();
  while (!AllEnded()) {
    if (cancelled && cancelled()) {
      result = absl::CancelledError("net: cancelled");
      break;
    }
    if (Clock::now() >= deadline) {
      result = absl::DeadlineExceededError(
          "the peer did not close its data connections in time");
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  Abort();
  JoinAll();
  if (!result.ok()) return result;
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

absl::Status StreamGroup::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void StreamGroup::JoinAll() {
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void StreamGroup::RecordError(const absl::Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (error_.ok()) error_ = status;
}

void StreamGroup::SendLoop(size_t i, size_t write_bytes, double rate_bps) {
  const int fd = sockets_[i].fd();
  // Not zeros: some links and NICs compress or offload zero pages
  // differently; iperf3 sends a non-zero pattern too.
  std::vector<char> block(write_bytes);
  for (size_t k = 0; k < block.size(); ++k) {
    block[k] = static_cast<char>('0' + k % 64);
  }
  // With a rate, each block has a time slot: the next may go once the
  // previous one's slot has passed. A sender that fell behind (starved of
  // CPU) catches up by at most kDataSlice's worth, so that no window sees
  // much more than the rate either.
  const auto block_time = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(
          rate_bps > 0 ? static_cast<double>(write_bytes) * 8 / rate_bps : 0));
  Clock::time_point next_slot = Clock::now();
  size_t offset = 0;
  while (!stop_sending_.load(std::memory_order_relaxed) &&
         !abort_.load(std::memory_order_relaxed)) {
    if (rate_bps > 0 && offset == 0) {
      const auto now = Clock::now();
      if (next_slot > now) {
        std::this_thread::sleep_for(
            std::min<Clock::duration>(next_slot - now, kDataSlice));
        continue;
      }
      next_slot = std::max<Clock::time_point>(next_slot, now - kDataSlice) +
                  block_time;
    }
    const ssize_t n =
        send(fd, block.data() + offset, block.size() - offset, MSG_NOSIGNAL);
    if (n > 0) {
      counters_[i].value.fetch_add(static_cast<uint64_t>(n),
                                   std::memory_order_relaxed);
      offset += static_cast<size_t>(n);
      if (offset == block.size()) offset = 0;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      continue;
    }
    RecordError(ErrnoStatus(errno, absl::StrCat("send on stream ", i)));
    break;
  }
  shutdown(fd, SHUT_WR);
}

void StreamGroup::ReceiveLoop(size_t i, size_t read_bytes) {
  const int fd = sockets_[i].fd();
  std::vector<char> block(read_bytes);
  while (!abort_.load(std::memory_order_relaxed)) {
    const ssize_t n = recv(fd, block.data(), block.size(), 0);
    if (n > 0) {
      counters_[i].value.fetch_add(static_cast<uint64_t>(n),
                                   std::memory_order_relaxed);
      continue;
    }
    if (n == 0) return;  // the sender finished
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
    RecordError(ErrnoStatus(errno, absl::StrCat("recv on stream ", i)));
    return;
  }
}

void StreamGroup::EchoLoop(size_t i, int message_bytes) {
  const int fd = sockets_[i].fd();
  std::vector<char> message(static_cast<size_t>(message_bytes));
  auto last_activity = Clock::now();
  size_t have = 0;
  while (!abort_.load(std::memory_order_relaxed)) {
    const ssize_t n = recv(fd, message.data() + have, message.size() - have, 0);
    if (n == 0) return;
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        RecordError(ErrnoStatus(errno, "recv (echo)"));
        return;
      }
      if (SecondsSince(last_activity) > kRoundTripTimeoutS) {
        RecordError(absl::DeadlineExceededError(
            "the client stopped sending ping-pong messages"));
        return;
      }
      continue;
    }
    last_activity = Clock::now();
    have += static_cast<size_t>(n);
    if (have < message.size()) continue;
    have = 0;
    size_t sent = 0;
    while (sent < message.size()) {
      const ssize_t w =
          send(fd, message.data() + sent, message.size() - sent, MSG_NOSIGNAL);
      if (w > 0) {
        sent += static_cast<size_t>(w);
      } else if (w < 0 &&
                 (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        if (abort_.load()) return;
      } else {
        RecordError(ErrnoStatus(errno, "send (echo)"));
        return;
      }
    }
    counters_[i].value.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace fleetbench::agent::net
