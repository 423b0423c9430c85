#include "agent/benchmarks/net/tcp_engine.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <numeric>
#include <string>
#include <thread>

#include "agent/benchmarks/net/control_frame.h"
#include "agent/benchmarks/pairwise/tcp_socket.h"
#include "common/units.h"
#include "gtest/gtest.h"

namespace fleetbench::agent::net {

using ::fleetbench::agent::pairwise::Clock;
using ::fleetbench::agent::pairwise::ConnectUntil;
using ::fleetbench::agent::pairwise::DeadlineIn;
using ::fleetbench::agent::pairwise::HostPort;
using ::fleetbench::agent::pairwise::Listen;
using ::fleetbench::agent::pairwise::SendAll;
using ::fleetbench::agent::pairwise::Socket;

namespace {

using std::chrono::milliseconds;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// A server on 127.0.0.1 in its own thread; port() waits until it listens.
class LoopbackServer {
 public:
  explicit LoopbackServer(double accept_timeout_s = 10) {
    TcpServerOptions options;
    options.bind = "127.0.0.1";
    options.accept_timeout_s = accept_timeout_s;
    result_ = std::async(std::launch::async, [this, options] {
      return RunTcpServer(
          options,
          [this](int port) {
            port_.set_value(port);
            return absl::OkStatus();
          },
          [this] { return cancelled_.load(); }, nullptr);
    });
  }
  ~LoopbackServer() {
    cancelled_.store(true);
    if (result_.valid()) result_.wait();
  }

