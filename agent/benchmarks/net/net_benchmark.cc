#include "agent/benchmarks/net/net_benchmark.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "agent/benchmarks/net/socket_tuning.h"
#include "agent/benchmarks/pairwise/pair_params.h"
#include "agent/benchmarks/param_reader.h"
#include "common/units.h"

namespace fleetbench::agent {
namespace {

constexpr absl::string_view kAllowedKeys[] = {
    "role",          "peer",          "peer_node",
    "streams",       "duration_s",    "warmup_s",
    "reverse",       "latency_count", "message_bytes",
    "mode",          "write_bytes",   "socket_buffer_bytes",
    "congestion",    "rate_Mbps",     "bind",
    "accept_timeout_s"};
constexpr char kRetransmitMethod[] =
    "tcpi_total_retrans of the sending sockets, delta over the forward "
    "window (spurious_retransmits: tcpi_dsack_dups, the receiver had them)";
constexpr char kLatencyMethod[] =
    "one TCP_NODELAY connection, message_bytes ping-pong timed by the "
    "client after 100 warm-up round trips";

v1::Sample& AddSample(std::vector<v1::Sample>& samples, const NetConfig& config,
                      const std::string& metric, const std::string& unit,
                      double value, const std::string& direction, int streams,
                      const std::string& method) {
  v1::Sample& sample = samples.emplace_back();
  sample.set_metric(metric);
  sample.set_unit(unit);
  sample.set_value(value);
  auto& p = *sample.mutable_params();
  p["streams"] = absl::StrCat(streams);
  p["duration_s"] = FormatNumber(config.duration_s);
  p["warmup_s"] = FormatNumber(config.warmup_s);
  pairwise::AddPeerParams(config.peer, config.peer_address, config.peer_node, p);
  p["direction"] = direction;
  p["method"] = method;
  return sample;
}

std::string ThroughputMethod(const net::StreamSettings& settings) {
  return absl::StrCat(
      "tcp, one thread per stream writing ", settings.write_bytes,
      "-byte blocks", settings.rate_bps > 0 ? " at a paced rate" : "",
      "; bytes received by the receiver in the window after warm-up, on its "
      "clock");
}

void AddCounterParams(v1::Sample& sample, const net::ThroughputResult& r) {
  auto& p = *sample.mutable_params();
  if (r.retransmits >= 0) p["retransmits"] = absl::StrCat(r.retransmits);
  if (r.spurious_retransmits >= 0) {
    p["spurious_retransmits"] = absl::StrCat(r.spurious_retransmits);
  }
  if (r.reordering >= 0) p["reordering"] = absl::StrCat(r.reordering);
}

void AddThroughputParams(v1::Sample& sample, const net::ThroughputResult& r) {
  auto& p = *sample.mutable_params();
  p["bytes"] = absl::StrCat(r.bytes);
  p["window_s"] = FormatNumber(r.window_s);
  AddCounterParams(sample, r);
  if (!r.stream_bytes.empty() && r.window_s > 0) {
    const auto [mn, mx] =
        std::minmax_element(r.stream_bytes.begin(), r.stream_bytes.end());
    p["stream_min_Gbps"] = FormatNumber(GbpsFromBytes(*mn, r.window_s));
    p["stream_max_Gbps"] = FormatNumber(GbpsFromBytes(*mx, r.window_s));
  }
  p["block_bytes"] = absl::StrCat(r.settings.write_bytes);
  p["write_bytes"] = absl::StrCat(r.settings.write_bytes);
  p["socket_buffer_bytes"] = absl::StrCat(r.settings.socket_buffer_bytes);
  if (r.client_sndbuf_bytes >= 0) {
    p["client_sndbuf_bytes"] = absl::StrCat(r.client_sndbuf_bytes);
  }
  if (r.client_rcvbuf_bytes >= 0) {
    p["client_rcvbuf_bytes"] = absl::StrCat(r.client_rcvbuf_bytes);
  }
  if (!r.congestion.empty()) p["congestion"] = r.congestion;
  p["rate_Mbps"] = FormatNumber(r.settings.rate_bps / 1e6);
}

absl::StatusOr<NetMode> ParseMode(const ParamReader& in) {
  const std::string mode = in.Get("mode", "all");
  if (mode == "all") return NetMode::kAll;
  if (mode == "throughput") return NetMode::kThroughput;
  if (mode == "latency") return NetMode::kLatency;
  return in.Error("mode", absl::StrCat("'", mode,
                                       "' is not all, throughput or latency"));
}

absl::StatusOr<net::StreamSettings> ParseStreamSettings(
    const ParamReader& in) {
  net::StreamSettings settings;
  absl::StatusOr<int64_t> write_bytes =
      in.Bytes("write_bytes", net::kStreamBufferBytes, 1, net::kMaxWriteBytes);
  if (!write_bytes.ok()) return write_bytes.status();
  settings.write_bytes = *write_bytes;
  absl::StatusOr<int64_t> buffer =
      in.Bytes("socket_buffer_bytes", 0, 0, net::kMaxSocketBufferBytes);
  if (!buffer.ok()) return buffer.status();
  if (*buffer != 0 && *buffer < net::kMinSocketBufferBytes) {
    return in.Error("socket_buffer_bytes",
                    absl::StrCat(*buffer, " is below ",
                                 net::kMinSocketBufferBytes,
                                 " (0 leaves the buffers to the kernel)"));
  }
  settings.socket_buffer_bytes = *buffer;
  settings.congestion = in.Get("congestion", "");
  if (in.Has("congestion") && !net::IsCongestionName(settings.congestion)) {
    return in.Error("congestion",
                    absl::StrCat("'", settings.congestion,
                                 "' is not a congestion control name (1..15 "
                                 "of a-z 0-9 _ -, e.g. cubic, bbr, reno)"));
  }
  absl::StatusOr<double> rate =
      in.Double("rate_Mbps", 0, 0, net::kMaxRateBps / 1e6);
  if (!rate.ok()) return rate.status();
  settings.rate_bps = *rate * 1e6;
  return settings;
}

}  // namespace

absl::StatusOr<NetConfig> ParseNetParams(const Params& params) {
  const ParamReader in("net", params);
  if (absl::Status s = in.CheckKeys(kAllowedKeys); !s.ok()) return s;
  NetConfig config;

  absl::StatusOr<pairwise::PairSide> side =
      pairwise::ParsePairSide(params, "net", "the port it published");
  if (!side.ok()) return side.status();
  config.role = side->server ? NetRole::kServer : NetRole::kClient;
  config.peer = side->peer;
  config.peer_address = side->peer_address;
  config.peer_node = side->peer_node;

  absl::StatusOr<int64_t> streams = in.Int("streams", 4, 1, net::kMaxStreams);
  if (!streams.ok()) return streams.status();
  config.streams = static_cast<int>(*streams);
  absl::StatusOr<double> duration = in.Double("duration_s", 10, 0.1, 600);
  if (!duration.ok()) return duration.status();
  config.duration_s = *duration;
  absl::StatusOr<double> warmup = in.Double("warmup_s", 2, 0, 60);
  if (!warmup.ok()) return warmup.status();
  config.warmup_s = *warmup;
  absl::StatusOr<bool> reverse = in.Bool("reverse", true);
  if (!reverse.ok()) return reverse.status();
  config.reverse = *reverse;
  absl::StatusOr<int64_t> latency_count =
      in.Int("latency_count", 2000, 0, 1'000'000);
  if (!latency_count.ok()) return latency_count.status();
  config.latency_count = static_cast<int>(*latency_count);
  absl::StatusOr<int64_t> message_bytes =
      in.Int("message_bytes", 64, 1, net::kMaxMessageBytes);
  if (!message_bytes.ok()) return message_bytes.status();
  config.message_bytes = static_cast<int>(*message_bytes);
  absl::StatusOr<NetMode> mode = ParseMode(in);
  if (!mode.ok()) return mode.status();
  config.mode = *mode;
  if (config.mode == NetMode::kLatency && config.latency_count == 0) {
    return in.Error("mode", "latency needs latency_count >= 1");
  }
  absl::StatusOr<net::StreamSettings> settings = ParseStreamSettings(in);
  if (!settings.ok()) return settings.status();
  config.settings = *settings;

  absl::StatusOr<std::string> bind = pairwise::ParseBindAddress(params, "net");
  if (!bind.ok()) return bind.status();
  config.bind = *bind;
  absl::StatusOr<double> accept_timeout =
      in.Double("accept_timeout_s", 60, 1, 3600);
  if (!accept_timeout.ok()) return accept_timeout.status();
  config.accept_timeout_s = *accept_timeout;
  return config;
}

std::vector<v1::Sample> NetSamples(const NetConfig& config,
                                   const net::TcpClientReport& report) {
  std::vector<v1::Sample> samples;
  if (report.forward) {
    const net::ThroughputResult& r = *report.forward;
    AddThroughputParams(
        AddSample(samples, config, "net.tcp.Gbps", "Gbps", r.gbps, "forward",
                  r.streams, ThroughputMethod(r.settings)),
        r);
    if (r.retransmits >= 0) {
      AddCounterParams(
          AddSample(samples, config, "net.tcp.retransmits.count", "count",
                    static_cast<double>(r.retransmits), "forward", r.streams,
                    kRetransmitMethod),
          r);
    }
  }
  if (report.reverse) {
    const net::ThroughputResult& r = *report.reverse;
    AddThroughputParams(
        AddSample(samples, config, "net.tcp.reverse.Gbps", "Gbps", r.gbps,
                  "reverse", r.streams, ThroughputMethod(r.settings)),
        r);
  }
  if (report.latency && report.latency->count > 0) {
    const net::LatencyResult& r = *report.latency;
    for (const auto& [metric, value] :
         {std::pair{"net.tcp.rtt_p50_us", r.p50_us},
          std::pair{"net.tcp.rtt_p99_us", r.p99_us}}) {
      v1::Sample& s = AddSample(samples, config, metric, "us", value,
                                "round_trip", 1, kLatencyMethod);
      auto& p = *s.mutable_params();
      p["message_bytes"] = absl::StrCat(r.message_bytes);
      p["round_trips"] = absl::StrCat(r.count);
      p["warmup_round_trips"] = absl::StrCat(net::kLatencyWarmupRoundTrips);
      p["min_us"] = FormatNumber(r.min_us);
      p["mean_us"] = FormatNumber(r.mean_us);
      p["max_us"] = FormatNumber(r.max_us);
    }
  }
  return samples;
}

std::vector<MetricInfo> TcpNetBenchmark::metrics() const {
  // TCP, receiver-side bytes.
  return {
      {"net.tcp.Gbps", "Gbps", kHigherIsBetter,
       "TCP throughput, client to listener, P streams"},
      {"net.tcp.reverse.Gbps", "Gbps", kHigherIsBetter,
       "TCP throughput, listener to client"},
      {"net.tcp.retransmits.count", "count", kLowerIsBetter,
       "TCP retransmits during the forward test"},
      {"net.tcp.rtt_p50_us", "us", kLowerIsBetter,
       "TCP small-message round trip, median"},
      {"net.tcp.rtt_p99_us", "us", kLowerIsBetter,
       "TCP small-message round trip, p99"},
  };
}

absl::Status TcpNetBenchmark::Probe() const { return absl::OkStatus(); }

absl::Status TcpNetBenchmark::ValidateParams(const Params& params) const {
  return ParseNetParams(params).status();
}

absl::StatusOr<std::vector<v1::Sample>> TcpNetBenchmark::Run(
    const Params& params, const RunContext& context) {
  absl::StatusOr<NetConfig> config = ParseNetParams(params);
  if (!config.ok()) return config.status();
  const pairwise::CancelFn cancelled = [&context] {
    return context.cancelled();
  };
  const net::ProgressFn progress = [&context](double fraction,
                                              const std::string& message) {
    context.ReportProgress(fraction, message);
  };

  if (config->role == NetRole::kServer) {
    net::TcpServerOptions options;
    options.bind = config->bind;
    options.accept_timeout_s = config->accept_timeout_s;
    absl::StatusOr<net::TcpServerReport> served = net::RunTcpServer(
        options, [&context](int port) { return context.PublishPort(port); },
        cancelled, progress);
    if (!served.ok()) return served.status();
    return std::vector<v1::Sample>();
  }

  net::TcpClientOptions options;
  options.peer = config->peer_address;
  options.streams = config->streams;
  options.duration_s = config->duration_s;
  options.warmup_s = config->warmup_s;
  options.forward = config->mode != NetMode::kLatency;
  options.reverse = config->reverse && config->mode != NetMode::kLatency;
  options.latency_count =
      config->mode == NetMode::kThroughput ? 0 : config->latency_count;
  options.message_bytes = config->message_bytes;
  options.settings = config->settings;
  absl::StatusOr<net::TcpClientReport> report =
      net::RunTcpClient(options, cancelled, progress);
  if (!report.ok()) return report.status();
  return NetSamples(*config, *report);
}

}  // namespace fleetbench::agent
