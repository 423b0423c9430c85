#include "agent/benchmarks/net/socket_tuning.h"

// <linux/tcp.h>, not <netinet/tcp.h>: glibc's struct tcp_info stops before
// tcpi_dsack_dups and tcpi_reord_seen. The two headers cannot be mixed,
// hence a file of its own.
#include <linux/tcp.h>
#include <netinet/in.h>  // IPPROTO_TCP
#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "agent/benchmarks/pairwise/tcp_socket.h"

namespace fleetbench::agent::net {

using ::fleetbench::agent::pairwise::ErrnoStatus;

namespace {

// The kernel's TCP_CA_NAME_MAX (include/net/tcp.h, not exported to user
// space): a name and its NUL.
constexpr size_t kCongestionNameMax = 16;

int64_t Minus(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a - b; }
int64_t Plus(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a + b; }

std::string FirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return std::string(absl::StripAsciiWhitespace(line));
}

}  // namespace

absl::StatusOr<TcpCounters> ReadTcpCounters(int fd) {
  tcp_info info{};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) {
    return ErrnoStatus(errno, "getsockopt(TCP_INFO)");
  }
  // An older kernel fills a shorter struct: what it did not fill is unknown.
  const auto has = [len](size_t offset, size_t size) {
    return len >= offset + size;
  };
  TcpCounters c;
  if (has(offsetof(tcp_info, tcpi_total_retrans),
          sizeof(info.tcpi_total_retrans))) {
    c.retransmits = info.tcpi_total_retrans;
  }
  if (has(offsetof(tcp_info, tcpi_dsack_dups), sizeof(info.tcpi_dsack_dups))) {
    c.spurious_retransmits = info.tcpi_dsack_dups;
  }
  if (has(offsetof(tcp_info, tcpi_reord_seen), sizeof(info.tcpi_reord_seen))) {
    c.reordering = info.tcpi_reord_seen;
  }
  return c;
}

TcpCounters Subtract(const TcpCounters& after, const TcpCounters& before) {
  return {Minus(after.retransmits, before.retransmits),
          Minus(after.spurious_retransmits, before.spurious_retransmits),
          Minus(after.reordering, before.reordering)};
}

TcpCounters Add(const TcpCounters& a, const TcpCounters& b) {
  return {Plus(a.retransmits, b.retransmits),
          Plus(a.spurious_retransmits, b.spurious_retransmits),
          Plus(a.reordering, b.reordering)};
}

absl::Status SetSocketBuffers(int fd, int64_t bytes) {
  const int value = static_cast<int>(bytes);
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, sizeof(value)) != 0) {
    return ErrnoStatus(errno, "setsockopt(SO_SNDBUF)");
  }
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, sizeof(value)) != 0) {
    return ErrnoStatus(errno, "setsockopt(SO_RCVBUF)");
  }
  return absl::OkStatus();
}

SocketBuffers ReadSocketBuffers(int fd) {
  SocketBuffers b;
  int value = 0;
  socklen_t len = sizeof(value);
  if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, &len) == 0) {
    b.send_bytes = value;
  }
  len = sizeof(value);
  if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, &len) == 0) {
    b.receive_bytes = value;
  }
  return b;
}

absl::Status SetCongestion(int fd, const std::string& name) {
  if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.data(),
                 static_cast<socklen_t>(name.size())) == 0) {
    return absl::OkStatus();
  }
  const int err = errno;
  if (err == ENOENT || err == EPERM) {
    const std::string available =
        FirstLine("/proc/sys/net/ipv4/tcp_available_congestion_control");
    return absl::FailedPreconditionError(absl::StrCat(
        "net: congestion: '", name, "' is ",
        err == ENOENT ? "not available on this node" : "not allowed here",
        " (it has: ", available.empty() ? "?" : available,
        err == EPERM ? absl::StrCat("; allowed without CAP_NET_ADMIN: ",
                                    FirstLine("/proc/sys/net/ipv4/"
                                              "tcp_allowed_congestion_control"))
                     : "",
        ")"));
  }
  return ErrnoStatus(err, "setsockopt(TCP_CONGESTION)");
}

std::string ReadCongestion(int fd) {
  char name[kCongestionNameMax] = {};
  socklen_t len = sizeof(name);
  if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) return "";
  return std::string(name, strnlen(name, sizeof(name)));
}

bool IsCongestionName(absl::string_view name) {
  if (name.empty() || name.size() >= kCongestionNameMax) return false;
  for (char c : name) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '_' &&
        c != '-') {
      return false;
    }
  }
  return true;
}

}  // namespace fleetbench::agent::net
