// The whole "rdma" exchange over real loopback TCP, with a fake endpoint in
// place of the verbs one (this machine has no RDMA device).
#include "agent/benchmarks/rdma/rdma_session.h"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/pairwise/tcp_socket.h"
#include "agent/benchmarks/rdma/rdma_benchmark.h"
#include "gtest/gtest.h"

namespace fleetbench::agent::rdma {
namespace {

using std::chrono::milliseconds;

// What a fake endpoint saw; shared so the test reads it after the endpoint
// is gone.
struct FakeLog {
  std::mutex mu;
  std::vector<QueuePairInfo> connected_to;
  std::vector<LatencyPlan> plans;
  std::vector<bool> initiator;
  std::vector<BandwidthPlan> bandwidth;
  bool destroyed = false;
};

struct FakeSetup {
  uint32_t qpn = 100;
  uint64_t target_bytes = kLatencySlotBytes + 65536;
  uint16_t mtu = 4096;
  absl::Status open_error;
  absl::Status connect_error;
  BandwidthResult bandwidth{1'000'000'000, 0.5};
  std::vector<double> rtts{3.0, 4.0, 5.0};
  std::shared_ptr<FakeLog> log = std::make_shared<FakeLog>();
};

class FakeEndpoint final : public RdmaEndpoint {
 public:
  explicit FakeEndpoint(const FakeSetup& setup) : setup_(setup) {}
  ~FakeEndpoint() override {
    std::lock_guard<std::mutex> lock(setup_.log->mu);
    setup_.log->destroyed = true;
  }

  EndpointFacts facts() const override { return {"fake0", 1, "Ethernet"}; }
  QueuePairInfo local_info() const override {
    QueuePairInfo info;
    info.qpn = setup_.qpn;
    info.psn = 7;
    info.rkey = 0x1234;
    info.mtu = setup_.mtu;
    info.addr = 0x10000;
    info.target_bytes = setup_.target_bytes;
    info.gid[15] = 1;
    return info;
  }
  absl::Status Connect(const QueuePairInfo& remote) override {
    std::lock_guard<std::mutex> lock(setup_.log->mu);
    setup_.log->connected_to.push_back(remote);
    return setup_.connect_error;
  }
  absl::StatusOr<BandwidthResult> WriteBandwidth(
      const BandwidthPlan& plan, const CancelFn& cancelled) override {
    if (cancelled && cancelled()) return absl::CancelledError("cancelled");
    std::lock_guard<std::mutex> lock(setup_.log->mu);
    setup_.log->bandwidth.push_back(plan);
    return setup_.bandwidth;
  }
  absl::StatusOr<std::vector<double>> WritePingPong(const LatencyPlan& plan,
                                                    bool initiator,
                                                    const CancelFn&) override {
    std::lock_guard<std::mutex> lock(setup_.log->mu);
    setup_.log->plans.push_back(plan);
    setup_.log->initiator.push_back(initiator);
    if (!initiator) return std::vector<double>();
    return setup_.rtts;
  }

 private:
  FakeSetup setup_;
};

EndpointFactory FakeFactory(const FakeSetup& setup) {
  return [setup](const EndpointOptions&)
             -> absl::StatusOr<std::unique_ptr<RdmaEndpoint>> {
    if (!setup.open_error.ok()) return setup.open_error;
    return std::make_unique<FakeEndpoint>(setup);
  };
}

// One role of the plugin on its own thread, with a published port.
class ServerTask {
 public:
  ServerTask(const FakeSetup& setup, Params params) {
    auto published = std::make_shared<std::promise<int>>();
    port_ = published->get_future();
    result_ = std::async(std::launch::async, [this, setup, params, published] {
      bool announced = false;
      RunContext context("/tmp", &cancelled_, nullptr,
                         [published, &announced](int port) {
                           announced = true;
                           published->set_value(port);
                           return absl::OkStatus();
                         });
      auto result = RdmaBenchmark(FakeFactory(setup)).Run(params, context);
      if (!announced) published->set_value(0);
      return result;
    });
  }
  // 0 when the server ended without publishing.
  int port() {
    if (port_.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      return 0;
    }
    return port_.get();
  }
  void Cancel() { cancelled_ = true; }
  absl::StatusOr<std::vector<v1::Sample>> Result() { return result_.get(); }
  bool DoneWithin(milliseconds limit) {
    return result_.wait_for(limit) == std::future_status::ready;
  }

