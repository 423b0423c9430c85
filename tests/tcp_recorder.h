// tests/tcp_recorder.h — a TCP proxy on loopback that forwards every
// connection to a target and keeps every byte it forwards, both ways: what
// an attacker on the path (tcpdump -i lo) would capture, for tests that
// check what travels in clear.
#ifndef FLEETBENCH_TESTS_TCP_RECORDER_H_
#define FLEETBENCH_TESTS_TCP_RECORDER_H_

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace fleetbench::testing {

class TcpRecorder {
 public:
  // Listens on a free 127.0.0.1 port and forwards to 127.0.0.1:target_port.
  explicit TcpRecorder(int target_port);
  ~TcpRecorder();
  TcpRecorder(const TcpRecorder&) = delete;
  TcpRecorder& operator=(const TcpRecorder&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Everything forwarded so far, both directions, in arrival order.
  std::string Captured();

 private:
  void AcceptLoop();
  void Pump(int client, int server);

  int listen_fd_ = -1;
  int port_ = 0;
  int target_port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  absl::Mutex mu_;
  std::string captured_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> pumps_ ABSL_GUARDED_BY(mu_);
  std::vector<int> fds_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetbench::testing

#endif  // FLEETBENCH_TESTS_TCP_RECORDER_H_
