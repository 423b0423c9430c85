// The client role of the TCP engine (tcp_engine.h): connects, asks the
// server for each test in turn and keeps every result.
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/benchmarks/net/control_exchange.h"
#include "agent/benchmarks/net/control_frame.h"
#include "agent/benchmarks/net/socket_tuning.h"
#include "agent/benchmarks/net/stream_group.h"
#include "agent/benchmarks/net/tcp_engine.h"
#include "agent/benchmarks/net/test_request.h"
#include "agent/benchmarks/net/throughput_window.h"

namespace fleetbench::agent::net {

using ::fleetbench::agent::pairwise::CancelFn;
using ::fleetbench::agent::pairwise::Clock;
using ::fleetbench::agent::pairwise::ConnectUntil;
using ::fleetbench::agent::pairwise::Deadline;
using ::fleetbench::agent::pairwise::DeadlineIn;
using ::fleetbench::agent::pairwise::ErrnoStatus;
using ::fleetbench::agent::pairwise::FormatHostPort;
using ::fleetbench::agent::pairwise::SetBlockingTimeouts;
using ::fleetbench::agent::pairwise::SetNoDelay;
using ::fleetbench::agent::pairwise::Socket;

namespace {

std::string NewSessionId() {
  std::random_device device;
  std::mt19937_64 engine((static_cast<uint64_t>(device()) << 32) ^ device());
  return absl::StrFormat("%016x", engine());
}

// Which way the bytes of a throughput test flow.
enum class Direction {
  kForward,  // client -> server: this end sends
  kReverse,  // server -> client: this end receives and owns the window
};

class ClientSession {
 public:
  ClientSession(const TcpClientOptions& options, const CancelFn& cancelled,
                const ProgressFn& progress)
      : options_(options),
        server_(FormatHostPort(options.peer.host, options.peer.port)),
        cancelled_(cancelled),
        progress_(progress) {
    const double throughput_s = options.warmup_s + options.duration_s;
    planned_s_ = (options.forward ? throughput_s : 0) +
                 (options.reverse ? throughput_s : 0) +
                 (options.latency_count > 0 ? 1 : 0);
  }

  absl::StatusOr<TcpClientReport> Run() {
    if (absl::Status s = Connect(); !s.ok()) return s;
    absl::StatusOr<TcpClientReport> report = RunTests();
    if (!report.ok()) {
      if (!absl::IsAborted(report.status())) {
        SendErrorBestEffort(control_.fd(), report.status());
      }
      return report.status();
    }
    if (absl::Status s = SendMessage(control_.fd(), ControlMessage("BYE"),
                                     DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("saying BYE to ", server_));
    }
    // The answer only confirms the server saw BYE; the results are ours.
    RecvMessage(control_.fd(), DeadlineIn(kHelloTimeoutS), cancelled_)
        .status()
        .IgnoreError();
    Progress(1, "done");
    return report;
  }

 private:
  void Progress(double fraction, const std::string& message) {
    if (progress_) progress_(std::clamp(fraction, 0.0, 1.0), message);
  }
  double Fraction() const { return planned_s_ > 0 ? done_s_ / planned_s_ : 0; }

  absl::Status SendControl(const ControlMessage& message) {
    absl::Status s = SendMessage(control_.fd(), message,
                                 DeadlineIn(kStepTimeoutS), cancelled_);
    if (!s.ok()) {
      return Annotate(s, absl::StrCat("control connection to ", server_));
    }
    return s;
  }
  absl::StatusOr<ControlMessage> ExpectControl(const std::string& verb,
                                               double timeout_s) {
    return Expect(control_.fd(), verb, DeadlineIn(timeout_s), cancelled_,
                  server_);
  }

