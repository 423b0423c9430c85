#include "agent/benchmarks/net/net_benchmark.h"

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "agent/benchmarks/pairwise/tcp_socket.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

using std::chrono::milliseconds;

double Seconds(pairwise::Clock::time_point since) {
  return std::chrono::duration<double>(pairwise::Clock::now() - since).count();
}

absl::Status Validate(const Params& params) {
  return TcpNetBenchmark().ValidateParams(params);
}

void ExpectInvalid(const Params& params, const std::string& mention) {
  const absl::Status s = Validate(params);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find(mention), std::string::npos)
      << "'" << s.message() << "' should mention '" << mention << "'";
}

TEST(NetParamsTest, DefaultsForAServer) {
  absl::StatusOr<NetConfig> c = ParseNetParams({{"role", "server"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->role, NetRole::kServer);
  EXPECT_EQ(c->streams, 4);
  EXPECT_DOUBLE_EQ(c->duration_s, 10);
  EXPECT_DOUBLE_EQ(c->warmup_s, 2);
  EXPECT_TRUE(c->reverse);
  EXPECT_EQ(c->latency_count, 2000);
  EXPECT_EQ(c->message_bytes, 64);
  EXPECT_EQ(c->bind, "0.0.0.0");
  EXPECT_DOUBLE_EQ(c->accept_timeout_s, 60);
  EXPECT_EQ(c->mode, NetMode::kAll);
  EXPECT_EQ(c->settings.write_bytes, 128 * 1024);  // iperf3's -l
  EXPECT_EQ(c->settings.socket_buffer_bytes, 0);   // autotuning
  EXPECT_EQ(c->settings.congestion, "");           // the node's default
  EXPECT_EQ(c->settings.rate_bps, 0);              // no cap
}

TEST(NetParamsTest, ModeWriteSizeBuffersCongestionAndRate) {
  absl::StatusOr<NetConfig> c = ParseNetParams({{"role", "server"},
                                                {"mode", "throughput"},
                                                {"write_bytes", "64K"},
                                                {"socket_buffer_bytes", "4M"},
                                                {"congestion", "cubic"},
                                                {"rate_Mbps", "2500"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->mode, NetMode::kThroughput);
  EXPECT_EQ(c->settings.write_bytes, 65536);
  EXPECT_EQ(c->settings.socket_buffer_bytes, 4 << 20);
  EXPECT_EQ(c->settings.congestion, "cubic");
  EXPECT_DOUBLE_EQ(c->settings.rate_bps, 2.5e9);
  c = ParseNetParams({{"role", "server"}, {"mode", "latency"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->mode, NetMode::kLatency);
}

// Each new parameter's out-of-range values are refused with the
// parameter's name (the controller refuses them at `run`, exit 2).
TEST(NetParamsTest, BadNewParametersNameTheParameter) {
  ExpectInvalid({{"role", "server"}, {"mode", "ping"}}, "mode: 'ping' is not");
  ExpectInvalid({{"role", "server"}, {"mode", "latency"}, {"latency_count", "0"}},
                "mode: latency needs latency_count");
  ExpectInvalid({{"role", "server"}, {"write_bytes", "0"}}, "write_bytes");
  ExpectInvalid({{"role", "server"}, {"write_bytes", "17M"}}, "write_bytes");
  ExpectInvalid({{"role", "server"}, {"write_bytes", "lots"}}, "write_bytes");
  ExpectInvalid({{"role", "server"}, {"socket_buffer_bytes", "100"}},
                "socket_buffer_bytes: 100 is below 4096");
  ExpectInvalid({{"role", "server"}, {"socket_buffer_bytes", "2G"}},
                "socket_buffer_bytes");
  ExpectInvalid({{"role", "server"}, {"socket_buffer_bytes", "-1"}},
                "socket_buffer_bytes");
  ExpectInvalid({{"role", "server"}, {"congestion", ""}}, "congestion");
  ExpectInvalid({{"role", "server"}, {"congestion", "BBR"}}, "congestion");
  ExpectInvalid({{"role", "server"}, {"congestion", "a_name_far_too_long"}},
                "congestion");
  ExpectInvalid({{"role", "server"}, {"rate_Mbps", "-1"}}, "rate_Mbps");
  ExpectInvalid({{"role", "server"}, {"rate_Mbps", "2000000"}}, "rate_Mbps");
  ExpectInvalid({{"role", "server"}, {"rate_Mbps", "fast"}}, "rate_Mbps");
}

TEST(NetParamsTest, AClientWithEverySetting) {
  absl::StatusOr<NetConfig> c = ParseNetParams({{"role", "client"},
                                                {"peer", "10.77.0.1:5201"},
                                                {"peer_node", "node-b"},
                                                {"streams", "8"},
                                                {"duration_s", "0.5"},
                                                {"warmup_s", "0"},
                                                {"reverse", "false"},
                                                {"latency_count", "0"},
                                                {"message_bytes", "1024"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->role, NetRole::kClient);
  EXPECT_EQ(c->peer_address.host, "10.77.0.1");
  EXPECT_EQ(c->peer_address.port, 5201);
  EXPECT_EQ(c->peer_node, "node-b");
  EXPECT_EQ(c->streams, 8);
  EXPECT_DOUBLE_EQ(c->duration_s, 0.5);
  EXPECT_DOUBLE_EQ(c->warmup_s, 0);
  EXPECT_FALSE(c->reverse);
  EXPECT_EQ(c->latency_count, 0);
  EXPECT_EQ(c->message_bytes, 1024);
}

TEST(NetParamsTest, EachRoleAcceptsTheOthersParameters) {
  // The controller may pass the user's parameters to both nodes.
  EXPECT_TRUE(
      Validate({{"role", "server"}, {"streams", "8"}, {"peer_node", "b"}})
          .ok());
  EXPECT_TRUE(Validate({{"role", "client"},
                        {"peer", "h:1"},
                        {"bind", "0.0.0.0"},
                        {"accept_timeout_s", "5"}})
                  .ok());
}

TEST(NetParamsTest, BadValuesNameTheParameter) {
  ExpectInvalid({}, "role=server");
  ExpectInvalid({{"role", "both"}}, "role");
  ExpectInvalid({{"role", "client"}}, "peer=<host>:<port>");
  ExpectInvalid({{"role", "client"}, {"peer", "10.0.0.1"}}, "peer");
  ExpectInvalid({{"role", "client"}, {"peer", "10.0.0.1:0"}}, "peer");
  ExpectInvalid({{"role", "server"}, {"streams", "0"}}, "streams");
  ExpectInvalid({{"role", "server"}, {"streams", "65"}}, "1..64");
  ExpectInvalid({{"role", "server"}, {"streams", "four"}}, "streams");
  ExpectInvalid({{"role", "server"}, {"duration_s", "0.05"}}, "duration_s");
  ExpectInvalid({{"role", "server"}, {"duration_s", "601"}}, "duration_s");
  ExpectInvalid({{"role", "server"}, {"duration_s", "nan"}}, "duration_s");
  ExpectInvalid({{"role", "server"}, {"warmup_s", "-1"}}, "warmup_s");
  ExpectInvalid({{"role", "server"}, {"warmup_s", "61"}}, "warmup_s");
  ExpectInvalid({{"role", "server"}, {"reverse", "yes"}}, "reverse");
  ExpectInvalid({{"role", "server"}, {"latency_count", "-1"}}, "latency_count");
  ExpectInvalid({{"role", "server"}, {"latency_count", "1000001"}},
                "latency_count");
  ExpectInvalid({{"role", "server"}, {"message_bytes", "0"}}, "message_bytes");
  ExpectInvalid({{"role", "server"}, {"bind", ""}}, "bind");
  ExpectInvalid({{"role", "server"}, {"accept_timeout_s", "0"}},
                "accept_timeout_s");
  ExpectInvalid({{"role", "server"}, {"stream", "4"}}, "unknown parameter");
}

TEST(NetSamplesTest, MetricsUnitsAndParams) {
  NetConfig config;
  config.peer = "10.0.0.2:4000";
  config.peer_address = {"10.0.0.2", 4000};
  config.peer_node = "b";
  config.streams = 4;
  config.duration_s = 10;
  config.warmup_s = 2;
  net::TcpClientReport report;
  net::ThroughputResult t;
  t.streams = 4;
  t.bytes = 1'250'000'000;
  t.window_s = 1;
  t.gbps = 10;
  t.retransmits = 7;
  t.stream_bytes = {250'000'000, 500'000'000, 250'000'000, 250'000'000};
  report.forward = t;
  report.reverse = t;
  report.latency = net::SummarizeRoundTrips({10, 20, 30}, 64);

  const std::vector<v1::Sample> samples = NetSamples(config, report);
  std::map<std::string, const v1::Sample*> by_metric;
  for (const v1::Sample& s : samples) by_metric[s.metric()] = &s;
  ASSERT_EQ(samples.size(), 5u);
  ASSERT_EQ(by_metric.size(), 5u);
  EXPECT_EQ(by_metric["net.tcp.Gbps"]->unit(), "Gbps");
  EXPECT_DOUBLE_EQ(by_metric["net.tcp.Gbps"]->value(), 10);
  EXPECT_EQ(by_metric["net.tcp.reverse.Gbps"]->unit(), "Gbps");
  EXPECT_EQ(by_metric["net.tcp.retransmits.count"]->unit(), "count");
  EXPECT_DOUBLE_EQ(by_metric["net.tcp.retransmits.count"]->value(), 7);
  EXPECT_EQ(by_metric["net.tcp.rtt_p50_us"]->unit(), "us");
  EXPECT_DOUBLE_EQ(by_metric["net.tcp.rtt_p50_us"]->value(), 20);
  EXPECT_DOUBLE_EQ(by_metric["net.tcp.rtt_p99_us"]->value(), 29.8);
  // Every metric is declared by the plugin, with the declared unit.
  for (const v1::Sample& s : samples) {
    const std::optional<MetricInfo> info = DeclaredMetric(TcpNetBenchmark(), s.metric());
    ASSERT_TRUE(info.has_value()) << s.metric();
    EXPECT_EQ(info->unit, s.unit());
  }

  const auto& fwd = by_metric["net.tcp.Gbps"]->params();
  EXPECT_EQ(fwd.at("streams"), "4");
  EXPECT_EQ(fwd.at("duration_s"), "10");
  EXPECT_EQ(fwd.at("warmup_s"), "2");
  EXPECT_EQ(fwd.at("peer"), "10.0.0.2");
  EXPECT_EQ(fwd.at("peer_port"), "4000");
  EXPECT_EQ(fwd.at("peer_node"), "b");
  EXPECT_EQ(fwd.at("direction"), "forward");
  EXPECT_FALSE(fwd.at("method").empty());
  EXPECT_EQ(fwd.at("stream_min_Gbps"), "2");
  EXPECT_EQ(fwd.at("stream_max_Gbps"), "4");
  EXPECT_EQ(by_metric["net.tcp.reverse.Gbps"]->params().at("direction"),
            "reverse");
  EXPECT_EQ(by_metric["net.tcp.rtt_p99_us"]->params().at("direction"),
            "round_trip");
  EXPECT_EQ(by_metric["net.tcp.rtt_p99_us"]->params().at("round_trips"), "3");
}

TEST(NetSamplesTest, OnlyWhatWasMeasured) {
  NetConfig config;
  net::TcpClientReport report;
  net::ThroughputResult t;
  t.retransmits = -1;  // TCP_INFO unavailable
  report.forward = t;
  const std::vector<v1::Sample> samples = NetSamples(config, report);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].metric(), "net.tcp.Gbps");
}

// Runs a server-role plugin in a thread; its PublishPort hands the port
// over through a promise, as the controller hands it to the client node.
class ServerPlugin {
 public:
  explicit ServerPlugin(Params params) {
    params["role"] = "server";
    params["bind"] = "127.0.0.1";
    result_ = std::async(std::launch::async, [this, params] {
      RunContext context("/tmp", &cancelled_, nullptr, [this](int port) {
        published_.set_value(port);
        return absl::OkStatus();
      });
      return TcpNetBenchmark().Run(params, context);
    });
  }
  ~ServerPlugin() {
    cancelled_.store(true);
    if (result_.valid()) result_.wait();
  }
  int WaitForPort() {
    auto f = published_.get_future();
    EXPECT_EQ(f.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    return f.get();
  }
  void Cancel() { cancelled_.store(true); }
  absl::StatusOr<std::vector<v1::Sample>> Wait(double max_s) {
    EXPECT_EQ(result_.wait_for(std::chrono::duration<double>(max_s)),
              std::future_status::ready);
    return result_.get();
  }

 private:
  std::atomic<bool> cancelled_{false};
  std::promise<int> published_;
  std::future<absl::StatusOr<std::vector<v1::Sample>>> result_;
};

absl::StatusOr<std::vector<v1::Sample>> RunClient(
    Params params, const std::atomic<bool>* cancelled = nullptr) {
  params["role"] = "client";
  std::atomic<bool> never{false};
  RunContext context("/tmp", cancelled != nullptr ? cancelled : &never,
                     nullptr);
  return TcpNetBenchmark().Run(params, context);
}

TEST(TcpNetBenchmarkTest, NameAndProbe) {
  TcpNetBenchmark b;
  EXPECT_EQ(b.name(), "net");
  EXPECT_TRUE(b.Probe().ok());
}

TEST(TcpNetBenchmarkTest, TwoPluginsOnLoopback) {
  ServerPlugin server(Params{{"streams", "2"}});
  const int port = server.WaitForPort();
  ASSERT_GT(port, 0);
  absl::StatusOr<std::vector<v1::Sample>> samples =
      RunClient({{"peer", absl::StrCat("127.0.0.1:", port)},
                 {"peer_node", "server-node"},
                 {"streams", "2"},
                 {"duration_s", "0.5"},
                 {"warmup_s", "0.1"},
                 {"latency_count", "300"}});
  ASSERT_TRUE(samples.ok()) << samples.status();
  std::map<std::string, const v1::Sample*> by_metric;
  for (const v1::Sample& s : *samples) by_metric[s.metric()] = &s;
  ASSERT_EQ(by_metric.size(), 5u);
  EXPECT_GT(by_metric["net.tcp.Gbps"]->value(), 0);
  EXPECT_GT(by_metric["net.tcp.reverse.Gbps"]->value(), 0);
  EXPECT_GE(by_metric["net.tcp.retransmits.count"]->value(), 0);
  const double p50 = by_metric["net.tcp.rtt_p50_us"]->value();
  const double p99 = by_metric["net.tcp.rtt_p99_us"]->value();
  EXPECT_GT(p50, 0);
  EXPECT_LE(p50, p99);
  EXPECT_EQ(by_metric["net.tcp.Gbps"]->params().at("peer_node"), "server-node");
  EXPECT_EQ(by_metric["net.tcp.Gbps"]->params().at("streams"), "2");
  absl::StatusOr<std::vector<v1::Sample>> served = server.Wait(5);
  ASSERT_TRUE(served.ok()) << served.status();
  EXPECT_TRUE(served->empty());
}

TEST(TcpNetBenchmarkTest, LatencyModeRunsOnlyThePingPong) {
  ServerPlugin server(Params{});
  const int port = server.WaitForPort();
  const auto start = pairwise::Clock::now();
  absl::StatusOr<std::vector<v1::Sample>> samples =
      RunClient({{"peer", absl::StrCat("127.0.0.1:", port)},
                 {"mode", "latency"},
                 {"latency_count", "500"}});
  ASSERT_TRUE(samples.ok()) << samples.status();
  // The default duration_s and warmup_s (2 x 12 s of throughput) are not
  // spent.
  EXPECT_LT(Seconds(start), 5);
  std::map<std::string, const v1::Sample*> by_metric;
  for (const v1::Sample& s : *samples) by_metric[s.metric()] = &s;
  ASSERT_EQ(by_metric.size(), 2u);
  ASSERT_TRUE(by_metric.count("net.tcp.rtt_p50_us"));
  ASSERT_TRUE(by_metric.count("net.tcp.rtt_p99_us"));
  EXPECT_EQ(by_metric["net.tcp.rtt_p50_us"]->params().at("round_trips"), "500");
  ASSERT_TRUE(server.Wait(5).ok());
}

TEST(TcpNetBenchmarkTest, ThroughputModeSkipsThePingPongAndReportsSettings) {
  ServerPlugin server(Params{});
  const int port = server.WaitForPort();
  absl::StatusOr<std::vector<v1::Sample>> samples =
      RunClient({{"peer", absl::StrCat("127.0.0.1:", port)},
                 {"mode", "throughput"},
                 {"streams", "1"},
                 {"duration_s", "0.3"},
                 {"warmup_s", "0.1"},
                 {"write_bytes", "32K"},
                 {"socket_buffer_bytes", "256K"},
                 {"congestion", "reno"},
                 {"rate_Mbps", "100"}});
  ASSERT_TRUE(samples.ok()) << samples.status();
  std::map<std::string, const v1::Sample*> by_metric;
  for (const v1::Sample& s : *samples) by_metric[s.metric()] = &s;
  ASSERT_EQ(by_metric.size(), 3u);  // forward, retransmits, reverse
  // The cap, plus the 0.1 s a sender that fell behind may catch up.
  EXPECT_LE(by_metric["net.tcp.Gbps"]->value(), 0.1 * (0.4 / 0.3) * 1.02);
  EXPECT_GE(by_metric["net.tcp.Gbps"]->value(), 0.07);
  const auto& p = by_metric["net.tcp.reverse.Gbps"]->params();
  EXPECT_EQ(p.at("write_bytes"), "32768");
  EXPECT_EQ(p.at("socket_buffer_bytes"), "262144");
  EXPECT_EQ(p.at("congestion"), "reno");
  EXPECT_EQ(p.at("rate_Mbps"), "100");
  EXPECT_TRUE(p.count("spurious_retransmits"));
  EXPECT_TRUE(p.count("client_sndbuf_bytes"));
  ASSERT_TRUE(server.Wait(5).ok());
}

TEST(TcpNetBenchmarkTest, CancellingAWaitingServerIsPrompt) {
  ServerPlugin server(Params{{"accept_timeout_s", "60"}});
  server.WaitForPort();
  std::this_thread::sleep_for(milliseconds(100));
  const auto start = pairwise::Clock::now();
  server.Cancel();
  absl::StatusOr<std::vector<v1::Sample>> served = server.Wait(2);
  EXPECT_TRUE(absl::IsCancelled(served.status())) << served.status();
  EXPECT_LT(Seconds(start), 0.5);
}

TEST(TcpNetBenchmarkTest, ServerWithoutAWayToPublishFails) {
  RunContext context("/tmp", nullptr, nullptr);  // no PublishPort
  absl::StatusOr<std::vector<v1::Sample>> served = TcpNetBenchmark().Run(
      {{"role", "server"}, {"bind", "127.0.0.1"}}, context);
  EXPECT_TRUE(absl::IsFailedPrecondition(served.status())) << served.status();
}

TEST(TcpNetBenchmarkTest, ClientAtAClosedPortIsUnavailable) {
  int port = 0;
  {
    auto s = pairwise::Listen("127.0.0.1", 0, &port);
    ASSERT_TRUE(s.ok());
  }
  const std::string peer = absl::StrCat("127.0.0.1:", port);
  absl::StatusOr<std::vector<v1::Sample>> samples = RunClient({{"peer", peer}});
  EXPECT_TRUE(absl::IsUnavailable(samples.status())) << samples.status();
  EXPECT_NE(samples.status().message().find(peer), std::string::npos)
      << samples.status();
}

TEST(TcpNetBenchmarkTest, RunRejectsBadParamsBeforeConnecting) {
  absl::StatusOr<std::vector<v1::Sample>> samples =
      RunClient({{"peer", "127.0.0.1:1"}, {"streams", "0"}});
  EXPECT_TRUE(absl::IsInvalidArgument(samples.status())) << samples.status();
}

}  // namespace
}  // namespace fleetbench::agent
