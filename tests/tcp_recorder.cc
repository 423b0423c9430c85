#include "tests/tcp_recorder.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace fleetbench::testing {

TcpRecorder::TcpRecorder(int target_port) : target_port_(target_port) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  listen(listen_fd_, 64);
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TcpRecorder::~TcpRecorder() {
  stopping_ = true;
  shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  close(listen_fd_);
  std::vector<std::thread> pumps;
  {
    absl::MutexLock lock(&mu_);
    for (int fd : fds_) shutdown(fd, SHUT_RDWR);
    pumps.swap(pumps_);
  }
  for (auto& t : pumps) t.join();
  absl::MutexLock lock(&mu_);
  for (int fd : fds_) close(fd);
}

std::string TcpRecorder::Captured() {
  absl::MutexLock lock(&mu_);
  return captured_;
}

void TcpRecorder::AcceptLoop() {
  while (!stopping_) {
    const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      if (stopping_) return;
      continue;
    }
    const int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(target_port_);
    if (connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      close(client);
      close(server);
      continue;
    }
    absl::MutexLock lock(&mu_);
    fds_.push_back(client);
    fds_.push_back(server);
    pumps_.emplace_back([this, client, server] { Pump(client, server); });
  }
}

void TcpRecorder::Pump(int client, int server) {
  pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
  char buf[65536];
  while (true) {
    if (poll(fds, 2, -1) < 0) break;
    bool done = false;
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n <= 0) {
        done = true;
        break;
      }
      {
        absl::MutexLock lock(&mu_);
        captured_.append(buf, n);
      }
      const int to = fds[1 - i].fd;
      for (ssize_t sent = 0; sent < n;) {
        const ssize_t w = write(to, buf + sent, n - sent);
        if (w <= 0) {
          done = true;
          break;
        }
        sent += w;
      }
    }
    if (done) break;
  }
  shutdown(client, SHUT_RDWR);
  shutdown(server, SHUT_RDWR);
}

}  // namespace fleetbench::testing
