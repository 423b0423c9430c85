#include "agent/benchmarks/rdma/rdma_session.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/stats.h"
#include "common/units.h"

namespace fleetbench::agent::rdma {
namespace {

// A stray connection (port scanner, health check) that sends no valid
// first record within this time is dropped and the server accepts again.
constexpr double kFirstRecordTimeoutS = 5;
// Longest the server waits for the client's next record (the client may be
// in a long bandwidth test meanwhile) and either side for an answer.
constexpr double kPeerSilenceTimeoutS = 3600;
constexpr double kReplyTimeoutS = 30;
// How long a failing side spends telling the other why.
constexpr double kGoodbyeTimeoutS = 2;

// The same code, the message prefixed with what we were doing.
absl::Status Context(const absl::Status& status, absl::string_view what) {
  if (status.ok()) return status;
  if (absl::IsCancelled(status)) return absl::CancelledError("rdma: cancelled");
  return absl::Status(status.code(),
                      absl::StrCat("rdma: ", what, ": ", status.message()));
}

absl::Status SendRecord(int fd, const std::string& record,
                        pairwise::Deadline deadline,
                        const CancelFn& cancelled) {
  return pairwise::SendAll(fd, record.data(), record.size(), deadline,
                           cancelled);
}

// Reads one whole record; the header is checked before the payload is
// read, so a garbage length never makes us wait for or allocate bytes.
// *speaks_exchange (when given) says whether the peer's bytes began with
// the record magic, i.e. whether it is a fleetbench rdma peer at all.
absl::StatusOr<std::string> RecvRecord(int fd, pairwise::Deadline deadline,
                                       const CancelFn& cancelled,
                                       bool* speaks_exchange = nullptr) {
  std::string record(kRecordHeaderBytes, '\0');
  if (absl::Status s = pairwise::RecvExact(fd, record.data(), record.size(),
                                           deadline, cancelled);
      !s.ok()) {
    return s;
  }
  if (speaks_exchange != nullptr) {
    *speaks_exchange = record.compare(0, sizeof(kRecordMagic), kRecordMagic,
                                      sizeof(kRecordMagic)) == 0;
  }
  absl::StatusOr<RecordHeader> header = DecodeRecordHeader(record);
  if (!header.ok()) return header.status();
  record.resize(kRecordHeaderBytes + header->payload_bytes);
  if (header->payload_bytes > 0) {
    if (absl::Status s =
            pairwise::RecvExact(fd, record.data() + kRecordHeaderBytes,
                                header->payload_bytes, deadline, cancelled);
        !s.ok()) {
      return s;
    }
  }
  return record;
}

absl::StatusOr<RecordType> TypeOf(const std::string& record) {
  absl::StatusOr<RecordHeader> header = DecodeRecordHeader(
      absl::string_view(record).substr(0, kRecordHeaderBytes));
  if (!header.ok()) return header.status();
  return header->type;
}

// ABORTED with the peer's reason for a failure it sent; the peer's OK
// goodbye where `ok_is_fine`, else INVALID_ARGUMENT (out of sequence).
absl::Status FromDone(const std::string& record, const std::string& peer,
                      bool ok_is_fine) {
  absl::Status peer_status;
  if (absl::Status s = DecodeDone(record, &peer_status); !s.ok()) {
    return Context(s, absl::StrCat("goodbye from ", peer));
  }
  if (peer_status.ok()) {
    if (ok_is_fine) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("rdma: peer ", peer, " said goodbye too early"));
  }
  return absl::AbortedError(
      absl::StrCat("rdma: peer ", peer,
                   " stopped: ", absl::StatusCodeToString(peer_status.code()),
                   ": ", peer_status.message()));
}

// Reads the next record, which must be of type `want`; a kDone from the
// peer instead becomes ABORTED with its reason. Errors name `what` and the
// peer.
absl::StatusOr<std::string> RecvExpected(int fd, RecordType want,
                                         absl::string_view what,
                                         const std::string& peer,
                                         pairwise::Deadline deadline,
                                         const CancelFn& cancelled) {
  const std::string context = absl::StrCat(what, " from ", peer);
  absl::StatusOr<std::string> record = RecvRecord(fd, deadline, cancelled);
  if (!record.ok()) return Context(record.status(), context);
  absl::StatusOr<RecordType> type = TypeOf(*record);
  if (!type.ok()) return Context(type.status(), context);
  if (*type == RecordType::kDone && want != RecordType::kDone) {
    return FromDone(*record, peer, /*ok_is_fine=*/false);
  }
  if (*type != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rdma: ", context, ": got record type ", static_cast<int>(*type),
        " out of sequence (expected ", static_cast<int>(want), ")"));
  }
  return record;
}

