#include "agent/benchmarks/net/tcp_engine.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/benchmarks/net/control_frame.h"
#include "common/stats.h"

namespace fleetbench::agent::net {
namespace {

constexpr char kProtocolName[] = "fleetbench-net";
// How long the other end may take for a step that involves no measuring
// (connecting the data streams, answering a message, draining the streams
// after a window).
constexpr double kStepTimeoutS = 30;
// Longest pause between two ping-pong round trips, or two echoes.
constexpr double kRoundTripTimeoutS = 10;
// How long a freshly accepted connection has to say who it is; a stray
// connection (a port scanner, a health check) is dropped after this.
constexpr double kHelloTimeoutS = 5;
// How often a blocking send()/recv() in a data thread looks at its flags.
constexpr std::chrono::milliseconds kDataSlice{100};

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int64_t Millis(double seconds) { return std::llround(seconds * 1000); }

std::string NewSessionId() {
  std::random_device device;
  std::mt19937_64 engine((static_cast<uint64_t>(device()) << 32) ^ device());
  return absl::StrFormat("%016x", engine());
}

// The status a peer's ERROR message becomes on this side. The peer's
// cancellation is not ours: it becomes ABORTED.
absl::Status FromPeerError(const ControlMessage& message,
                           const std::string& peer) {
  int code = static_cast<int>(absl::StatusCode::kAborted);
  absl::SimpleAtoi(message.Get("code"), &code);
  if (code <= 0 ||
      code > static_cast<int>(absl::StatusCode::kUnauthenticated) ||
      code == static_cast<int>(absl::StatusCode::kCancelled)) {
    code = static_cast<int>(absl::StatusCode::kAborted);
  }
  return absl::Status(
      static_cast<absl::StatusCode>(code),
      absl::StrCat("net: peer ", peer, " stopped: ", message.Get("message")));
}

ControlMessage ErrorMessage(const absl::Status& status) {
  ControlMessage m("ERROR");
  m.Set("code", absl::StrCat(static_cast<int>(status.code())));
  m.Set("message", std::string(status.message()));
  return m;
}

// Tells the peer why we stop, best effort: the connection may be gone.
void SendErrorBestEffort(int fd, const absl::Status& status) {
  SendMessage(fd, ErrorMessage(status), DeadlineIn(1), nullptr).IgnoreError();
}

absl::Status Annotate(const absl::Status& status, absl::string_view what) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat("net: ", what, ": ", status.message()));
}

// Receives the next control message and checks its verb. ERROR from the
// peer becomes that error; EOF becomes UNAVAILABLE naming the peer.
absl::StatusOr<ControlMessage> Expect(int fd, const std::string& verb,
                                      Deadline deadline,
                                      const CancelFn& cancelled,
                                      const std::string& peer) {
  absl::StatusOr<ControlMessage> m = RecvMessage(fd, deadline, cancelled);
  if (!m.ok()) {
    return Annotate(m.status(),
                    absl::StrCat("waiting for ", verb, " from ", peer));
  }
  if (m->verb == "ERROR") return FromPeerError(*m, peer);
  if (m->verb != verb) {
    return absl::InternalError(absl::StrCat(
        "net: protocol error: ", peer, " sent ", m->verb, ", expected ", verb));
  }
  return m;
}

// Sleeps until `until` while watching the control connection: the peer has
// nothing to say before then, so anything it sends (ERROR, EOF) ends the
// test.
absl::Status QuietUntil(int fd, Deadline until, const CancelFn& cancelled,
                        const std::string& peer) {
  absl::Status waited = WaitReadable(fd, until, cancelled);
  if (absl::IsDeadlineExceeded(waited)) return absl::OkStatus();
  if (!waited.ok()) return waited;
  absl::StatusOr<ControlMessage> m = RecvMessage(fd, DeadlineIn(1), cancelled);
  if (!m.ok()) {
    return Annotate(m.status(), absl::StrCat("control connection to ", peer));
  }
  if (m->verb == "ERROR") return FromPeerError(*m, peer);
  return absl::InternalError(absl::StrCat("net: protocol error: ", peer,
                                          " sent ", m->verb,
                                          " during a measurement"));
}

// Per-stream byte counts between two snapshots, and their sum.
std::vector<uint64_t> Delta(const std::vector<uint64_t>& before,
                            const std::vector<uint64_t>& after,
                            uint64_t* total) {
  std::vector<uint64_t> out(after.size());
  *total = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = after[i] - before[i];
    *total += out[i];
  }
  return out;
}