  int port() {
    auto f = port_.get_future();
    EXPECT_EQ(f.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    return f.get();
  }
  void Cancel() { cancelled_.store(true); }
  absl::StatusOr<TcpServerReport> Wait(double max_s) {
    EXPECT_EQ(result_.wait_for(std::chrono::duration<double>(max_s)),
              std::future_status::ready);
    return result_.get();
  }

 private:
  std::promise<int> port_;
  std::atomic<bool> cancelled_{false};
  std::future<absl::StatusOr<TcpServerReport>> result_;
};

TcpClientOptions ShortRun(int port) {
  TcpClientOptions o;
  o.peer = HostPort{"127.0.0.1", port};
  o.streams = 2;
  o.duration_s = 0.3;
  o.warmup_s = 0.1;
  o.latency_count = 200;
  o.message_bytes = 64;
  return o;
}

// A port nothing listens on: bound once, then released.
int ClosedPort() {
  int port = 0;
  absl::StatusOr<Socket> s = Listen("127.0.0.1", 0, &port);
  EXPECT_TRUE(s.ok()) << s.status();
  return port;
}

TEST(NetMathTest, RoundTripPercentilesInterpolate) {
  std::vector<double> rtts(100);
  std::iota(rtts.begin(), rtts.end(), 1.0);  // 1..100 us
  std::swap(rtts[0], rtts[99]);              // order must not matter
  const LatencyResult r = SummarizeRoundTrips(rtts, 64);
  EXPECT_EQ(r.count, 100);
  EXPECT_EQ(r.message_bytes, 64);
  EXPECT_DOUBLE_EQ(r.p50_us, 50.5);
  EXPECT_NEAR(r.p99_us, 99.01, 1e-9);
  EXPECT_DOUBLE_EQ(r.min_us, 1);
  EXPECT_DOUBLE_EQ(r.max_us, 100);
  EXPECT_DOUBLE_EQ(r.mean_us, 50.5);
  EXPECT_LE(r.p50_us, r.p99_us);
  EXPECT_EQ(SummarizeRoundTrips({}, 64).count, 0);
}

TEST(TcpEngineTest, LoopbackRunMeasuresAllThreeTests) {
  LoopbackServer server;
  const TcpClientOptions options = ShortRun(server.port());
  absl::StatusOr<TcpClientReport> report =
      RunTcpClient(options, nullptr, nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  for (const auto* r : {&report->forward, &report->reverse}) {
    ASSERT_TRUE(r->has_value());
    const ThroughputResult& t = **r;
    EXPECT_EQ(t.streams, 2);
    EXPECT_GT(t.bytes, 0u);
    EXPECT_GT(t.gbps, 0);
    // The window is measured, not assumed; it cannot be far from asked.
    EXPECT_NEAR(t.window_s, 0.3, 0.1);
    EXPECT_DOUBLE_EQ(t.gbps, GbpsFromBytes(t.bytes, t.window_s));
    ASSERT_EQ(t.stream_bytes.size(), 2u);
    EXPECT_EQ(t.stream_bytes[0] + t.stream_bytes[1], t.bytes);
    EXPECT_GE(t.retransmits, 0);
  }
  ASSERT_TRUE(report->latency.has_value());
  EXPECT_EQ(report->latency->count, 200);
  EXPECT_GT(report->latency->p50_us, 0);
  EXPECT_LE(report->latency->p50_us, report->latency->p99_us);
  absl::StatusOr<TcpServerReport> served = server.Wait(5);
  ASSERT_TRUE(served.ok()) << served.status();
  EXPECT_EQ(served->tests, 3);
  EXPECT_NE(served->client.find("127.0.0.1:"), std::string::npos);
}

TEST(TcpEngineTest, OnlyTheAskedTestsRun) {
  LoopbackServer server;
  TcpClientOptions options = ShortRun(server.port());
  options.forward = false;
  options.reverse = false;
  options.latency_count = 50;
  options.message_bytes = 4096;  // more than one segment per message
  absl::StatusOr<TcpClientReport> report =
      RunTcpClient(options, nullptr, nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->forward.has_value());
  EXPECT_FALSE(report->reverse.has_value());
  ASSERT_TRUE(report->latency.has_value());
  EXPECT_EQ(report->latency->count, 50);
  EXPECT_EQ(report->latency->message_bytes, 4096);
  ASSERT_TRUE(server.Wait(5).ok());
}

std::string ProcLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Throughput only, both ways, with these settings.
absl::StatusOr<TcpClientReport> RunThroughput(const StreamSettings& settings,
                                              int streams, double warmup_s,
                                              double duration_s) {
  LoopbackServer server;
  TcpClientOptions options = ShortRun(server.port());
  options.streams = streams;
  options.warmup_s = warmup_s;
  options.duration_s = duration_s;
  options.latency_count = 0;
  options.settings = settings;
  absl::StatusOr<TcpClientReport> report =
      RunTcpClient(options, nullptr, nullptr);
  absl::StatusOr<TcpServerReport> served = server.Wait(10);
  if (report.ok() && !served.ok()) return served.status();
  return report;
}

TEST(TcpEngineTest, RateCapHoldsBothWays) {
  // Loopback carries several Gbit/s: anything near 200 Mbit/s is the cap.
  StreamSettings settings;
  settings.rate_bps = 200e6;
  absl::StatusOr<TcpClientReport> report = RunThroughput(settings, 2, 0.3, 1);
  ASSERT_TRUE(report.ok()) << report.status();
  // The cap is the sharp bound: at most the rate plus the one slice
  // (kDataSlice) a sender that fell behind may catch up. A starved sender
  // (a loaded CI machine) may fall somewhat short of it.
  for (const auto* r : {&report->forward, &report->reverse}) {
    ASSERT_TRUE(r->has_value());
    const double catch_up = 1 + 0.1 / (*r)->window_s;
    EXPECT_LE((*r)->gbps, 0.2 * catch_up * 1.02);
    EXPECT_GE((*r)->gbps, 0.14);
    EXPECT_DOUBLE_EQ((*r)->settings.rate_bps, 200e6);
    // Each stream takes half.
    for (uint64_t b : (*r)->stream_bytes) {
      EXPECT_LE(GbpsFromBytes(b, (*r)->window_s), 0.1 * catch_up * 1.02);
      EXPECT_GE(GbpsFromBytes(b, (*r)->window_s), 0.07);
    }
  }
}

TEST(TcpEngineTest, PacingGoesByWholeWritesOfTheAskedSize) {
  // At 8 Mbit/s (1 MB/s) a 1 MiB write is due only every ~1.05 s: the
  // first goes out at once, in the warm-up, and a 0.5 s window from 0.3 s
  // sees nothing. 1000-byte writes fill the same window evenly.
  StreamSettings settings;
  settings.rate_bps = 8e6;
  settings.write_bytes = 1 << 20;
  absl::StatusOr<TcpClientReport> big = RunThroughput(settings, 1, 0.3, 0.5);
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->forward->bytes, 0u);
  EXPECT_EQ(big->forward->settings.write_bytes, 1 << 20);
  settings.write_bytes = 1000;
  absl::StatusOr<TcpClientReport> small = RunThroughput(settings, 1, 0.3, 0.5);
  ASSERT_TRUE(small.ok()) << small.status();
  for (const auto* r : {&small->forward, &small->reverse}) {
    const double due = 1e6 * (*r)->window_s;  // bytes at 1 MB/s
    // Plus one slice of catching up (1e5 bytes) and a part-sent write.
    EXPECT_LE(static_cast<double>((*r)->bytes), 1.02 * due + 1e5 + 1000);
    EXPECT_GE(static_cast<double>((*r)->bytes), 0.7 * due);
  }
}

TEST(TcpEngineTest, SocketBuffersAreTheAskedSize) {
  // Linux reports twice what was set (its bookkeeping share), capped by
  // net.core.[wr]mem_max; 64 KiB is below every default cap.
  ASSERT_GE(std::stoll(ProcLine("/proc/sys/net/core/wmem_max")), 65536);
  ASSERT_GE(std::stoll(ProcLine("/proc/sys/net/core/rmem_max")), 65536);
  StreamSettings settings;
  settings.socket_buffer_bytes = 65536;
  absl::StatusOr<TcpClientReport> report = RunThroughput(settings, 1, 0, 0.2);
  ASSERT_TRUE(report.ok()) << report.status();
  for (const auto* r : {&report->forward, &report->reverse}) {
    EXPECT_EQ((*r)->client_sndbuf_bytes, 2 * 65536);
    EXPECT_EQ((*r)->client_rcvbuf_bytes, 2 * 65536);
    EXPECT_GT((*r)->bytes, 0u);
  }
  // Left to the kernel, the send buffer autotunes away from that value.
  absl::StatusOr<TcpClientReport> tuned = RunThroughput({}, 1, 0, 0.2);
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_NE(tuned->forward->client_sndbuf_bytes, 2 * 65536);
}

TEST(TcpEngineTest, CongestionControlIsTheAskedOneOnBothSenders) {
  // reno is built into every kernel; the node's default is reported when
  // none is asked for.
  StreamSettings settings;
  settings.congestion = "reno";
  absl::StatusOr<TcpClientReport> report = RunThroughput(settings, 1, 0, 0.2);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->forward->congestion, "reno");  // the client's sockets
  EXPECT_EQ(report->reverse->congestion, "reno");  // the server's, in FINISHED
  absl::StatusOr<TcpClientReport> plain = RunThroughput({}, 1, 0, 0.2);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->forward->congestion,
            ProcLine("/proc/sys/net/ipv4/tcp_congestion_control"));
}

TEST(TcpEngineTest, AMissingCongestionControlIsNamed) {
  StreamSettings settings;
  settings.congestion = "nosuchcc";
  absl::StatusOr<TcpClientReport> report = RunThroughput(settings, 1, 0, 0.2);
  EXPECT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("congestion: 'nosuchcc' is not "
                                           "available on this node"),
            std::string::npos)
      << report.status();
}

