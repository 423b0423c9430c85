#include "agent/benchmarks/rdma/rdma_benchmark.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "agent/benchmarks/pairwise/pair_params.h"
#include "agent/benchmarks/param_reader.h"
#include "agent/benchmarks/rdma/rdma_verbs.h"
#include "common/units.h"

namespace fleetbench::agent {
namespace {

constexpr absl::string_view kAllowedKeys[] = {"role",
                                              "peer",
                                              "peer_node",
                                              "device",
                                              "port",
                                              "gid_index",
                                              "size",
                                              "iterations",
                                              "warmup",
                                              "qp_depth",
                                              "latency_iterations",
                                              "bind",
                                              "accept_timeout_s"};
constexpr int64_t kMaxSize = int64_t{1} << 30;
constexpr char kBandwidthMethod[] =
    "RC RDMA WRITE, one QP, `iterations` writes of `size` bytes with at most "
    "qp_depth outstanding, 1 in 100 signaled (perftest ib_write_bw); bytes / "
    "(first post to last completion) after `warmup` untimed writes";
constexpr char kLatencyMethod[] =
    "RC RDMA WRITE ping-pong of 2-byte writes, each side polling the last "
    "byte of its buffer (perftest ib_write_lat); one-way = round trip / 2, "
    "after `warmup` untimed round trips";



bool IsDeviceName(absl::string_view name) {
  return !name.empty() && name.size() <= 64 &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
                  c == '_' || c == '-' || c == '.';
         });
}

v1::Sample& AddSample(std::vector<v1::Sample>& samples,
                      const RdmaConfig& config,
                      const rdma::ClientReport& report,
                      const std::string& metric, const std::string& unit,
                      double value, int64_t size, int64_t iterations,
                      const std::string& method) {
  v1::Sample& sample = samples.emplace_back();
  sample.set_metric(metric);
  sample.set_unit(unit);
  sample.set_value(value);
  auto& p = *sample.mutable_params();
  p["size"] = absl::StrCat(size);
  p["iterations"] = absl::StrCat(iterations);
  p["warmup"] = absl::StrCat(config.warmup);
  p["qp_depth"] = absl::StrCat(config.qp_depth);
  p["device"] = report.facts.device;
  p["port"] = absl::StrCat(report.facts.port);
  p["gid_index"] = absl::StrCat(config.gid_index);
  p["link_layer"] = report.facts.link_layer;
  p["path_mtu"] = absl::StrCat(report.path_mtu);
  pairwise::AddPeerParams(config.peer, config.peer_address, config.peer_node, p);
  p["method"] = method;
  return sample;
}

}  // namespace

absl::StatusOr<RdmaConfig> ParseRdmaParams(const Params& params) {
  const ParamReader in("rdma", params);
  if (absl::Status s = in.CheckKeys(kAllowedKeys); !s.ok()) return s;
  RdmaConfig config;

  absl::StatusOr<pairwise::PairSide> side =
      pairwise::ParsePairSide(params, "rdma", "the TCP port it published");
  if (!side.ok()) return side.status();
  config.role = side->server ? RdmaRole::kServer : RdmaRole::kClient;
  config.peer = side->peer;
  config.peer_address = side->peer_address;
  config.peer_node = side->peer_node;

  config.device = in.Get("device", "");
  if (in.Has("device") && !IsDeviceName(config.device)) {
    return in.Error("device",
                    absl::StrCat("'", config.device,
                                 "' is not an RDMA device name (letters, "
                                 "digits, _ - .; e.g. mlx5_0; `ibv_devices` "
                                 "lists them)"));
  }

  struct IntParam {
    const char* key;
    int64_t fallback, lo, hi;
    int64_t* out;
  };
  int64_t port = 0, gid_index = 0, size = 0, qp_depth = 0, latency = 0;
  const IntParam ints[] = {
      {"port", 1, 1, 255, &port},
      {"gid_index", 0, 0, 1023, &gid_index},
      {"size", 65536, 1, kMaxSize, &size},
      {"iterations", 5000, 1, 10'000'000, &config.iterations},
      {"warmup", 100, 0, 1'000'000, &config.warmup},
      {"qp_depth", 128, 1, 16384, &qp_depth},
      {"latency_iterations", 1000, 0, 10'000'000, &latency},
  };
  for (const IntParam& p : ints) {
    absl::StatusOr<int64_t> value = in.Int(p.key, p.fallback, p.lo, p.hi);
    if (!value.ok()) return value.status();
    *p.out = *value;
  }
  config.port = static_cast<int>(port);
  config.gid_index = static_cast<int>(gid_index);
  config.size = static_cast<size_t>(size);
  config.qp_depth = static_cast<int>(qp_depth);
  config.latency_iterations = static_cast<int>(latency);

  absl::StatusOr<std::string> bind = pairwise::ParseBindAddress(params, "rdma");
  if (!bind.ok()) return bind.status();
  config.bind = *bind;
  absl::StatusOr<double> accept_timeout =
      in.Double("accept_timeout_s", 60, 1, 3600);
  if (!accept_timeout.ok()) return accept_timeout.status();
  config.accept_timeout_s = *accept_timeout;
  return config;
}