struct alignas(64) PaddedCounter {
  std::atomic<uint64_t> value{0};
};

// The data connections of one test and their threads: one thread per
// connection, sending, receiving or echoing. Counters are per stream and on
// their own cache lines so the threads do not share one.
class StreamGroup {
 public:
  explicit StreamGroup(std::vector<Socket> sockets)
      : sockets_(std::move(sockets)),
        counters_(std::make_unique<PaddedCounter[]>(sockets_.size())) {}
  ~StreamGroup() {
    Abort();
    JoinAll();
  }
  StreamGroup(const StreamGroup&) = delete;
  StreamGroup& operator=(const StreamGroup&) = delete;

  size_t size() const { return sockets_.size(); }

  absl::Status Prepare() {
    for (const Socket& s : sockets_) {
      if (absl::Status st = SetBlockingTimeouts(s.fd(), kDataSlice); !st.ok()) {
        return st;
      }
    }
    return absl::OkStatus();
  }

  absl::Status SetNoDelay() {
    for (const Socket& s : sockets_) {
      if (absl::Status st = net::SetNoDelay(s.fd()); !st.ok()) return st;
    }
    return absl::OkStatus();
  }

  // Each thread writes kStreamBufferBytes blocks until StopSending(), then
  // shuts down its write side so the receiver sees EOF after the last byte.
  void StartSenders() {
    for (size_t i = 0; i < sockets_.size(); ++i) {
      Launch([this, i] { SendLoop(i); });
    }
  }
  // Each thread reads kStreamBufferBytes at a time until EOF.
  void StartReceivers() {
    for (size_t i = 0; i < sockets_.size(); ++i) {
      Launch([this, i] { ReceiveLoop(i); });
    }
  }
  // Each thread returns every message_bytes it reads until EOF.
  void StartEchoers(int message_bytes) {
    for (size_t i = 0; i < sockets_.size(); ++i) {
      Launch([this, i, message_bytes] { EchoLoop(i, message_bytes); });
    }
  }

  std::vector<uint64_t> StreamBytes() const {
    std::vector<uint64_t> out(sockets_.size());
    for (size_t i = 0; i < sockets_.size(); ++i) {
      out[i] = counters_[i].value.load(std::memory_order_relaxed);
    }
    return out;
  }
  // Sum of tcpi_total_retrans over the connections; -1 when unknown.
  int64_t Retransmits() const {
    int64_t sum = 0;
    for (const Socket& s : sockets_) {
      absl::StatusOr<uint32_t> r = TotalRetransmits(s.fd());
      if (!r.ok()) return -1;
      sum += *r;
    }
    return sum;
  }

  void StopSending() { stop_sending_.store(true); }
  void Abort() { abort_.store(true); }
  bool AllEnded() const { return running_.load() == 0; }

  // Waits until every thread has ended (EOF seen, or stopped), at most
  // until `deadline`; then the stragglers are aborted. OK when all ended on
  // their own without an error.
  absl::Status Finish(Deadline deadline, const CancelFn& cancelled) {
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

  absl::Status error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

 private:
  template <typename Fn>
  void Launch(Fn fn) {
    running_.fetch_add(1);
    threads_.emplace_back([this, fn] {
      fn();
      running_.fetch_sub(1);
    });
  }

  void JoinAll() {
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
    threads_.clear();
  }

  void RecordError(const absl::Status& status) {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_.ok()) error_ = status;
  }