TEST(TcpEngineTest, SenderCountersAreReported) {
  // Loopback loses nothing, so the counts are zero, but they are read
  // (tcpi_dsack_dups and tcpi_reord_seen exist since Linux 5.0).
  absl::StatusOr<TcpClientReport> report = RunThroughput({}, 2, 0, 0.2);
  ASSERT_TRUE(report.ok()) << report.status();
  for (const auto* r : {&report->forward, &report->reverse}) {
    EXPECT_GE((*r)->retransmits, 0);
    EXPECT_GE((*r)->spurious_retransmits, 0);
    EXPECT_GE((*r)->reordering, 0);
    EXPECT_LE((*r)->spurious_retransmits, (*r)->retransmits);
  }
}

TEST(TcpEngineTest, ServerGivesUpWhenNoClientComes) {
  LoopbackServer server(/*accept_timeout_s=*/0.3);
  const int port = server.port();
  const auto start = Clock::now();
  absl::StatusOr<TcpServerReport> served = server.Wait(5);
  EXPECT_TRUE(absl::IsDeadlineExceeded(served.status())) << served.status();
  EXPECT_LT(Seconds(start), 2);
  EXPECT_NE(served.status().message().find(absl::StrCat(":", port)),
            std::string::npos)
      << served.status();
}