 private:
  std::atomic<bool> cancelled_{false};
  std::future<int> port_;
  std::future<absl::StatusOr<std::vector<v1::Sample>>> result_;
};

absl::StatusOr<std::vector<v1::Sample>> RunClient(const FakeSetup& setup,
                                                  Params params) {
  std::atomic<bool> cancelled{false};
  RunContext context("/tmp", &cancelled, nullptr);
  return RdmaBenchmark(FakeFactory(setup)).Run(params, context);
}

Params ClientParams(int port) {
  return {{"role", "client"},
          {"peer", absl::StrCat("127.0.0.1:", port)},
          {"peer_node", "node-a"},
          {"warmup", "7"},
          {"latency_iterations", "3"}};
}

TEST(RdmaSessionTest, AFullPairOverLoopbackWithFakeEndpoints) {
  FakeSetup server_setup;
  server_setup.qpn = 0x200;
  server_setup.mtu = 1024;
  FakeSetup client_setup;
  client_setup.qpn = 0x300;
  ServerTask server(server_setup, {{"role", "server"}, {"bind", "127.0.0.1"}});
  const int port = server.port();
  ASSERT_GT(port, 0);

  absl::StatusOr<std::vector<v1::Sample>> samples =
      RunClient(client_setup, ClientParams(port));
  ASSERT_TRUE(samples.ok()) << samples.status();
  absl::StatusOr<std::vector<v1::Sample>> served = server.Result();
  ASSERT_TRUE(served.ok()) << served.status();
  EXPECT_TRUE(served->empty());

  ASSERT_EQ(samples->size(), 3u);
  EXPECT_EQ((*samples)[0].metric(), "rdma.write.Gbps");
  EXPECT_DOUBLE_EQ((*samples)[0].value(), 16.0);  // 10^9 bytes in 0.5 s
  EXPECT_EQ((*samples)[0].params().at("path_mtu"), "1024");
  EXPECT_EQ((*samples)[0].params().at("device"), "fake0");
  EXPECT_EQ((*samples)[0].params().at("peer_node"), "node-a");
  EXPECT_DOUBLE_EQ((*samples)[1].value(), 2.0);  // median rtt 4 us / 2

  // Each side connected its QP to the other's record.
  ASSERT_EQ(server_setup.log->connected_to.size(), 1u);
  EXPECT_EQ(server_setup.log->connected_to[0].qpn, 0x300u);
  ASSERT_EQ(client_setup.log->connected_to.size(), 1u);
  EXPECT_EQ(client_setup.log->connected_to[0].qpn, 0x200u);
  // The client ran the bandwidth test with its parameters.
  ASSERT_EQ(client_setup.log->bandwidth.size(), 1u);
  EXPECT_EQ(client_setup.log->bandwidth[0].size, 65536u);
  EXPECT_EQ(client_setup.log->bandwidth[0].iterations, 5000);
  EXPECT_EQ(client_setup.log->bandwidth[0].warmup, 7);
  EXPECT_EQ(client_setup.log->bandwidth[0].window, 128);
  EXPECT_TRUE(server_setup.log->bandwidth.empty());
  // Both ran the ping-pong with the client's plan, one side each.
  const LatencyPlan plan{kLatencyWriteBytes, 7, 3};
  ASSERT_EQ(server_setup.log->plans.size(), 1u);
  EXPECT_EQ(server_setup.log->plans[0], plan);
  EXPECT_FALSE(server_setup.log->initiator[0]);
  ASSERT_EQ(client_setup.log->plans.size(), 1u);
  EXPECT_EQ(client_setup.log->plans[0], plan);
  EXPECT_TRUE(client_setup.log->initiator[0]);
  // Cleanup on both sides.
  EXPECT_TRUE(server_setup.log->destroyed);
  EXPECT_TRUE(client_setup.log->destroyed);
}

TEST(RdmaSessionTest, NoPingPongWhenLatencyIsOff) {
  FakeSetup server_setup;
  FakeSetup client_setup;
  ServerTask server(server_setup, {{"role", "server"}, {"bind", "127.0.0.1"}});
  const int port = server.port();
  ASSERT_GT(port, 0);
  Params params = ClientParams(port);
  params["latency_iterations"] = "0";
  absl::StatusOr<std::vector<v1::Sample>> samples =
      RunClient(client_setup, params);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->size(), 1u);
  EXPECT_TRUE(server.Result().ok());
  EXPECT_TRUE(server_setup.log->plans.empty());
}

TEST(RdmaSessionTest, AServerWaitingForItsClientIsCancellable) {
  FakeSetup setup;
  ServerTask server(setup, {{"role", "server"}, {"bind", "127.0.0.1"}});
  ASSERT_GT(server.port(), 0);
  const auto start = std::chrono::steady_clock::now();
  server.Cancel();
  ASSERT_TRUE(server.DoneWithin(milliseconds(2000)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1000));
  const absl::Status s = server.Result().status();
  EXPECT_TRUE(absl::IsCancelled(s)) << s;
  EXPECT_TRUE(setup.log->destroyed);
}

TEST(RdmaSessionTest, AServerWithoutAClientTimesOut) {
  FakeSetup setup;
  ServerTask server(
      setup,
      {{"role", "server"}, {"bind", "127.0.0.1"}, {"accept_timeout_s", "1"}});
  ASSERT_GT(server.port(), 0);
  const absl::Status s = server.Result().status();
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_NE(s.message().find("no client connected"), std::string::npos) << s;
}

TEST(RdmaSessionTest, AServerThatCannotOpenItsDeviceNeverPublishes) {
  FakeSetup setup;
  setup.open_error = absl::FailedPreconditionError("no RDMA device (test)");
  ServerTask server(setup, {{"role", "server"}, {"bind", "127.0.0.1"}});
  EXPECT_EQ(server.port(), 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(server.Result().status()));
}

// A TCP peer that is not a fleetbench rdma server: it reads the client's
// record, answers with `reply` and reports what the client sent after it.
class RawPeer {
 public:
  explicit RawPeer(std::string reply) {
    absl::StatusOr<pairwise::Socket> listener =
        pairwise::Listen("127.0.0.1", 0, &port_);
    EXPECT_TRUE(listener.ok()) << listener.status();
    listener_ = std::move(*listener);
    thread_ = std::thread([this, reply = std::move(reply)] {
      const pairwise::Deadline deadline = pairwise::DeadlineIn(10);
      absl::StatusOr<pairwise::Socket> s =
          pairwise::AcceptUntil(listener_, deadline, nullptr, nullptr);
      if (!s.ok()) return;
      std::string first(kRecordHeaderBytes + kQueuePairInfoPayloadBytes, '\0');
      if (!pairwise::RecvExact(s->fd(), first.data(), first.size(), deadline,
                               nullptr)
               .ok()) {
        return;
      }
      client_record_ = first;
      (void)pairwise::SendAll(s->fd(), reply.data(), reply.size(), deadline,
                              nullptr);
      if (reply.size() < kRecordHeaderBytes) return;  // then close
      char byte = 0;
      while (pairwise::RecvExact(s->fd(), &byte, 1, deadline, nullptr).ok()) {
        after_.push_back(byte);
      }
    });
  }
  ~RawPeer() {
    if (thread_.joinable()) thread_.join();
  }
  int port() const { return port_; }
  // Valid once Join() returned.
  void Join() { thread_.join(); }
  const std::string& client_record() const { return client_record_; }
  const std::string& after() const { return after_; }