// Best effort: the peer learns why we stop. Returns `status`.
absl::Status Goodbye(int fd, const absl::Status& status) {
  (void)SendRecord(fd, EncodeDone(status),
                   pairwise::DeadlineIn(kGoodbyeTimeoutS), nullptr);
  return status;
}

uint32_t PathMtu(const QueuePairInfo& local, const QueuePairInfo& remote) {
  return std::min(local.mtu, remote.mtu);
}

void Report(const ProgressFn& progress, double fraction,
            const std::string& message) {
  if (progress) progress(fraction, message);
}

// Accepts until a connection opens with a valid queue-pair record, dropping
// strays; returns it and the peer's record.
absl::StatusOr<std::pair<pairwise::Socket, QueuePairInfo>> AcceptClient(
    const pairwise::Socket& listener, const std::string& where,
    const ServerOptions& options, const CancelFn& cancelled,
    std::string* peer) {
  const pairwise::Deadline deadline =
      pairwise::DeadlineIn(options.accept_timeout_s);
  std::string last_stray;
  while (true) {
    absl::StatusOr<pairwise::Socket> socket =
        pairwise::AcceptUntil(listener, deadline, cancelled, peer);
    if (absl::IsDeadlineExceeded(socket.status())) {
      return absl::DeadlineExceededError(absl::StrCat(
          "rdma: no client connected to ", where, " within ",
          options.accept_timeout_s, " s",
          last_stray.empty() ? ""
                             : absl::StrCat(" (dropped ", last_stray, ")")));
    }
    if (!socket.ok()) return Context(socket.status(), "accept");
    (void)pairwise::SetNoDelay(socket->fd());
    bool speaks_exchange = false;
    absl::StatusOr<std::string> record = RecvRecord(
        socket->fd(),
        std::min(deadline, pairwise::DeadlineIn(kFirstRecordTimeoutS)),
        cancelled, &speaks_exchange);
    if (absl::IsCancelled(record.status())) return Context(record.status(), "");
    absl::StatusOr<QueuePairInfo> info =
        record.ok() ? DecodeQueuePairInfo(*record)
                    : absl::StatusOr<QueuePairInfo>(record.status());
    if (info.ok()) return std::make_pair(std::move(*socket), *info);
    if (speaks_exchange && absl::IsInvalidArgument(info.status())) {
      // A fleetbench client we cannot pair with (another exchange version,
      // a corrupt record): tell it and fail, rather than wait for another.
      return Goodbye(
          socket->fd(),
          Context(info.status(), absl::StrCat("queue-pair info from ", *peer)));
    }
    last_stray = absl::StrCat(*peer, ": ", info.status().message());
  }
}

}  // namespace

LatencySummary SummarizeRoundTrips(const std::vector<double>& round_trip_us,
                                   uint32_t bytes) {
  LatencySummary out;
  out.bytes = bytes;
  out.iterations = static_cast<int>(round_trip_us.size());
  if (round_trip_us.empty()) return out;
  std::vector<double> one_way(round_trip_us.size());
  std::transform(round_trip_us.begin(), round_trip_us.end(), one_way.begin(),
                 [](double rtt) { return rtt / 2; });
  out.p50_us = Percentile(one_way, 0.5);
  out.p99_us = Percentile(one_way, 0.99);
  const auto [mn, mx] = std::minmax_element(one_way.begin(), one_way.end());
  out.min_us = *mn;
  out.max_us = *mx;
  out.mean_us = std::accumulate(one_way.begin(), one_way.end(), 0.0) /
                static_cast<double>(one_way.size());
  return out;
}