  void SendLoop(size_t i) {
    const int fd = sockets_[i].fd();
    // Not zeros: some links and NICs compress or offload zero pages
    // differently; iperf3 sends a non-zero pattern too.
    std::vector<char> block(kStreamBufferBytes);
    for (size_t k = 0; k < block.size(); ++k) {
      block[k] = static_cast<char>('0' + k % 64);
    }
    size_t offset = 0;
    while (!stop_sending_.load(std::memory_order_relaxed) &&
           !abort_.load(std::memory_order_relaxed)) {
      const ssize_t n =
          send(fd, block.data() + offset, block.size() - offset, MSG_NOSIGNAL);
      if (n > 0) {
        counters_[i].value.fetch_add(static_cast<uint64_t>(n),
                                     std::memory_order_relaxed);
        offset += static_cast<size_t>(n);
        if (offset == block.size()) offset = 0;
        continue;
      }
      if (n < 0 &&
          (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        continue;
      }
      RecordError(ErrnoStatus(errno, absl::StrCat("send on stream ", i)));
      break;
    }
    shutdown(fd, SHUT_WR);
  }

  void ReceiveLoop(size_t i) {
    const int fd = sockets_[i].fd();
    std::vector<char> block(kStreamBufferBytes);
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

  void EchoLoop(size_t i, int message_bytes) {
    const int fd = sockets_[i].fd();
    std::vector<char> message(static_cast<size_t>(message_bytes));
    auto last_activity = Clock::now();
    size_t have = 0;
    while (!abort_.load(std::memory_order_relaxed)) {
      const ssize_t n =
          recv(fd, message.data() + have, message.size() - have, 0);
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
        const ssize_t w = send(fd, message.data() + sent, message.size() - sent,
                               MSG_NOSIGNAL);
        if (w > 0) {
          sent += static_cast<size_t>(w);
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
                             errno == EINTR)) {
          if (abort_.load()) return;
        } else {
          RecordError(ErrnoStatus(errno, "send (echo)"));
          return;
        }
      }
      counters_[i].value.fetch_add(1, std::memory_order_relaxed);
    }
  }

  std::vector<Socket> sockets_;
  std::unique_ptr<PaddedCounter[]> counters_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_sending_{false};
  std::atomic<bool> abort_{false};
  std::atomic<int> running_{0};
  mutable std::mutex mu_;
  absl::Status error_;
};

// One test as the client asks for it in TEST.
struct TestRequest {
  int id = 0;
  std::string kind;  // forward, reverse, latency
  int streams = 1;
  double warmup_s = 0;
  double duration_s = 0;
  int message_bytes = 0;
  int count = 0;
};

ControlMessage EncodeTest(const TestRequest& t) {
  ControlMessage m("TEST");
  m.Set("id", absl::StrCat(t.id))
      .Set("kind", t.kind)
      .Set("streams", absl::StrCat(t.streams))
      .Set("warmup_ms", absl::StrCat(Millis(t.warmup_s)))
      .Set("duration_ms", absl::StrCat(Millis(t.duration_s)))
      .Set("message_bytes", absl::StrCat(t.message_bytes))
      .Set("count", absl::StrCat(t.count));
  return m;
}

absl::StatusOr<TestRequest> DecodeTest(const ControlMessage& m) {
  TestRequest t;
  t.kind = m.Get("kind");
  absl::StatusOr<int64_t> id = m.Int("id");
  absl::StatusOr<int64_t> streams = m.Int("streams");
  absl::StatusOr<int64_t> warmup_ms = m.Int("warmup_ms");
  absl::StatusOr<int64_t> duration_ms = m.Int("duration_ms");
  absl::StatusOr<int64_t> message_bytes = m.Int("message_bytes");
  absl::StatusOr<int64_t> count = m.Int("count");
  for (const auto* s :
       {&id, &streams, &warmup_ms, &duration_ms, &message_bytes, &count}) {
    if (!s->ok()) return s->status();
  }
  if (t.kind != "forward" && t.kind != "reverse" && t.kind != "latency") {
    return absl::InvalidArgumentError(
        absl::StrCat("net: unknown test kind '", t.kind, "'"));
  }
  // The same limits as the plugin's parameters: a peer is not trusted to
  // make this node open a thousand connections or idle for a day.
  if (*streams < 1 || *streams > kMaxStreams || *warmup_ms < 0 ||
      *warmup_ms > 60'000 || *duration_ms < 0 || *duration_ms > 600'000 ||
      *message_bytes < 0 || *message_bytes > kMaxMessageBytes || *count < 0 ||
      *count > 1'000'000 ||
      (t.kind == "latency" && (*message_bytes < 1 || *streams != 1)) ||
      (t.kind != "latency" && *duration_ms < 100)) {
    return absl::InvalidArgumentError(
        "net: the client asked for a test outside the allowed limits");
  }
  t.id = static_cast<int>(*id);
  t.streams = static_cast<int>(*streams);
  t.warmup_s = static_cast<double>(*warmup_ms) / 1000;
  t.duration_s = static_cast<double>(*duration_ms) / 1000;
  t.message_bytes = static_cast<int>(*message_bytes);
  t.count = static_cast<int>(*count);
  return t;
}

// ---------------------------------------------------------------- server

// What the receiving side counted in the measured window.
struct ReceivedWindow {
  std::vector<uint64_t> stream_bytes;  // per stream
  uint64_t bytes = 0;                  // their sum
  Clock::duration window{};
};

