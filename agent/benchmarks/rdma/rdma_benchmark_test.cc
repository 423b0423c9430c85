#include "agent/benchmarks/rdma/rdma_benchmark.h"

#include <atomic>
#include <map>
#include <optional>
#include <string>

#include "agent/benchmarks/rdma/rdma_verbs.h"
#include "common/units.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

absl::Status Validate(const Params& params) {
  return RdmaBenchmark().ValidateParams(params);
}

void ExpectInvalid(const Params& params, const std::string& mention) {
  const absl::Status s = Validate(params);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find(mention), std::string::npos)
      << "'" << s.message() << "' should mention '" << mention << "'";
}

TEST(RdmaParamsTest, DefaultsForAServer) {
  absl::StatusOr<RdmaConfig> c = ParseRdmaParams({{"role", "server"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->role, RdmaRole::kServer);
  EXPECT_EQ(c->device, "");
  EXPECT_EQ(c->port, 1);
  EXPECT_EQ(c->gid_index, 0);
  EXPECT_EQ(c->size, 65536u);
  EXPECT_EQ(c->iterations, 5000);
  EXPECT_EQ(c->warmup, 100);
  EXPECT_EQ(c->qp_depth, 128);
  EXPECT_EQ(c->latency_iterations, 1000);
  EXPECT_EQ(c->bind, "0.0.0.0");
  EXPECT_DOUBLE_EQ(c->accept_timeout_s, 60);
}

TEST(RdmaParamsTest, AClientWithEverySetting) {
  absl::StatusOr<RdmaConfig> c = ParseRdmaParams({{"role", "client"},
                                                  {"peer", "[fd00::5]:18515"},
                                                  {"peer_node", "node-b"},
                                                  {"device", "mlx5_1"},
                                                  {"port", "2"},
                                                  {"gid_index", "3"},
                                                  {"size", "1073741824"},
                                                  {"iterations", "20"},
                                                  {"warmup", "0"},
                                                  {"qp_depth", "512"},
                                                  {"latency_iterations", "0"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->role, RdmaRole::kClient);
  EXPECT_EQ(c->peer_address.host, "fd00::5");
  EXPECT_EQ(c->peer_address.port, 18515);
  EXPECT_EQ(c->peer_node, "node-b");
  EXPECT_EQ(c->device, "mlx5_1");
  EXPECT_EQ(c->port, 2);
  EXPECT_EQ(c->gid_index, 3);
  EXPECT_EQ(c->size, size_t{1} << 30);
  EXPECT_EQ(c->iterations, 20);
  EXPECT_EQ(c->warmup, 0);
  EXPECT_EQ(c->qp_depth, 512);
  EXPECT_EQ(c->latency_iterations, 0);
}

TEST(RdmaParamsTest, EachRoleAcceptsTheOthersParameters) {
  EXPECT_TRUE(
      Validate({{"role", "server"}, {"peer_node", "b"}, {"size", "8"}}).ok());
  EXPECT_TRUE(Validate({{"role", "client"},
                        {"peer", "h:1"},
                        {"bind", "::"},
                        {"accept_timeout_s", "5"}})
                  .ok());
}

TEST(RdmaParamsTest, RoleAndPeerProblemsSayWhatToDo) {
  ExpectInvalid({}, "role=server on the listening node");
  ExpectInvalid({{"role", "listener"}}, "'listener' is not one of server");
  ExpectInvalid({{"role", "client"}}, "peer=<host>:<port>");
  ExpectInvalid({{"role", "client"}, {"peer", "nohost"}}, "has no port");
  ExpectInvalid({{"role", "client"}, {"peer", "h:0"}}, "1..65535");
}

TEST(RdmaParamsTest, RejectsUnknownKeysListingTheAllowedOnes) {
  ExpectInvalid({{"role", "server"}, {"msg_size", "8"}},
                "unknown parameter 'msg_size' (allowed: role, peer");
}

TEST(RdmaParamsTest, RejectsOutOfRangeAndNonNumbers) {
  const Params server = {{"role", "server"}};
  const auto with = [&server](const std::string& k, const std::string& v) {
    Params p = server;
    p[k] = v;
    return p;
  };
  ExpectInvalid(with("size", "0"), "size: 0 is outside 1..1073741824");
  ExpectInvalid(with("size", "1073741825"), "outside 1..1073741824");
  ExpectInvalid(with("size", "64k"), "size: '64k' is not an integer");
  ExpectInvalid(with("iterations", "0"), "iterations: 0 is outside");
  ExpectInvalid(with("warmup", "-1"), "warmup: -1 is outside");
  ExpectInvalid(with("qp_depth", "0"), "qp_depth: 0 is outside 1..16384");
  ExpectInvalid(with("qp_depth", "100000"), "qp_depth");
  ExpectInvalid(with("latency_iterations", "x"), "latency_iterations");
  ExpectInvalid(with("port", "0"), "port: 0 is outside 1..255");
  ExpectInvalid(with("gid_index", "-2"), "gid_index");
  ExpectInvalid(with("accept_timeout_s", "0"), "accept_timeout_s");
  ExpectInvalid(with("bind", "a b"), "not an address to listen on");
}

TEST(RdmaParamsTest, RejectsDeviceNamesThatCannotBeDevices) {
  ExpectInvalid({{"role", "server"}, {"device", ""}}, "ibv_devices");
  ExpectInvalid({{"role", "server"}, {"device", "mlx5_0;rm"}},
                "not an RDMA device name");
  EXPECT_TRUE(Validate({{"role", "server"}, {"device", "rxe_eth0"}}).ok());
}

TEST(RdmaBenchmarkTest, IsAPairwisePluginNamedRdma) {
  RdmaBenchmark benchmark;
  EXPECT_EQ(benchmark.name(), "rdma");
  EXPECT_TRUE(benchmark.pairwise());
}

// Runs everywhere: on a node without RDMA (this CI) it checks the skip
// path; on one with a device it checks the probe passes.
TEST(RdmaBenchmarkTest, ProbeSaysWhyThereIsNoDevice) {
  const absl::Status probe = RdmaBenchmark().Probe();
  if (probe.ok()) {
    absl::StatusOr<std::vector<std::string>> devices = rdma::ListRdmaDevices();
    ASSERT_TRUE(devices.ok()) << devices.status();
    EXPECT_FALSE(devices->empty());
    GTEST_SKIP() << "this node has an RDMA device: " << (*devices)[0];
  }
  EXPECT_TRUE(absl::IsFailedPrecondition(probe)) << probe;
  EXPECT_EQ(probe.message().rfind("no RDMA device (ibv_get_device_list", 0), 0u)
      << probe.message();
}

TEST(RdmaBenchmarkTest, WithoutADeviceTheServerFailsBeforePublishing) {
  if (RdmaBenchmark().Probe().ok()) {
    GTEST_SKIP() << "this node has an RDMA device";
  }
  std::atomic<bool> cancelled{false};
  bool published = false;
  RunContext context("/tmp", &cancelled, nullptr, [&published](int) {
    published = true;
    return absl::OkStatus();
  });
  absl::StatusOr<std::vector<v1::Sample>> run =
      RdmaBenchmark().Run({{"role", "server"}}, context);
  EXPECT_TRUE(absl::IsFailedPrecondition(run.status())) << run.status();
  EXPECT_FALSE(published);
}

TEST(RdmaBenchmarkTest, RunRejectsBadParametersFirst) {
  std::atomic<bool> cancelled{false};
  RunContext context("/tmp", &cancelled, nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(
      RdmaBenchmark().Run({{"role", "client"}}, context).status()));
}

rdma::ClientReport SampleReport(bool with_latency) {
  rdma::ClientReport report;
  report.facts = {"mlx5_0", 1, "Ethernet"};
  report.path_mtu = 4096;
  report.bandwidth = {5000ull * 65536, 0.025};
  report.gbps = GbpsFromBytes(report.bandwidth.bytes, 0.025);
  if (with_latency) {
    report.latency = rdma::SummarizeRoundTrips({4, 4, 6, 10}, 2);
  }
  return report;
}

TEST(RdmaSamplesTest, NamesUnitsAndParams) {
  absl::StatusOr<RdmaConfig> config = ParseRdmaParams(
      {{"role", "client"}, {"peer", "10.0.0.2:7000"}, {"peer_node", "b"}});
  ASSERT_TRUE(config.ok());
  const std::vector<v1::Sample> samples =
      RdmaSamples(*config, SampleReport(true));
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].metric(), "rdma.write.Gbps");
  EXPECT_EQ(samples[0].unit(), "Gbps");
  EXPECT_NEAR(samples[0].value(), 5000.0 * 65536 * 8 / 0.025 / 1e9, 1e-9);
  EXPECT_EQ(samples[1].metric(), "rdma.write_lat.p50_us");
  EXPECT_EQ(samples[1].unit(), "us");
  EXPECT_DOUBLE_EQ(samples[1].value(), 2.5);  // one-way: median rtt 5 / 2
  EXPECT_EQ(samples[2].metric(), "rdma.write_lat.p99_us");
  EXPECT_GT(samples[2].value(), samples[1].value());
  for (const v1::Sample& s : samples) {
    // Every metric is declared by the plugin, with the declared unit, and
    // its name's last dotted component ends with that unit.
    const std::optional<MetricInfo> info = DeclaredMetric(RdmaBenchmark(), s.metric());
    ASSERT_TRUE(info.has_value()) << s.metric();
    EXPECT_EQ(info->unit, s.unit());
    const std::string last = s.metric().substr(s.metric().rfind('.') + 1);
    EXPECT_EQ(last.substr(last.size() - s.unit().size()), s.unit());
    for (const char* key :
         {"size", "iterations", "qp_depth", "device", "peer_node", "method"}) {
      EXPECT_EQ(s.params().count(key), 1u) << s.metric() << " " << key;
    }
    EXPECT_EQ(s.params().at("device"), "mlx5_0");
    EXPECT_EQ(s.params().at("peer_node"), "b");
    EXPECT_EQ(s.params().at("peer"), "10.0.0.2");
    EXPECT_EQ(s.params().at("peer_port"), "7000");
  }
  EXPECT_EQ(samples[0].params().at("size"), "65536");
  EXPECT_EQ(samples[0].params().at("iterations"), "5000");
  EXPECT_EQ(samples[1].params().at("size"), "2");
  EXPECT_EQ(samples[1].params().at("iterations"), "4");
}

TEST(RdmaSamplesTest, NoLatencySamplesWhenNotMeasured) {
  absl::StatusOr<RdmaConfig> config =
      ParseRdmaParams({{"role", "client"}, {"peer", "h:1"}});
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(RdmaSamples(*config, SampleReport(false)).size(), 1u);
}

TEST(RdmaMathTest, OneWayLatency) {
  const rdma::LatencySummary s = rdma::SummarizeRoundTrips({2, 4, 6, 8, 10}, 2);
  EXPECT_EQ(s.iterations, 5);
  EXPECT_DOUBLE_EQ(s.p50_us, 3);
  EXPECT_DOUBLE_EQ(s.min_us, 1);
  EXPECT_DOUBLE_EQ(s.max_us, 5);
  EXPECT_DOUBLE_EQ(s.mean_us, 3);
  EXPECT_DOUBLE_EQ(s.p99_us, 4.96);  // type 7: 4 + 0.96 * (5 - 4)
  EXPECT_EQ(rdma::SummarizeRoundTrips({}, 2).iterations, 0);
}

}  // namespace
}  // namespace fleetbench::agent