 private:
  int port_ = 0;
  pairwise::Socket listener_;
  std::thread thread_;
  std::string client_record_;
  std::string after_;
};

TEST(RdmaSessionTest, AClientRejectsAGarbageRecordAndSaysWhy) {
  RawPeer peer(std::string(60, '\x5A'));
  FakeSetup setup;
  const absl::Status s = RunClient(setup, ClientParams(peer.port())).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("magic"), std::string::npos) << s;
  EXPECT_NE(s.message().find("127.0.0.1:"), std::string::npos) << s;
  peer.Join();
  // The client sent a valid record first and a goodbye with its error after.
  EXPECT_TRUE(DecodeQueuePairInfo(peer.client_record()).ok());
  absl::Status told;
  ASSERT_TRUE(DecodeDone(peer.after(), &told).ok()) << peer.after().size();
  EXPECT_TRUE(absl::IsInvalidArgument(told)) << told;
  EXPECT_TRUE(setup.log->connected_to.empty());
  EXPECT_TRUE(setup.log->destroyed);
}

TEST(RdmaSessionTest, AClientRejectsAnotherExchangeVersion) {
  QueuePairInfo info;
  info.qpn = 5;
  info.mtu = 1024;
  info.addr = 1;
  info.target_bytes = 1 << 20;
  std::string record = EncodeQueuePairInfo(info);
  record[4] = 9;
  RawPeer peer(record);
  const absl::Status s =
      RunClient(FakeSetup(), ClientParams(peer.port())).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("version 9"), std::string::npos) << s;
}

TEST(RdmaSessionTest, AClientWhosePeerHangsUpMidRecordIsUnavailable) {
  RawPeer peer("FBRX\x01");
  const absl::Status s =
      RunClient(FakeSetup(), ClientParams(peer.port())).status();
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
}