// The receiving side owns the measured window, whichever direction the
// test runs: quiet on the control connection through the warm-up, counters
// read, OPEN sent (then `on_open`), quiet through the duration, counters
// read. The caller checks the streams' errors and closes the window.
absl::StatusOr<ReceivedWindow> MeasureReceivedWindow(
    int control_fd, const TestRequest& test, StreamGroup& group,
    const CancelFn& cancelled, const std::string& peer,
    const std::function<void()>& on_open) {
  const auto started = Clock::now();
  if (absl::Status s = QuietUntil(
          control_fd,
          started + std::chrono::duration_cast<Clock::duration>(
                        std::chrono::duration<double>(test.warmup_s)),
          cancelled, peer);
      !s.ok()) {
    return s;
  }
  const std::vector<uint64_t> streams0 = group.StreamBytes();
  const auto opened = Clock::now();
  if (absl::Status s = SendMessage(control_fd, ControlMessage("OPEN"),
                                   DeadlineIn(kStepTimeoutS), cancelled);
      !s.ok()) {
    return Annotate(s, absl::StrCat("control connection to ", peer));
  }
  if (on_open) on_open();
  if (absl::Status s = QuietUntil(
          control_fd,
          opened + std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double>(test.duration_s)),
          cancelled, peer);
      !s.ok()) {
    return s;
  }
  const std::vector<uint64_t> streams1 = group.StreamBytes();
  ReceivedWindow received;
  received.window = Clock::now() - opened;
  received.stream_bytes = Delta(streams0, streams1, &received.bytes);
  return received;
}

class ServerSession {
 public:
  ServerSession(const Socket& listener, Socket control, std::string client,
                std::string session, const CancelFn& cancelled,
                const ProgressFn& progress)
      : listener_(listener),
        control_(std::move(control)),
        client_(std::move(client)),
        session_(std::move(session)),
        cancelled_(cancelled),
        progress_(progress) {}

  absl::StatusOr<TcpServerReport> Serve() {
    TcpServerReport report;
    report.client = client_;
    while (true) {
      // Between tests the client sends the next TEST right away; a long
      // silence means it is gone without closing.
      absl::StatusOr<ControlMessage> m =
          RecvMessage(control_.fd(), DeadlineIn(kStepTimeoutS), cancelled_);
      if (!m.ok()) {
        if (absl::IsCancelled(m.status())) {
          SendErrorBestEffort(control_.fd(), m.status());
          return m.status();
        }
        return Annotate(m.status(), absl::StrCat("client ", client_,
                                                 " left before saying BYE"));
      }
      if (m->verb == "BYE") {
        SendMessage(control_.fd(), ControlMessage("BYE"), DeadlineIn(1),
                    nullptr)
            .IgnoreError();
        return report;
      }
      if (m->verb == "ERROR") return FromPeerError(*m, client_);
      if (m->verb != "TEST") {
        const absl::Status s = absl::InternalError(
            absl::StrCat("net: protocol error: ", client_, " sent ", m->verb));
        SendErrorBestEffort(control_.fd(), s);
        return s;
      }
      absl::Status s = RunTest(*m);
      if (!s.ok()) {
        // A peer that sent ERROR needs no answer; one that is gone makes
        // the send fail at once.
        if (!absl::IsAborted(s)) {
          SendErrorBestEffort(control_.fd(), s);
        }
        return s;
      }
      ++report.tests;
    }
  }

 private:
  void Progress(const std::string& message) {
    if (progress_) progress_(0, message);
  }

  absl::Status RunTest(const ControlMessage& m) {
    absl::StatusOr<TestRequest> test = DecodeTest(m);
    if (!test.ok()) return test.status();
    const int connections = test->kind == "latency" ? 1 : test->streams;
    absl::StatusOr<std::vector<Socket>> sockets =
        AcceptDataConnections(test->id, connections);
    if (!sockets.ok()) return sockets.status();
    StreamGroup group(*std::move(sockets));
    if (absl::Status s = group.Prepare(); !s.ok()) return s;
    if (absl::Status s = SendMessage(
            control_.fd(),
            ControlMessage("READY").Set("id", absl::StrCat(test->id)),
            DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("control connection to ", client_));
    }
    Progress(absl::StrCat(test->kind, " test with ", client_));
    if (test->kind == "forward") return Receive(*test, group);
    if (test->kind == "reverse") return Send(*test, group);
    return Echo(*test, group);
  }