TEST(TcpEngineTest, StrayConnectionsDoNotTakeTheClientsPlace) {
  LoopbackServer server;
  const int port = server.port();
  // Something that is not a fleetbench client connects first and talks
  // HTTP; another connects and says nothing and stays open.
  absl::StatusOr<Socket> http =
      ConnectUntil(HostPort{"127.0.0.1", port}, DeadlineIn(2), nullptr);
  ASSERT_TRUE(http.ok()) << http.status();
  const char get[] = "GET / HTTP/1.1\r\n\r\n";
  ASSERT_TRUE(
      SendAll(http->fd(), get, sizeof(get) - 1, DeadlineIn(1), nullptr).ok());
  absl::StatusOr<Socket> wrong_hello =
      ConnectUntil(HostPort{"127.0.0.1", port}, DeadlineIn(2), nullptr);
  ASSERT_TRUE(wrong_hello.ok());
  ASSERT_TRUE(SendMessage(wrong_hello->fd(),
                          ControlMessage("HELLO").Set("protocol", "other"),
                          DeadlineIn(1), nullptr)
                  .ok());
  TcpClientOptions options = ShortRun(port);
  options.reverse = false;
  options.latency_count = 0;
  absl::StatusOr<TcpClientReport> report =
      RunTcpClient(options, nullptr, nullptr);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_GT(report->forward->gbps, 0);
  ASSERT_TRUE(server.Wait(5).ok());
}

TEST(TcpEngineTest, VersionMismatchIsExplained) {
  LoopbackServer server;
  absl::StatusOr<Socket> s = ConnectUntil(HostPort{"127.0.0.1", server.port()},
                                          DeadlineIn(2), nullptr);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(SendMessage(s->fd(),
                          ControlMessage("HELLO")
                              .Set("protocol", "fleetbench-net")
                              .Set("version", "99")
                              .Set("session", "abc"),
                          DeadlineIn(1), nullptr)
                  .ok());
  absl::StatusOr<ControlMessage> answer =
      RecvMessage(s->fd(), DeadlineIn(2), nullptr);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->verb, "ERROR");
  absl::StatusOr<TcpServerReport> served = server.Wait(5);
  EXPECT_TRUE(absl::IsFailedPrecondition(served.status())) << served.status();
  EXPECT_NE(served.status().message().find("version"), std::string::npos);
}

TEST(TcpEngineTest, ServerStopsWaitingForStreamsWhenTheClientLeaves) {
  LoopbackServer server;
  absl::StatusOr<Socket> s = ConnectUntil(HostPort{"127.0.0.1", server.port()},
                                          DeadlineIn(2), nullptr);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(SendMessage(s->fd(),
                          ControlMessage("HELLO")
                              .Set("protocol", "fleetbench-net")
                              .Set("version", absl::StrCat(kProtocolVersion))
                              .Set("session", "abc"),
                          DeadlineIn(1), nullptr)
                  .ok());
  absl::StatusOr<ControlMessage> welcome =
      RecvMessage(s->fd(), DeadlineIn(2), nullptr);
  ASSERT_TRUE(welcome.ok()) << welcome.status();
  EXPECT_EQ(welcome->verb, "WELCOME");
  ASSERT_TRUE(SendMessage(s->fd(),
                          ControlMessage("TEST")
                              .Set("id", "1")
                              .Set("kind", "forward")
                              .Set("streams", "2")
                              .Set("warmup_ms", "0")
                              .Set("duration_ms", "1000")
                              .Set("message_bytes", "0")
                              .Set("count", "0")
                              .Set("write_bytes", "131072")
                              .Set("socket_buffer_bytes", "0")
                              .Set("congestion", "")
                              .Set("rate_bps", "0"),
                          DeadlineIn(1), nullptr)
                  .ok());
  // The client vanishes before opening its data connections.
  s->Close();
  const auto start = Clock::now();
  absl::StatusOr<TcpServerReport> served = server.Wait(5);
  EXPECT_TRUE(absl::IsUnavailable(served.status())) << served.status();
  EXPECT_LT(Seconds(start), 2);
}