TEST(RdmaSessionTest, AServerFailureReachesTheClient) {
  FakeSetup server_setup;
  server_setup.connect_error =
      absl::InternalError("ibv_modify_qp(RTR) failed: test");
  ServerTask server(server_setup, {{"role", "server"}, {"bind", "127.0.0.1"}});
  const int port = server.port();
  ASSERT_GT(port, 0);
  const absl::Status s = RunClient(FakeSetup(), ClientParams(port)).status();
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  EXPECT_NE(s.message().find("ibv_modify_qp(RTR) failed: test"),
            std::string::npos)
      << s;
  EXPECT_TRUE(absl::IsInternal(server.Result().status()));
}

TEST(RdmaSessionTest, AClientFailureReachesTheServer) {
  FakeSetup client_setup;
  client_setup.connect_error = absl::UnavailableError("path is down");
  ServerTask server(FakeSetup(), {{"role", "server"}, {"bind", "127.0.0.1"}});
  const int port = server.port();
  ASSERT_GT(port, 0);
  EXPECT_TRUE(absl::IsUnavailable(
      RunClient(client_setup, ClientParams(port)).status()));
  const absl::Status s = server.Result().status();
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  EXPECT_NE(s.message().find("UNAVAILABLE: path is down"), std::string::npos)
      << s;
}

TEST(RdmaSessionTest, AServerBufferTooSmallForSizeIsFailedPrecondition) {
  FakeSetup server_setup;
  server_setup.target_bytes = kLatencySlotBytes + 4096;
  ServerTask server(server_setup, {{"role", "server"}, {"bind", "127.0.0.1"}});
  const int port = server.port();
  ASSERT_GT(port, 0);
  const absl::Status s = RunClient(FakeSetup(), ClientParams(port)).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_NE(s.message().find("pass the same size to both roles"),
            std::string::npos)
      << s;
  EXPECT_TRUE(absl::IsAborted(server.Result().status()));
}

TEST(RdmaSessionTest, AServerRefusesAClientOfAnotherVersionAndSaysWhy) {
  ServerTask server(FakeSetup(), {{"role", "server"}, {"bind", "127.0.0.1"}});
  const int port = server.port();
  ASSERT_GT(port, 0);
  absl::StatusOr<pairwise::Socket> client = pairwise::ConnectUntil(
      {"127.0.0.1", port}, pairwise::DeadlineIn(5), nullptr);
  ASSERT_TRUE(client.ok()) << client.status();
  QueuePairInfo info;
  info.qpn = 5;
  info.mtu = 1024;
  info.addr = 1;
  info.target_bytes = 1 << 20;
  std::string record = EncodeQueuePairInfo(info);
  record[4] = 2;
  ASSERT_TRUE(pairwise::SendAll(client->fd(), record.data(), record.size(),
                                pairwise::DeadlineIn(5), nullptr)
                  .ok());
  const absl::Status s = server.Result().status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("exchange version 2"), std::string::npos) << s;
  // The client hears why.
  std::string done(kRecordHeaderBytes, '\0');
  ASSERT_TRUE(pairwise::RecvExact(client->fd(), done.data(), done.size(),
                                  pairwise::DeadlineIn(5), nullptr)
                  .ok());
  absl::StatusOr<RecordHeader> header = DecodeRecordHeader(done);
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->type, RecordType::kDone);
}

TEST(RdmaSessionTest, AServerDropsAStrayConnectionAndServesTheClient) {
  FakeSetup server_setup;
  ServerTask server(server_setup, {{"role", "server"}, {"bind", "127.0.0.1"}});
  const int port = server.port();
  ASSERT_GT(port, 0);
  {
    absl::StatusOr<pairwise::Socket> stray = pairwise::ConnectUntil(
        {"127.0.0.1", port}, pairwise::DeadlineIn(5), nullptr);
    ASSERT_TRUE(stray.ok()) << stray.status();
    const std::string junk = "GET / HTTP/1.0\r\n\r\n";
    ASSERT_TRUE(pairwise::SendAll(stray->fd(), junk.data(), junk.size(),
                                  pairwise::DeadlineIn(5), nullptr)
                    .ok());
  }
  absl::StatusOr<std::vector<v1::Sample>> samples =
      RunClient(FakeSetup(), ClientParams(port));
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_TRUE(server.Result().ok());
  EXPECT_EQ(server_setup.log->connected_to.size(), 1u);
}

}  // namespace
}  // namespace fleetbench::agent::rdma