  // Accepts the test's data connections; each must introduce itself with
  // this session, this test and a stream index not seen yet. Others are
  // dropped.
  absl::StatusOr<std::vector<Socket>> AcceptDataConnections(int test_id,
                                                            int count) {
    std::vector<Socket> slots(static_cast<size_t>(count));
    int filled = 0;
    const Deadline deadline = DeadlineIn(kStepTimeoutS);
    while (filled < count) {
      absl::StatusOr<Socket> s = AcceptUntil(
          listener_, std::min(deadline, DeadlineIn(0.25)), cancelled_, nullptr);
      if (absl::IsDeadlineExceeded(s.status()) && Clock::now() < deadline) {
        // None yet. A client that gave up says so on the control
        // connection (ERROR or EOF): stop waiting for it then.
        if (absl::Status q =
                QuietUntil(control_.fd(), Clock::now(), cancelled_, client_);
            !q.ok()) {
          return q;
        }
        continue;
      }
      if (!s.ok()) {
        return Annotate(s.status(), absl::StrCat("only ", filled, " of ", count,
                                                 " data connections from ",
                                                 client_, " arrived"));
      }
      absl::StatusOr<ControlMessage> hello = RecvMessage(
          s->fd(), std::min(deadline, DeadlineIn(kHelloTimeoutS)), cancelled_);
      if (absl::IsCancelled(hello.status())) return hello.status();
      if (!hello.ok() || hello->verb != "DATA" ||
          hello->Get("session") != session_ ||
          hello->Get("test") != absl::StrCat(test_id)) {
        continue;
      }
      int stream = -1;
      if (!absl::SimpleAtoi(hello->Get("stream"), &stream) || stream < 0 ||
          stream >= count || slots[static_cast<size_t>(stream)].valid()) {
        continue;
      }
      slots[static_cast<size_t>(stream)] = *std::move(s);
      ++filled;
    }
    return slots;
  }

  // Forward test: this side receives and owns the window.
  absl::Status Receive(const TestRequest& test, StreamGroup& group) {
    group.StartReceivers();
    absl::StatusOr<ControlMessage> start = Expect(
        control_.fd(), "START", DeadlineIn(kStepTimeoutS), cancelled_, client_);
    if (!start.ok()) return start.status();
    absl::StatusOr<ReceivedWindow> received = MeasureReceivedWindow(
        control_.fd(), test, group, cancelled_, client_, nullptr);
    if (!received.ok()) return received.status();
    if (absl::Status s = group.error(); !s.ok()) return s;
    ControlMessage close("CLOSE");
    close.Set("bytes", absl::StrCat(received->bytes))
        .Set("window_ns",
             absl::StrCat(std::chrono::duration_cast<std::chrono::nanoseconds>(
                              received->window)
                              .count()))
        .Set("stream_bytes", absl::StrJoin(received->stream_bytes, ","));
    if (absl::Status s = SendMessage(control_.fd(), close,
                                     DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("control connection to ", client_));
    }
    // The client stops sending on CLOSE; its streams end with EOF.
    if (absl::Status s = group.Finish(DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("forward streams from ", client_));
    }
    return SendMessage(control_.fd(), ControlMessage("FINISHED"),
                       DeadlineIn(kStepTimeoutS), cancelled_);
  }

  // Reverse test: this side sends; the client owns the window and says
  // when it opens and closes, which is when retransmits are read.
  absl::Status Send(const TestRequest& test, StreamGroup& group) {
    absl::StatusOr<ControlMessage> start = Expect(
        control_.fd(), "START", DeadlineIn(kStepTimeoutS), cancelled_, client_);
    if (!start.ok()) return start.status();
    group.StartSenders();
    absl::StatusOr<ControlMessage> open =
        Expect(control_.fd(), "OPEN", DeadlineIn(test.warmup_s + kStepTimeoutS),
               cancelled_, client_);
    if (!open.ok()) return open.status();
    const int64_t retrans0 = group.Retransmits();
    absl::StatusOr<ControlMessage> close = Expect(
        control_.fd(), "CLOSE", DeadlineIn(test.duration_s + kStepTimeoutS),
        cancelled_, client_);
    if (!close.ok()) return close.status();
    const int64_t retrans1 = group.Retransmits();
    group.StopSending();
    if (absl::Status s = group.Finish(DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("reverse streams to ", client_));
    }
    ControlMessage finished("FINISHED");
    finished.Set(
        "retransmits",
        absl::StrCat(retrans0 < 0 || retrans1 < 0 ? -1 : retrans1 - retrans0));
    return SendMessage(control_.fd(), finished, DeadlineIn(kStepTimeoutS),
                       cancelled_);
  }