  absl::Status Connect() {
    absl::StatusOr<Socket> control = ConnectUntil(
        options_.peer, DeadlineIn(options_.connect_timeout_s), cancelled_);
    if (!control.ok()) {
      return Annotate(control.status(),
                      absl::StrCat("cannot reach the server at ", server_));
    }
    control_ = *std::move(control);
    // Control messages are small and time the window: no Nagle delay.
    if (absl::Status s = SetNoDelay(control_.fd()); !s.ok()) return s;
    session_ = NewSessionId();
    ControlMessage hello("HELLO");
    hello.Set("protocol", kProtocolName)
        .Set("version", absl::StrCat(kProtocolVersion))
        .Set("session", session_);
    if (absl::Status s = SendMessage(control_.fd(), hello,
                                     DeadlineIn(kHelloTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("greeting the server at ", server_));
    }
    return ExpectControl("WELCOME", kStepTimeoutS).status();
  }

  absl::StatusOr<TcpClientReport> RunTests() {
    TcpClientReport report;
    if (options_.forward) {
      absl::StatusOr<ThroughputResult> r = Throughput(Direction::kForward);
      if (!r.ok()) return r.status();
      report.forward = *r;
    }
    if (options_.reverse) {
      absl::StatusOr<ThroughputResult> r = Throughput(Direction::kReverse);
      if (!r.ok()) return r.status();
      report.reverse = *r;
    }
    if (options_.latency_count > 0) {
      absl::StatusOr<LatencyResult> r = Latency();
      if (!r.ok()) return r.status();
      report.latency = *r;
    }
    return report;
  }

  // Sends TEST, opens the test's data connections and waits for READY.
  // The server says ACCEPTING once its listener has the test's buffer
  // sizes, so that the handshakes below already use them on both ends.
  absl::StatusOr<std::vector<Socket>> StartTest(const TestRequest& test,
                                                int connections) {
    if (absl::Status s = SendControl(EncodeTest(test)); !s.ok()) return s;
    absl::StatusOr<ControlMessage> accepting =
        ExpectControl("ACCEPTING", kStepTimeoutS);
    if (!accepting.ok()) return accepting.status();
    const int64_t buffer_bytes = test.kind == "latency"
                                     ? 0
                                     : test.settings.socket_buffer_bytes;
    const pairwise::BeforeConnectFn before_connect =
        buffer_bytes > 0 ? pairwise::BeforeConnectFn([buffer_bytes](int fd) {
          return SetSocketBuffers(fd, buffer_bytes);
        })
                         : nullptr;
    std::vector<Socket> sockets;
    for (int i = 0; i < connections; ++i) {
      absl::StatusOr<Socket> s =
          ConnectUntil(options_.peer, DeadlineIn(options_.connect_timeout_s),
                       cancelled_, before_connect);
      if (!s.ok()) {
        return Annotate(s.status(),
                        absl::StrCat("data connection ", i, " to ", server_));
      }
      ControlMessage hello("DATA");
      hello.Set("session", session_)
          .Set("test", absl::StrCat(test.id))
          .Set("stream", absl::StrCat(i));
      if (absl::Status st = SendMessage(s->fd(), hello,
                                        DeadlineIn(kHelloTimeoutS), cancelled_);
          !st.ok()) {
        return Annotate(st,
                        absl::StrCat("data connection ", i, " to ", server_));
      }
      sockets.push_back(*std::move(s));
    }
    absl::StatusOr<ControlMessage> ready =
        ExpectControl("READY", kStepTimeoutS);
    if (!ready.ok()) return ready.status();
    return sockets;
  }

  // One throughput test, either way. This end plays the window's sending
  // or receiving side (throughput_window.h); the result joins what it
  // measured with what the server reports: the server's counts from its
  // CLOSE when this end sends, the server's retransmits from its FINISHED
  // when this end receives.
  absl::StatusOr<ThroughputResult> Throughput(Direction direction) {
    const bool sending = direction == Direction::kForward;
    const std::string kind = sending ? "forward" : "reverse";
    const std::string streams_to_server =
        sending ? absl::StrCat("forward streams to ", server_)
                : absl::StrCat("reverse streams from ", server_);
    TestRequest test;
    test.id = ++test_id_;
    test.kind = kind;
    test.streams = options_.streams;
    test.warmup_s = options_.warmup_s;
    test.duration_s = options_.duration_s;
    test.settings = options_.settings;
    Progress(Fraction(), absl::StrCat(kind, ": connecting ", test.streams,
                                      " streams to ", server_));
    absl::StatusOr<std::vector<Socket>> sockets = StartTest(test, test.streams);
    if (!sockets.ok()) return sockets.status();
    StreamGroup group(*std::move(sockets));
    if (absl::Status s = group.Prepare(); !s.ok()) return s;
    if (absl::Status s = group.Apply(test.settings); !s.ok()) return s;
    const SocketBuffers buffers = group.Buffers();
    Progress(Fraction(), absl::StrCat(kind, ": warm-up ", test.warmup_s, " s"));
    const auto on_open = [&] {
      Progress(Fraction(),
               absl::StrCat(kind, ": measuring ", test.duration_s, " s"));
    };

    // As on the server: receivers read before START crosses, senders
    // begin once it has.
    if (!sending) group.StartReceivers(test.settings.write_bytes);
    if (absl::Status s = SendControl(ControlMessage("START")); !s.ok()) {
      return s;
    }
    std::optional<SentWindow> sent;
    std::optional<ReceivedWindow> received;
    if (sending) {
      group.StartSenders(test.settings);
      absl::StatusOr<SentWindow> window = MeasureSentWindow(
          control_.fd(), test, group, cancelled_, server_, on_open);
      if (!window.ok()) return window.status();
      sent = *std::move(window);
    } else {
      absl::StatusOr<ReceivedWindow> window = MeasureReceivedWindow(
          control_.fd(), test, group, cancelled_, server_, on_open);
      if (!window.ok()) return window.status();
      if (absl::Status s = group.error(); !s.ok()) {
        return Annotate(s, streams_to_server);
      }
      if (absl::Status s = SendControl(ControlMessage("CLOSE")); !s.ok()) {
        return s;
      }
      received = *std::move(window);
    }
    if (absl::Status s = group.Finish(DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, streams_to_server);
    }
    absl::StatusOr<ControlMessage> finished =
        ExpectControl("FINISHED", kStepTimeoutS);
    if (!finished.ok()) return finished.status();

    absl::StatusOr<ThroughputResult> result;
    if (sending) {
      absl::StatusOr<ReceivedWindow> counts =
          DecodeCountsClose(sent->close, server_);
      if (counts.ok()) {
        result = ThroughputFromWindow(test, *counts, *sent);
      } else {
        result = counts.status();
      }
    } else {
      result = ThroughputFromWindow(test, *received,
                                    DecodeSenderFinished(*finished));
    }
    if (result.ok()) {
      result->client_sndbuf_bytes = buffers.send_bytes;
      result->client_rcvbuf_bytes = buffers.receive_bytes;
    }
    done_s_ += test.warmup_s + test.duration_s;
    if (result.ok()) {
      Progress(Fraction(), absl::StrFormat("%s: %.3f Gbps over %d streams",
                                           kind, result->gbps, test.streams));
    }
    return result;
  }

  absl::StatusOr<LatencyResult> Latency() {
    TestRequest test;
    test.id = ++test_id_;
    test.kind = "latency";
    test.streams = 1;
    test.message_bytes = options_.message_bytes;
    test.count = options_.latency_count;
    Progress(Fraction(), absl::StrCat("latency: ", test.count, " x ",
                                      test.message_bytes, " B ping-pong"));
    absl::StatusOr<std::vector<Socket>> sockets = StartTest(test, 1);
    if (!sockets.ok()) return sockets.status();
    Socket data = std::move((*sockets)[0]);
    if (absl::Status s = SetNoDelay(data.fd()); !s.ok()) return s;
    if (absl::Status s = SetBlockingTimeouts(data.fd(), kDataSlice); !s.ok()) {
      return s;
    }
    absl::StatusOr<std::vector<double>> rtts = PingPong(data.fd(), test);
    if (!rtts.ok()) {
      return Annotate(rtts.status(),
                      absl::StrCat("latency connection to ", server_));
    }
    data.Close();  // the echo thread ends on EOF
    if (absl::Status s = SendControl(ControlMessage("END")); !s.ok()) return s;
    absl::StatusOr<ControlMessage> finished =
        ExpectControl("FINISHED", kStepTimeoutS);
    if (!finished.ok()) return finished.status();
    done_s_ += 1;
    LatencyResult r = SummarizeRoundTrips(*rtts, test.message_bytes);
    Progress(Fraction(), absl::StrFormat("latency: p50 %.1f us, p99 %.1f us",
                                         r.p50_us, r.p99_us));
    return r;
  }

  // Blocking send()/recv() (SO_*TIMEO slices) rather than poll() first:
  // one system call per direction, as netperf's TCP_RR does.
  absl::StatusOr<std::vector<double>> PingPong(int fd,
                                               const TestRequest& test) {
    std::vector<char> message(static_cast<size_t>(test.message_bytes), 'p');
    std::vector<char> reply(message.size());
    std::vector<double> rtts;
    rtts.reserve(static_cast<size_t>(test.count));
    const int total = kLatencyWarmupRoundTrips + test.count;
    auto last_report = Clock::now();
    for (int i = 0; i < total; ++i) {
      if (cancelled_ && cancelled_()) {
        return absl::CancelledError("net: cancelled");
      }
      const auto start = Clock::now();
      const Deadline deadline = DeadlineIn(kRoundTripTimeoutS);
      if (absl::Status s =
              Transfer(fd, message.data(), message.size(), true, deadline);
          !s.ok()) {
        return s;
      }
      if (absl::Status s =
              Transfer(fd, reply.data(), reply.size(), false, deadline);
          !s.ok()) {
        return s;
      }
      const auto stop = Clock::now();
      if (i >= kLatencyWarmupRoundTrips) {
        rtts.push_back(
            std::chrono::duration<double, std::micro>(stop - start).count());
      }
      if (stop - last_report > std::chrono::seconds(1)) {
        last_report = stop;
        Progress(Fraction(),
                 absl::StrCat("latency: ", i, " of ", total, " round trips"));
      }
    }
    return rtts;
  }

  absl::Status Transfer(int fd, char* data, size_t size, bool sending,
                        Deadline deadline) {
    size_t done = 0;
    while (done < size) {
      const ssize_t n = sending
                            ? send(fd, data + done, size - done, MSG_NOSIGNAL)
                            : recv(fd, data + done, size - done, 0);
      if (n > 0) {
        done += static_cast<size_t>(n);
        continue;
      }
      if (n == 0) {
        return absl::UnavailableError("the server closed the connection");
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return ErrnoStatus(errno, sending ? "send" : "recv");
      }
      if (cancelled_ && cancelled_()) {
        return absl::CancelledError("net: cancelled");
      }
      if (Clock::now() >= deadline) {
        return absl::DeadlineExceededError(
            absl::StrCat("no echo within ", kRoundTripTimeoutS, " s"));
      }
    }
    return absl::OkStatus();
  }

  const TcpClientOptions& options_;
  const std::string server_;
  const CancelFn& cancelled_;
  const ProgressFn& progress_;
  Socket control_;
  std::string session_;
  int test_id_ = 0;
  double planned_s_ = 0;
  double done_s_ = 0;
};

}  // namespace

absl::StatusOr<TcpClientReport> RunTcpClient(const TcpClientOptions& options,
                                             const CancelFn& cancelled,
                                             const ProgressFn& progress) {
  if (options.streams < 1 || options.streams > kMaxStreams) {
    return absl::InvalidArgumentError(
        absl::StrCat("net: streams must be 1..", kMaxStreams));
  }
  if (!(options.duration_s >= 0.1) || !(options.warmup_s >= 0) ||
      options.duration_s > 600 || options.warmup_s > 60) {
    return absl::InvalidArgumentError(
        "net: duration_s must be 0.1..600 and warmup_s 0..60");
  }
  if (options.latency_count < 0 || options.latency_count > 1'000'000 ||
      options.message_bytes < 1 || options.message_bytes > kMaxMessageBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "net: latency_count must be 0..1000000 and message_bytes 1..",
        kMaxMessageBytes));
  }
  const StreamSettings& settings = options.settings;
  if (settings.write_bytes < 1 || settings.write_bytes > kMaxWriteBytes ||
      (settings.socket_buffer_bytes != 0 &&
       (settings.socket_buffer_bytes < kMinSocketBufferBytes ||
        settings.socket_buffer_bytes > kMaxSocketBufferBytes)) ||
      !(settings.rate_bps >= 0) || settings.rate_bps > kMaxRateBps ||
      (!settings.congestion.empty() && !IsCongestionName(settings.congestion))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "net: write_bytes must be 1..", kMaxWriteBytes,
        ", socket_buffer_bytes 0 or ", kMinSocketBufferBytes, "..",
        kMaxSocketBufferBytes, ", rate_bps 0..", kMaxRateBps,
        " and congestion a congestion control's name"));
  }
  if (!(options.connect_timeout_s > 0)) {
    return absl::InvalidArgumentError("net: connect_timeout_s must be > 0");
  }
  ClientSession client(options, cancelled, progress);
  return client.Run();
}

}  // namespace fleetbench::agent::net