TEST(TcpEngineTest, ClientToClosedPortIsUnavailableAndNamesTheAddress) {
  const int port = ClosedPort();
  const auto start = Clock::now();
  absl::StatusOr<TcpClientReport> report =
      RunTcpClient(ShortRun(port), nullptr, nullptr);
  EXPECT_TRUE(absl::IsUnavailable(report.status())) << report.status();
  EXPECT_NE(report.status().message().find(absl::StrCat("127.0.0.1:", port)),
            std::string::npos)
      << report.status();
  EXPECT_LT(Seconds(start), 2);
}

TEST(TcpEngineTest, CancellingTheClientMidRunStopsBothEnds) {
  LoopbackServer server;
  TcpClientOptions options = ShortRun(server.port());
  options.duration_s = 20;
  std::atomic<bool> cancel{false};
  std::thread canceller([&cancel] {
    std::this_thread::sleep_for(milliseconds(400));
    cancel.store(true);
  });
  const auto start = Clock::now();
  absl::StatusOr<TcpClientReport> report = RunTcpClient(
      options, [&cancel] { return cancel.load(); }, nullptr);
  canceller.join();
  EXPECT_TRUE(absl::IsCancelled(report.status())) << report.status();
  EXPECT_LT(Seconds(start), 2);
  // The server learns the client gave up and ends too, without its own
  // cancel.
  absl::StatusOr<TcpServerReport> served = server.Wait(3);
  EXPECT_TRUE(absl::IsAborted(served.status())) << served.status();
}

TEST(TcpEngineTest, CancellingTheServerMidRunAbortsTheClient) {
  LoopbackServer server;
  TcpClientOptions options = ShortRun(server.port());
  options.duration_s = 20;
  std::thread canceller([&server] {
    std::this_thread::sleep_for(milliseconds(400));
    server.Cancel();
  });
  const auto start = Clock::now();
  absl::StatusOr<TcpClientReport> report =
      RunTcpClient(options, nullptr, nullptr);
  canceller.join();
  EXPECT_TRUE(absl::IsAborted(report.status())) << report.status();
  EXPECT_LT(Seconds(start), 2);
  absl::StatusOr<TcpServerReport> served = server.Wait(3);
  EXPECT_TRUE(absl::IsCancelled(served.status())) << served.status();
}

TEST(TcpEngineTest, RejectsOptionsOutOfRange) {
  TcpClientOptions o = ShortRun(1);
  o.streams = 0;
  EXPECT_TRUE(
      absl::IsInvalidArgument(RunTcpClient(o, nullptr, nullptr).status()));
  o = ShortRun(1);
  o.duration_s = 0.01;
  EXPECT_TRUE(
      absl::IsInvalidArgument(RunTcpClient(o, nullptr, nullptr).status()));
  o = ShortRun(1);
  o.message_bytes = 0;
  EXPECT_TRUE(
      absl::IsInvalidArgument(RunTcpClient(o, nullptr, nullptr).status()));
  o = ShortRun(1);
  o.settings.write_bytes = 0;
  EXPECT_TRUE(
      absl::IsInvalidArgument(RunTcpClient(o, nullptr, nullptr).status()));
  o = ShortRun(1);
  o.settings.socket_buffer_bytes = 100;
  EXPECT_TRUE(
      absl::IsInvalidArgument(RunTcpClient(o, nullptr, nullptr).status()));
  o = ShortRun(1);
  o.settings.congestion = "Bad Name";
  EXPECT_TRUE(
      absl::IsInvalidArgument(RunTcpClient(o, nullptr, nullptr).status()));
  o = ShortRun(1);
  o.settings.rate_bps = -5;
  EXPECT_TRUE(
      absl::IsInvalidArgument(RunTcpClient(o, nullptr, nullptr).status()));
}

}  // namespace
}  // namespace fleetbench::agent::net
