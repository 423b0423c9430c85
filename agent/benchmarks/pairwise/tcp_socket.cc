#include "agent/benchmarks/pairwise/tcp_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace fleetbench::agent::pairwise {
namespace {

struct AddrInfoDeleter {
  void operator()(addrinfo* info) const { freeaddrinfo(info); }
};
using AddrInfoList = std::unique_ptr<addrinfo, AddrInfoDeleter>;

absl::StatusOr<AddrInfoList> Resolve(const std::string& host, int port,
                                     bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* list = nullptr;
  const std::string service = absl::StrCat(port);
  const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(),
                             service.c_str(), &hints, &list);
  if (rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve '", host, "': ", gai_strerror(rc)));
  }
  return AddrInfoList(list);
}

std::string FormatSockaddr(const sockaddr* addr) {
  char text[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    port = ntohs(in->sin_port);
  } else if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    port = ntohs(in6->sin6_port);
  }
  return FormatHostPort(text, port);
}

// Milliseconds to wait in one poll(): the time left, at most one slice.
int SliceMs(Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Clock::now());
  return static_cast<int>(
      std::clamp<int64_t>(left.count() + 1, 0, kPollSlice.count()));
}

bool IsCancelled(const CancelFn& cancelled) { return cancelled && cancelled(); }

// Waits until `fd` shows one of `events`; OK, CANCELLED, DEADLINE_EXCEEDED.
absl::Status WaitFor(int fd, short events, Deadline deadline,
                     const CancelFn& cancelled, absl::string_view what) {
  while (true) {
    if (IsCancelled(cancelled)) return absl::CancelledError("net: cancelled");
    pollfd p{fd, events, 0};
    const int rc = poll(&p, 1, SliceMs(deadline));
    if (rc > 0) return absl::OkStatus();
    if (rc < 0 && errno != EINTR) return ErrnoStatus(errno, "poll");
    if (Clock::now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("timed out ", what));
    }
  }
}

}  // namespace

Deadline DeadlineIn(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void Socket::Close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

absl::Status ErrnoStatus(int error, absl::string_view what) {
  const std::string message = absl::StrCat(what, ": ", std::strerror(error));
  switch (error) {
    case ECONNREFUSED:
    case ECONNRESET:
    case ECONNABORTED:
    case EPIPE:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ENETDOWN:
    case EHOSTDOWN:
    case EADDRNOTAVAIL:
      return absl::UnavailableError(message);
    case ETIMEDOUT:
      return absl::DeadlineExceededError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<HostPort> ParseHostPort(absl::string_view text) {
  const auto bad = [&text](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' ", why, "; want host:port or [v6]:port"));
  };
  HostPort out;
  absl::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == absl::string_view::npos || close + 1 >= text.size() ||
        text[close + 1] != ':') {
      return bad("has an unclosed '[' or no port");
    }
    out.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == absl::string_view::npos) return bad("has no port");
    if (text.substr(0, colon).find(':') != absl::string_view::npos) {
      return bad("looks like an IPv6 address without brackets");
    }
    out.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  if (out.host.empty()) return bad("has no host");
  int port = 0;
  if (!absl::SimpleAtoi(port_text, &port) || port < 1 || port > 65535) {
    return bad("has no port in 1..65535");
  }
  out.port = port;
  return out;
}

std::string FormatHostPort(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) {
    return absl::StrCat("[", host, "]:", port);
  }
  return absl::StrCat(host, ":", port);
}

absl::StatusOr<Socket> Listen(const std::string& host, int port,
                              int* bound_port) {
  absl::StatusOr<AddrInfoList> list = Resolve(host, port, /*passive=*/true);
  if (!list.ok()) return list.status();
  absl::Status last = absl::UnavailableError(
      absl::StrCat("no address to listen on for '", host, "'"));
  for (addrinfo* ai = list->get(); ai != nullptr; ai = ai->ai_next) {
    Socket s(socket(ai->ai_family,
                    ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    ai->ai_protocol));
    if (!s.valid()) {
      last = ErrnoStatus(errno, "socket");
      continue;
    }
    const int one = 1;
    setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    const std::string where =
        absl::StrCat("listen on ", FormatHostPort(host, port));
    if (bind(s.fd(), ai->ai_addr, ai->ai_addrlen) != 0) {
      last = ErrnoStatus(errno, where);
      continue;
    }
    if (listen(s.fd(), 128) != 0) {
      last = ErrnoStatus(errno, where);
      continue;
    }
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return ErrnoStatus(errno, "getsockname");
    }
    *bound_port = addr.ss_family == AF_INET6
                      ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                      : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    return s;
  }
  return last;
}

