// The server role of the TCP engine (tcp_engine.h): accepts one client,
// then does each test it asks for until BYE.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/benchmarks/net/control_exchange.h"
#include "agent/benchmarks/net/control_frame.h"
#include "agent/benchmarks/net/socket_tuning.h"
#include "agent/benchmarks/net/stream_group.h"
#include "agent/benchmarks/net/tcp_engine.h"
#include "agent/benchmarks/net/test_request.h"
#include "agent/benchmarks/net/throughput_window.h"

namespace fleetbench::agent::net {

using ::fleetbench::agent::pairwise::AcceptUntil;
using ::fleetbench::agent::pairwise::CancelFn;
using ::fleetbench::agent::pairwise::Clock;
using ::fleetbench::agent::pairwise::Deadline;
using ::fleetbench::agent::pairwise::DeadlineIn;
using ::fleetbench::agent::pairwise::FormatHostPort;
using ::fleetbench::agent::pairwise::Listen;
using ::fleetbench::agent::pairwise::SetNoDelay;
using ::fleetbench::agent::pairwise::Socket;
using ::fleetbench::agent::pairwise::WaitReadable;

namespace {

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
    // Buffer sizes go on the listener before the data connections'
    // handshakes (accepted sockets inherit them), as iperf3 -w does: Linux
    // fixes a connection's window clamp from the buffer at the handshake.
    // The listener serves this one client, whose tests share the settings.
    if (test->kind != "latency" && test->settings.socket_buffer_bytes > 0) {
      if (absl::Status s = SetSocketBuffers(listener_.fd(),
                                            test->settings.socket_buffer_bytes);
          !s.ok()) {
        return s;
      }
    }
    if (absl::Status s = SendMessage(
            control_.fd(),
            ControlMessage("ACCEPTING").Set("id", absl::StrCat(test->id)),
            DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("control connection to ", client_));
    }
    const int connections = test->kind == "latency" ? 1 : test->streams;
    absl::StatusOr<std::vector<Socket>> sockets =
        AcceptDataConnections(test->id, connections);
    if (!sockets.ok()) return sockets.status();
    StreamGroup group(*std::move(sockets));
    if (absl::Status s = group.Prepare(); !s.ok()) return s;
    if (test->kind != "latency") {
      if (absl::Status s = group.Apply(test->settings); !s.ok()) return s;
    }
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

  // Forward test: this side receives, owns the window and sends the
  // client its counts in CLOSE.
  absl::Status Receive(const TestRequest& test, StreamGroup& group) {
    group.StartReceivers(test.settings.write_bytes);
    absl::StatusOr<ControlMessage> start = Expect(
        control_.fd(), "START", DeadlineIn(kStepTimeoutS), cancelled_, client_);
    if (!start.ok()) return start.status();
    absl::StatusOr<ReceivedWindow> received = MeasureReceivedWindow(
        control_.fd(), test, group, cancelled_, client_, nullptr);
    if (!received.ok()) return received.status();
    if (absl::Status s = group.error(); !s.ok()) return s;
    if (absl::Status s =
            SendMessage(control_.fd(), EncodeCountsClose(*received),
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
  // when it opens and closes, which is when retransmits are read. They go
  // back in FINISHED.
  absl::Status Send(const TestRequest& test, StreamGroup& group) {
    absl::StatusOr<ControlMessage> start = Expect(
        control_.fd(), "START", DeadlineIn(kStepTimeoutS), cancelled_, client_);
    if (!start.ok()) return start.status();
    group.StartSenders(test.settings);
    absl::StatusOr<SentWindow> sent = MeasureSentWindow(
        control_.fd(), test, group, cancelled_, client_, nullptr);
    if (!sent.ok()) return sent.status();
    if (absl::Status s = group.Finish(DeadlineIn(kStepTimeoutS), cancelled_);
        !s.ok()) {
      return Annotate(s, absl::StrCat("reverse streams to ", client_));
    }
    return SendMessage(control_.fd(), EncodeSenderFinished(*sent),
                       DeadlineIn(kStepTimeoutS), cancelled_);
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

}  // namespace fleetbench::agent::net