absl::Status RunRdmaServer(const ServerOptions& options,
                           const EndpointFactory& factory,
                           const ListeningFn& on_listening,
                           const CancelFn& cancelled,
                           const ProgressFn& progress) {
  // Open the device first: a node that cannot run fails before it invites
  // a client.
  absl::StatusOr<std::unique_ptr<RdmaEndpoint>> endpoint =
      factory(options.endpoint);
  if (!endpoint.ok()) return endpoint.status();

  int port = 0;
  absl::StatusOr<pairwise::Socket> listener =
      pairwise::Listen(options.bind, 0, &port);
  if (!listener.ok()) return Context(listener.status(), "listen");
  const std::string where = pairwise::FormatHostPort(options.bind, port);
  if (on_listening) {
    if (absl::Status s = on_listening(port); !s.ok()) return s;
  }
  Report(progress, 0.05, absl::StrCat("waiting for the client on ", where));

  std::string peer;
  auto accepted = AcceptClient(*listener, where, options, cancelled, &peer);
  if (!accepted.ok()) return accepted.status();
  listener->Close();
  pairwise::Socket socket = std::move(accepted->first);
  const QueuePairInfo remote = accepted->second;
  const int fd = socket.fd();

  const QueuePairInfo local = (*endpoint)->local_info();
  if (absl::Status s =
          SendRecord(fd, EncodeQueuePairInfo(local),
                     pairwise::DeadlineIn(kReplyTimeoutS), cancelled);
      !s.ok()) {
    return Context(s, absl::StrCat("sending queue-pair info to ", peer));
  }
  if (absl::Status s = (*endpoint)->Connect(remote); !s.ok()) {
    return Goodbye(fd, s);
  }
  if (absl::Status s = SendRecord(
          fd, EncodeReady(), pairwise::DeadlineIn(kReplyTimeoutS), cancelled);
      !s.ok()) {
    return Context(s, absl::StrCat("sending ready to ", peer));
  }
  Report(progress, 0.1,
         absl::StrCat("queue pair connected to ", peer, ", path MTU ",
                      PathMtu(local, remote)));

  while (true) {
    absl::StatusOr<std::string> record =
        RecvRecord(fd, pairwise::DeadlineIn(kPeerSilenceTimeoutS), cancelled);
    if (!record.ok()) {
      const absl::Status s =
          Context(record.status(), absl::StrCat("waiting for client ", peer));
      return absl::IsInvalidArgument(s) || absl::IsCancelled(s) ? Goodbye(fd, s)
                                                                : s;
    }
    absl::StatusOr<RecordType> type = TypeOf(*record);
    if (!type.ok()) {
      return Goodbye(fd, Context(type.status(),
                                 absl::StrCat("record from client ", peer)));
    }
    if (*type == RecordType::kDone) {
      return FromDone(*record, peer, /*ok_is_fine=*/true);
    }
    if (*type != RecordType::kLatencyPlan) {
      return Goodbye(fd, absl::InvalidArgumentError(absl::StrCat(
                             "rdma: client ", peer, " sent record type ",
                             static_cast<int>(*type), " out of sequence")));
    }
    absl::StatusOr<LatencyPlan> plan = DecodeLatencyPlan(*record);
    if (!plan.ok()) {
      return Goodbye(
          fd, Context(plan.status(), absl::StrCat("latency plan from ", peer)));
    }
    Report(progress, 0.5, "answering the latency ping-pong");
    absl::StatusOr<std::vector<double>> answered =
        (*endpoint)->WritePingPong(*plan, /*initiator=*/false, cancelled);
    if (!answered.ok()) return Goodbye(fd, answered.status());
  }
}