  absl::Status Echo(const TestRequest& test, StreamGroup& group) {
    // Both ends without Nagle, or a reply can wait for a delayed ACK.
    if (absl::Status s = group.SetNoDelay(); !s.ok()) return s;
    group.StartEchoers(test.message_bytes);
    // The client says END after its last round trip; while the echo
    // thread still sees traffic the wait goes on, in steps.
    while (true) {
      absl::Status waited =
          WaitReadable(control_.fd(), DeadlineIn(1), cancelled_);
      if (waited.ok()) break;
      if (!absl::IsDeadlineExceeded(waited)) return waited;
      if (group.AllEnded()) {
        if (absl::Status s = group.error(); !s.ok()) return s;
        // Echo ended (EOF) without END: give END one more step.
        break;
      }
    }
    absl::StatusOr<ControlMessage> end = Expect(
        control_.fd(), "END", DeadlineIn(kStepTimeoutS), cancelled_, client_);
    if (!end.ok()) return end.status();
    if (absl::Status s = group.Finish(DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("latency connection from ", client_));
    }
    return SendMessage(control_.fd(), ControlMessage("FINISHED"),
                       DeadlineIn(kStepTimeoutS), cancelled_);
  }

  const Socket& listener_;
  Socket control_;
  std::string client_;
  std::string session_;
  const CancelFn& cancelled_;
  const ProgressFn& progress_;
};

