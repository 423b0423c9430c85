#include "agent/benchmarks/net/test_request.h"

#include <cmath>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "agent/benchmarks/net/socket_tuning.h"
#include "agent/benchmarks/net/tcp_engine.h"

namespace fleetbench::agent::net {
namespace {

int64_t Millis(double seconds) { return std::llround(seconds * 1000); }

}  // namespace

ControlMessage EncodeTest(const TestRequest& t) {
  ControlMessage m("TEST");
  m.Set("id", absl::StrCat(t.id))
      .Set("kind", t.kind)
      .Set("streams", absl::StrCat(t.streams))
      .Set("warmup_ms", absl::StrCat(Millis(t.warmup_s)))
      .Set("duration_ms", absl::StrCat(Millis(t.duration_s)))
      .Set("message_bytes", absl::StrCat(t.message_bytes))
      .Set("count", absl::StrCat(t.count))
      .Set("write_bytes", absl::StrCat(t.settings.write_bytes))
      .Set("socket_buffer_bytes", absl::StrCat(t.settings.socket_buffer_bytes))
      .Set("congestion", t.settings.congestion)
      .Set("rate_bps", absl::StrCat(std::llround(t.settings.rate_bps)));
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
  absl::StatusOr<int64_t> write_bytes = m.Int("write_bytes");
  absl::StatusOr<int64_t> buffer_bytes = m.Int("socket_buffer_bytes");
  absl::StatusOr<int64_t> rate_bps = m.Int("rate_bps");
  for (const auto* s : {&id, &streams, &warmup_ms, &duration_ms,
                        &message_bytes, &count, &write_bytes, &buffer_bytes,
                        &rate_bps}) {
    if (!s->ok()) return s->status();
  }
  t.settings.congestion = m.Get("congestion");
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
      (t.kind != "latency" && *duration_ms < 100) || *write_bytes < 1 ||
      *write_bytes > kMaxWriteBytes ||
      (*buffer_bytes != 0 && (*buffer_bytes < kMinSocketBufferBytes ||
                              *buffer_bytes > kMaxSocketBufferBytes)) ||
      *rate_bps < 0 || static_cast<double>(*rate_bps) > kMaxRateBps ||
      (!t.settings.congestion.empty() &&
       !IsCongestionName(t.settings.congestion))) {
    return absl::InvalidArgumentError(
        "net: the client asked for a test outside the allowed limits");
  }
  t.id = static_cast<int>(*id);
  t.streams = static_cast<int>(*streams);
  t.warmup_s = static_cast<double>(*warmup_ms) / 1000;
  t.duration_s = static_cast<double>(*duration_ms) / 1000;
  t.message_bytes = static_cast<int>(*message_bytes);
  t.count = static_cast<int>(*count);
  t.settings.write_bytes = *write_bytes;
  t.settings.socket_buffer_bytes = *buffer_bytes;
  t.settings.rate_bps = static_cast<double>(*rate_bps);
  return t;
}

}  // namespace fleetbench::agent::net