absl::StatusOr<Socket> AcceptUntil(const Socket& listener, Deadline deadline,
                                   const CancelFn& cancelled,
                                   std::string* peer) {
  while (true) {
    if (absl::Status s = WaitFor(listener.fd(), POLLIN, deadline, cancelled,
                                 "waiting for a connection");
        !s.ok()) {
      return s;
    }
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    const int fd = accept4(listener.fd(), reinterpret_cast<sockaddr*>(&addr),
                           &len, SOCK_CLOEXEC);
    if (fd >= 0) {
      if (peer != nullptr) {
        *peer = FormatSockaddr(reinterpret_cast<sockaddr*>(&addr));
      }
      return Socket(fd);
    }
    // The connection can vanish between poll() and accept(); wait again.
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
        errno == ECONNABORTED) {
      continue;
    }
    return ErrnoStatus(errno, "accept");
  }
}

absl::StatusOr<Socket> ConnectUntil(const HostPort& to, Deadline deadline,
                                    const CancelFn& cancelled,
                                    const BeforeConnectFn& before_connect) {
  const std::string where = FormatHostPort(to.host, to.port);
  absl::StatusOr<AddrInfoList> list = Resolve(to.host, to.port, false);
  if (!list.ok()) return list.status();
  absl::Status last =
      absl::UnavailableError(absl::StrCat("connect ", where, ": no address"));
  for (addrinfo* ai = list->get(); ai != nullptr; ai = ai->ai_next) {
    Socket s(socket(ai->ai_family,
                    ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    ai->ai_protocol));
    if (!s.valid()) {
      last = ErrnoStatus(errno, "socket");
      continue;
    }
    if (before_connect) {
      if (absl::Status st = before_connect(s.fd()); !st.ok()) return st;
    }
    if (connect(s.fd(), ai->ai_addr, ai->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        last = ErrnoStatus(errno, absl::StrCat("connect ", where));
        continue;
      }
      absl::Status waited = WaitFor(s.fd(), POLLOUT, deadline, cancelled,
                                    absl::StrCat("connecting to ", where));
      if (!waited.ok()) return waited;
      int error = 0;
      socklen_t len = sizeof(error);
      getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &error, &len);
      if (error != 0) {
        last = ErrnoStatus(error, absl::StrCat("connect ", where));
        continue;
      }
    }
    const int flags = fcntl(s.fd(), F_GETFL);
    if (flags < 0 || fcntl(s.fd(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
      return ErrnoStatus(errno, "fcntl");
    }
    return s;
  }
  return last;
}

absl::Status SendAll(int fd, const void* data, size_t size, Deadline deadline,
                     const CancelFn& cancelled) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = send(fd, p, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      return ErrnoStatus(errno, "send");
    }
    if (absl::Status s = WaitFor(fd, POLLOUT, deadline, cancelled, "sending");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status RecvExact(int fd, void* data, size_t size, Deadline deadline,
                       const CancelFn& cancelled) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = recv(fd, p, size, MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return absl::UnavailableError("connection closed by the peer");
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      return ErrnoStatus(errno, "recv");
    }
    if (absl::Status s = WaitFor(fd, POLLIN, deadline, cancelled, "receiving");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status WaitReadable(int fd, Deadline deadline,
                          const CancelFn& cancelled) {
  return WaitFor(fd, POLLIN, deadline, cancelled, "waiting for the peer");
}

absl::Status SetNoDelay(int fd) {
  const int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
    return ErrnoStatus(errno, "setsockopt(TCP_NODELAY)");
  }
  return absl::OkStatus();
}

absl::Status SetBlockingTimeouts(int fd, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0) {
    return ErrnoStatus(errno, "setsockopt(SO_RCVTIMEO/SO_SNDTIMEO)");
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> TotalRetransmits(int fd) {
  tcp_info info{};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) {
    return ErrnoStatus(errno, "getsockopt(TCP_INFO)");
  }
  // Kernels before 2.6.x filled a shorter struct; the field must be there.
  if (len < offsetof(tcp_info, tcpi_total_retrans) +
                sizeof(info.tcpi_total_retrans)) {
    return absl::InternalError("TCP_INFO has no tcpi_total_retrans");
  }
  return info.tcpi_total_retrans;
}

}  // namespace fleetbench::agent::pairwise