absl::StatusOr<ClientReport> RunRdmaClient(const ClientOptions& options,
                                           const EndpointFactory& factory,
                                           const CancelFn& cancelled,
                                           const ProgressFn& progress) {
  absl::StatusOr<std::unique_ptr<RdmaEndpoint>> endpoint =
      factory(options.endpoint);
  if (!endpoint.ok()) return endpoint.status();

  const std::string peer =
      pairwise::FormatHostPort(options.peer.host, options.peer.port);
  absl::StatusOr<pairwise::Socket> socket = pairwise::ConnectUntil(
      options.peer, pairwise::DeadlineIn(options.connect_timeout_s), cancelled);
  if (!socket.ok()) {
    return Context(socket.status(), absl::StrCat("connect to ", peer));
  }
  const int fd = socket->fd();
  (void)pairwise::SetNoDelay(fd);

  const QueuePairInfo local = (*endpoint)->local_info();
  if (absl::Status s =
          SendRecord(fd, EncodeQueuePairInfo(local),
                     pairwise::DeadlineIn(kReplyTimeoutS), cancelled);
      !s.ok()) {
    return Context(s, absl::StrCat("sending queue-pair info to ", peer));
  }
  absl::StatusOr<std::string> record =
      RecvExpected(fd, RecordType::kQueuePairInfo, "queue-pair info", peer,
                   pairwise::DeadlineIn(kReplyTimeoutS), cancelled);
  if (!record.ok()) return Goodbye(fd, record.status());
  absl::StatusOr<QueuePairInfo> remote = DecodeQueuePairInfo(*record);
  if (!remote.ok()) {
    return Goodbye(fd, Context(remote.status(),
                               absl::StrCat("queue-pair info from ", peer)));
  }
  const size_t needed = kLatencySlotBytes + options.endpoint.size;
  if (remote->target_bytes < needed) {
    return Goodbye(
        fd, absl::FailedPreconditionError(absl::StrCat(
                "rdma: peer ", peer, " offers a ", remote->target_bytes,
                "-byte buffer; size=", options.endpoint.size, " needs ", needed,
                " (pass the same size to both roles)")));
  }
  if (absl::Status s = (*endpoint)->Connect(*remote); !s.ok()) {
    return Goodbye(fd, s);
  }
  if (absl::StatusOr<std::string> ready =
          RecvExpected(fd, RecordType::kReady, "ready", peer,
                       pairwise::DeadlineIn(kReplyTimeoutS), cancelled);
      !ready.ok()) {
    return Goodbye(fd, ready.status());
  }
  ClientReport report;
  report.facts = (*endpoint)->facts();
  report.path_mtu = PathMtu(local, *remote);
  Report(progress, 0.1,
         absl::StrCat("queue pair connected to ", peer, ", path MTU ",
                      report.path_mtu));

  BandwidthPlan bandwidth;
  bandwidth.size = options.endpoint.size;
  bandwidth.warmup = options.warmup;
  bandwidth.iterations = options.iterations;
  bandwidth.window = options.endpoint.qp_depth;
  absl::StatusOr<BandwidthResult> written =
      (*endpoint)->WriteBandwidth(bandwidth, cancelled);
  if (!written.ok()) {
    return Goodbye(fd, written.status());
  }
  report.bandwidth = *written;
  report.gbps = GbpsFromBytes(written->bytes, written->seconds);
  Report(progress, 0.6, absl::StrCat("RDMA WRITE ", report.gbps, " Gbps"));

  if (options.latency_iterations > 0) {
    LatencyPlan plan;
    plan.bytes = kLatencyWriteBytes;
    plan.warmup = static_cast<uint32_t>(options.warmup);
    plan.iterations = static_cast<uint32_t>(options.latency_iterations);
    if (absl::Status s =
            SendRecord(fd, EncodeLatencyPlan(plan),
                       pairwise::DeadlineIn(kReplyTimeoutS), cancelled);
        !s.ok()) {
      return Context(s, absl::StrCat("sending the latency plan to ", peer));
    }
    absl::StatusOr<std::vector<double>> rtts =
        (*endpoint)->WritePingPong(plan, /*initiator=*/true, cancelled);
    if (!rtts.ok()) return Goodbye(fd, rtts.status());
    report.latency = SummarizeRoundTrips(*rtts, plan.bytes);
  }

  if (absl::Status s =
          SendRecord(fd, EncodeDone(absl::OkStatus()),
                     pairwise::DeadlineIn(kReplyTimeoutS), cancelled);
      !s.ok()) {
    return Context(s, absl::StrCat("saying goodbye to ", peer));
  }
  Report(progress, 1.0, "done");
  return report;
}

}  // namespace fleetbench::agent::rdma