std::vector<v1::Sample> RdmaSamples(const RdmaConfig& config,
                                    const rdma::ClientReport& report) {
  std::vector<v1::Sample> samples;
  {
    v1::Sample& s = AddSample(
        samples, config, report, "rdma.write.Gbps", "Gbps", report.gbps,
        static_cast<int64_t>(config.size), config.iterations, kBandwidthMethod);
    auto& p = *s.mutable_params();
    p["bytes"] = absl::StrCat(report.bandwidth.bytes);
    p["seconds"] = FormatNumber(report.bandwidth.seconds);
  }
  if (report.latency && report.latency->iterations > 0) {
    const rdma::LatencySummary& r = *report.latency;
    for (const auto& [metric, value] :
         {std::pair{"rdma.write_lat.p50_us", r.p50_us},
          std::pair{"rdma.write_lat.p99_us", r.p99_us}}) {
      v1::Sample& s = AddSample(samples, config, report, metric, "us", value,
                                r.bytes, r.iterations, kLatencyMethod);
      auto& p = *s.mutable_params();
      p["min_us"] = FormatNumber(r.min_us);
      p["mean_us"] = FormatNumber(r.mean_us);
      p["max_us"] = FormatNumber(r.max_us);
    }
  }
  return samples;
}

RdmaBenchmark::RdmaBenchmark() : factory_(rdma::OpenVerbsEndpoint) {}

RdmaBenchmark::RdmaBenchmark(rdma::EndpointFactory factory)
    : factory_(std::move(factory)) {}

std::vector<MetricInfo> RdmaBenchmark::metrics() const {
  // RC queue pair, RDMA WRITE, like perftest.
  return {
      {"rdma.write.Gbps", "Gbps", kHigherIsBetter,
       "RDMA WRITE bandwidth, client to listener"},
      {"rdma.write_lat.p50_us", "us", kLowerIsBetter,
       "RDMA WRITE one-way latency, median"},
      {"rdma.write_lat.p99_us", "us", kLowerIsBetter,
       "RDMA WRITE one-way latency, p99"},
  };
}

absl::Status RdmaBenchmark::Probe() const {
  return rdma::ListRdmaDevices().status();
}

absl::Status RdmaBenchmark::ValidateParams(const Params& params) const {
  return ParseRdmaParams(params).status();
}

absl::StatusOr<std::vector<v1::Sample>> RdmaBenchmark::Run(
    const Params& params, const RunContext& context) {
  absl::StatusOr<RdmaConfig> config = ParseRdmaParams(params);
  if (!config.ok()) return config.status();
  const rdma::CancelFn cancelled = [&context] { return context.cancelled(); };
  const rdma::ProgressFn progress = [&context](double fraction,
                                               const std::string& message) {
    context.ReportProgress(fraction, message);
  };
  rdma::EndpointOptions endpoint;
  endpoint.device = config->device;
  endpoint.port = config->port;
  endpoint.gid_index = config->gid_index;
  endpoint.size = config->size;
  endpoint.qp_depth = config->qp_depth;

  if (config->role == RdmaRole::kServer) {
    rdma::ServerOptions options;
    options.endpoint = endpoint;
    options.bind = config->bind;
    options.accept_timeout_s = config->accept_timeout_s;
    absl::Status served = rdma::RunRdmaServer(
        options, factory_,
        [&context](int port) { return context.PublishPort(port); }, cancelled,
        progress);
    if (!served.ok()) return served;
    return std::vector<v1::Sample>();
  }

  rdma::ClientOptions options;
  options.endpoint = endpoint;
  options.peer = config->peer_address;
  options.iterations = config->iterations;
  options.warmup = config->warmup;
  options.latency_iterations = config->latency_iterations;
  absl::StatusOr<rdma::ClientReport> report =
      rdma::RunRdmaClient(options, factory_, cancelled, progress);
  if (!report.ok()) return report.status();
  return RdmaSamples(*config, *report);
}

}  // namespace fleetbench::agent