// ---------------------------------------------------------------- client

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
    absl::StatusOr<ControlMessage> welcome =
        Expect(control_.fd(), "WELCOME", DeadlineIn(kStepTimeoutS), cancelled_,
               server_);
    return welcome.status();
  }

  absl::StatusOr<TcpClientReport> RunTests() {
    TcpClientReport report;
    if (options_.forward) {
      absl::StatusOr<ThroughputResult> r = Throughput("forward");
      if (!r.ok()) return r.status();
      report.forward = *r;
    }
    if (options_.reverse) {
      absl::StatusOr<ThroughputResult> r = Throughput("reverse");
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
  absl::StatusOr<std::vector<Socket>> StartTest(const TestRequest& test,
                                                int connections) {
    if (absl::Status s = SendMessage(control_.fd(), EncodeTest(test),
                                     DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("control connection to ", server_));
    }
    std::vector<Socket> sockets;
    for (int i = 0; i < connections; ++i) {
      absl::StatusOr<Socket> s = ConnectUntil(
          options_.peer, DeadlineIn(options_.connect_timeout_s), cancelled_);
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
    absl::StatusOr<ControlMessage> ready = Expect(
        control_.fd(), "READY", DeadlineIn(kStepTimeoutS), cancelled_, server_);
    if (!ready.ok()) return ready.status();
    return sockets;
  }

  absl::StatusOr<ThroughputResult> Throughput(const std::string& kind) {
    TestRequest test;
    test.id = ++test_id_;
    test.kind = kind;
    test.streams = options_.streams;
    test.warmup_s = options_.warmup_s;
    test.duration_s = options_.duration_s;
    Progress(Fraction(), absl::StrCat(kind, ": connecting ", test.streams,
                                      " streams to ", server_));
    absl::StatusOr<std::vector<Socket>> sockets = StartTest(test, test.streams);
    if (!sockets.ok()) return sockets.status();
    StreamGroup group(*std::move(sockets));
    if (absl::Status s = group.Prepare(); !s.ok()) return s;
    Progress(Fraction(), absl::StrCat(kind, ": warm-up ", test.warmup_s, " s"));
    absl::StatusOr<ThroughputResult> result = kind == "forward"
                                                  ? SendForward(test, group)
                                                  : ReceiveReverse(test, group);
    done_s_ += test.warmup_s + test.duration_s;
    if (result.ok()) {
      Progress(Fraction(), absl::StrFormat("%s: %.3f Gbps over %d streams",
                                           kind, result->gbps, test.streams));
    }
    return result;
  }

  absl::StatusOr<ThroughputResult> SendForward(const TestRequest& test,
                                               StreamGroup& group) {
    if (absl::Status s = SendMessage(control_.fd(), ControlMessage("START"),
                                     DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("control connection to ", server_));
    }
    group.StartSenders();
    absl::StatusOr<ControlMessage> open =
        Expect(control_.fd(), "OPEN", DeadlineIn(test.warmup_s + kStepTimeoutS),
               cancelled_, server_);
    if (!open.ok()) return open.status();
    const int64_t retrans0 = group.Retransmits();
    Progress(Fraction(),
             absl::StrCat("forward: measuring ", test.duration_s, " s"));
    absl::StatusOr<ControlMessage> close = Expect(
        control_.fd(), "CLOSE", DeadlineIn(test.duration_s + kStepTimeoutS),
        cancelled_, server_);
    if (!close.ok()) return close.status();
    const int64_t retrans1 = group.Retransmits();
    group.StopSending();
    if (absl::Status s = group.Finish(DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("forward streams to ", server_));
    }
    absl::StatusOr<ControlMessage> finished =
        Expect(control_.fd(), "FINISHED", DeadlineIn(kStepTimeoutS), cancelled_,
               server_);
    if (!finished.ok()) return finished.status();

    ThroughputResult r;
    r.streams = test.streams;
    absl::StatusOr<int64_t> bytes = close->Int("bytes");
    absl::StatusOr<int64_t> window_ns = close->Int("window_ns");
    if (!bytes.ok() || !window_ns.ok() || *bytes < 0 || *window_ns <= 0) {
      return absl::InternalError(absl::StrCat("net: protocol error: ", server_,
                                              " sent a CLOSE without counts"));
    }
    r.bytes = static_cast<uint64_t>(*bytes);
    r.window_s = static_cast<double>(*window_ns) / 1e9;
    for (absl::string_view part :
         absl::StrSplit(close->Get("stream_bytes"), ',', absl::SkipEmpty())) {
      uint64_t v = 0;
      if (absl::SimpleAtoi(part, &v)) r.stream_bytes.push_back(v);
    }
    r.gbps = GbpsFromBytes(r.bytes, r.window_s);
    r.retransmits = retrans0 < 0 || retrans1 < 0 ? -1 : retrans1 - retrans0;
    return r;
  }

  absl::StatusOr<ThroughputResult> ReceiveReverse(const TestRequest& test,
                                                  StreamGroup& group) {
    group.StartReceivers();
    if (absl::Status s = SendMessage(control_.fd(), ControlMessage("START"),
                                     DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("control connection to ", server_));
    }
    absl::StatusOr<ReceivedWindow> received = MeasureReceivedWindow(
        control_.fd(), test, group, cancelled_, server_, [&] {
          Progress(Fraction(),
                   absl::StrCat("reverse: measuring ", test.duration_s, " s"));
        });
    if (!received.ok()) return received.status();
    if (absl::Status s = group.error(); !s.ok()) {
      return Annotate(s, absl::StrCat("reverse streams from ", server_));
    }
    if (absl::Status s = SendMessage(control_.fd(), ControlMessage("CLOSE"),
                                     DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("control connection to ", server_));
    }
    if (absl::Status s = group.Finish(DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("reverse streams from ", server_));
    }
    absl::StatusOr<ControlMessage> finished =
        Expect(control_.fd(), "FINISHED", DeadlineIn(kStepTimeoutS), cancelled_,
               server_);
    if (!finished.ok()) return finished.status();

    ThroughputResult r;
    r.streams = test.streams;
    r.stream_bytes = received->stream_bytes;
    r.bytes = received->bytes;
    r.window_s = std::chrono::duration<double>(received->window).count();
    r.gbps = GbpsFromBytes(r.bytes, r.window_s);
    absl::StatusOr<int64_t> retrans = finished->Int("retransmits");
    r.retransmits = retrans.ok() ? *retrans : -1;
    return r;
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
    if (absl::Status s = SendMessage(control_.fd(), ControlMessage("END"),
                                     DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("control connection to ", server_));
    }
    absl::StatusOr<ControlMessage> finished =
        Expect(control_.fd(), "FINISHED", DeadlineIn(kStepTimeoutS), cancelled_,
               server_);
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

// Waits for the client's HELLO on connections to `listener`; a connection
// that is not a fleetbench net client is dropped and the wait goes on.
absl::StatusOr<std::pair<Socket, std::string>> AcceptClient(
    const Socket& listener, const std::string& where, Deadline deadline,
    double timeout_s, const CancelFn& cancelled, std::string* session) {
  while (true) {
    std::string peer;
    absl::StatusOr<Socket> s =
        AcceptUntil(listener, deadline, cancelled, &peer);
    if (absl::IsDeadlineExceeded(s.status())) {
      return absl::DeadlineExceededError(
          absl::StrCat("net: no client connected to ", where, " within ",
                       timeout_s, " s (accept_timeout_s)"));
    }
    if (!s.ok())
      return Annotate(s.status(), absl::StrCat("listening on ", where));
    absl::StatusOr<ControlMessage> hello = RecvMessage(
        s->fd(), std::min(deadline, DeadlineIn(kHelloTimeoutS)), cancelled);
    if (absl::IsCancelled(hello.status())) return hello.status();
    if (!hello.ok() || hello->verb != "HELLO" ||
        hello->Get("protocol") != kProtocolName ||
        hello->Get("session").empty()) {
      continue;
    }
    if (hello->Get("version") != absl::StrCat(kProtocolVersion)) {
      const absl::Status mismatch = absl::FailedPreconditionError(absl::StrCat(
          "net: client ", peer, " speaks protocol version ",
          hello->Get("version"), ", this server ", kProtocolVersion,
          "; run the same fleetbench version on both nodes"));
      SendErrorBestEffort(s->fd(), mismatch);
      return mismatch;
    }
    *session = hello->Get("session");
    return std::make_pair(*std::move(s), peer);
  }
}

}  // namespace

double GbpsFromBytes(uint64_t bytes, double seconds) {
  if (!(seconds > 0)) return 0;
  return static_cast<double>(bytes) * 8.0 / seconds / 1e9;
}

LatencyResult SummarizeRoundTrips(const std::vector<double>& rtt_us,
                                  int message_bytes) {
  LatencyResult r;
  r.count = static_cast<int>(rtt_us.size());
  r.message_bytes = message_bytes;
  if (rtt_us.empty()) return r;
  r.p50_us = Percentile(rtt_us, 0.5);
  r.p99_us = Percentile(rtt_us, 0.99);
  const auto [mn, mx] = std::minmax_element(rtt_us.begin(), rtt_us.end());
  r.min_us = *mn;
  r.max_us = *mx;
  double sum = 0;
  for (double v : rtt_us) sum += v;
  r.mean_us = sum / static_cast<double>(rtt_us.size());
  return r;
}

absl::StatusOr<TcpServerReport> RunTcpServer(const TcpServerOptions& options,
                                             const ListeningFn& on_listening,
                                             const CancelFn& cancelled,
                                             const ProgressFn& progress) {
  if (!(options.accept_timeout_s > 0)) {
    return absl::InvalidArgumentError("net: accept_timeout_s must be > 0");
  }
  int port = 0;
  absl::StatusOr<Socket> listener = Listen(options.bind, 0, &port);
  if (!listener.ok()) {
    return Annotate(listener.status(),
                    absl::StrCat("cannot listen on ", options.bind,
                                 " (the bind parameter)"));
  }
  const std::string where = FormatHostPort(options.bind, port);
  if (on_listening) {
    if (absl::Status s = on_listening(port); !s.ok()) return s;
  }
  if (progress) progress(0, absl::StrCat("listening on ", where));

  std::string session;
  absl::StatusOr<std::pair<Socket, std::string>> client =
      AcceptClient(*listener, where, DeadlineIn(options.accept_timeout_s),
                   options.accept_timeout_s, cancelled, &session);
  if (!client.ok()) return client.status();
  Socket control = std::move(client->first);
  const std::string peer = client->second;
  if (absl::Status s = SetNoDelay(control.fd()); !s.ok()) return s;
  ControlMessage welcome("WELCOME");
  welcome.Set("version", absl::StrCat(kProtocolVersion));
  if (absl::Status s = SendMessage(control.fd(), welcome,
                                   DeadlineIn(kStepTimeoutS), cancelled);
      !s.ok()) {
    return Annotate(s, absl::StrCat("greeting client ", peer));
  }
  if (progress) progress(0, absl::StrCat("client ", peer, " connected"));
  ServerSession server(*listener, std::move(control), peer, session, cancelled,
                       progress);
  absl::StatusOr<TcpServerReport> report = server.Serve();
  if (report.ok() && progress) {
    progress(1, absl::StrCat("served ", report->tests, " tests to ", peer));
  }
  return report;
}

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
  if (!(options.connect_timeout_s > 0)) {
    return absl::InvalidArgumentError("net: connect_timeout_s must be > 0");
  }
  ClientSession client(options, cancelled, progress);
  return client.Run();
}

}  // namespace fleetbench::agent::net
