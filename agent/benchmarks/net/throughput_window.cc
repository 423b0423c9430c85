#include "agent/benchmarks/net/throughput_window.h"

#include <chrono>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/benchmarks/net/control_exchange.h"
#include "common/units.h"

namespace fleetbench::agent::net {

using ::fleetbench::agent::pairwise::CancelFn;
using ::fleetbench::agent::pairwise::Clock;
using ::fleetbench::agent::pairwise::DeadlineIn;

namespace {

Clock::time_point After(Clock::time_point start, double seconds) {
  return start + std::chrono::duration_cast<Clock::duration>(
                     std::chrono::duration<double>(seconds));
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

}  // namespace

absl::StatusOr<ReceivedWindow> MeasureReceivedWindow(
    int control_fd, const TestRequest& test, StreamGroup& group,
    const CancelFn& cancelled, const std::string& peer,
    const std::function<void()>& on_open) {
  const auto started = Clock::now();
  if (absl::Status s = QuietUntil(control_fd, After(started, test.warmup_s),
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
  if (absl::Status s = QuietUntil(control_fd, After(opened, test.duration_s),
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

absl::StatusOr<SentWindow> MeasureSentWindow(
    int control_fd, const TestRequest& test, StreamGroup& group,
    const CancelFn& cancelled, const std::string& peer,
    const std::function<void()>& on_open) {
  absl::StatusOr<ControlMessage> open =
      Expect(control_fd, "OPEN", DeadlineIn(test.warmup_s + kStepTimeoutS),
             cancelled, peer);
  if (!open.ok()) return open.status();
  const TcpCounters counters0 = group.Counters();
  if (on_open) on_open();
  absl::StatusOr<ControlMessage> close =
      Expect(control_fd, "CLOSE", DeadlineIn(test.duration_s + kStepTimeoutS),
             cancelled, peer);
  if (!close.ok()) return close.status();
  const TcpCounters counters1 = group.Counters();
  group.StopSending();
  SentWindow sent;
  sent.counters = Subtract(counters1, counters0);
  sent.congestion = group.Congestion();
  sent.close = *std::move(close);
  return sent;
}

ControlMessage EncodeCountsClose(const ReceivedWindow& window) {
  ControlMessage close("CLOSE");
  close.Set("bytes", absl::StrCat(window.bytes))
      .Set("window_ns",
           absl::StrCat(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            window.window)
                            .count()))
      .Set("stream_bytes", absl::StrJoin(window.stream_bytes, ","));
  return close;
}

absl::StatusOr<ReceivedWindow> DecodeCountsClose(const ControlMessage& close,
                                                 const std::string& peer) {
  absl::StatusOr<int64_t> bytes = close.Int("bytes");
  absl::StatusOr<int64_t> window_ns = close.Int("window_ns");
  if (!bytes.ok() || !window_ns.ok() || *bytes < 0 || *window_ns <= 0) {
    return absl::InternalError(absl::StrCat("net: protocol error: ", peer,
                                            " sent a CLOSE without counts"));
  }
  ReceivedWindow window;
  window.bytes = static_cast<uint64_t>(*bytes);
  window.window = std::chrono::nanoseconds(*window_ns);
  for (absl::string_view part :
       absl::StrSplit(close.Get("stream_bytes"), ',', absl::SkipEmpty())) {
    uint64_t v = 0;
    if (absl::SimpleAtoi(part, &v)) window.stream_bytes.push_back(v);
  }
  return window;
}

ControlMessage EncodeSenderFinished(const SentWindow& sent) {
  ControlMessage finished("FINISHED");
  finished.Set("retransmits", absl::StrCat(sent.counters.retransmits))
      .Set("spurious_retransmits",
           absl::StrCat(sent.counters.spurious_retransmits))
      .Set("reordering", absl::StrCat(sent.counters.reordering))
      .Set("congestion", sent.congestion);
  return finished;
}

SentWindow DecodeSenderFinished(const ControlMessage& finished) {
  const auto count = [&finished](const std::string& key) -> int64_t {
    absl::StatusOr<int64_t> v = finished.Int(key);
    return v.ok() && *v >= 0 ? *v : -1;
  };
  SentWindow sent;
  sent.counters.retransmits = count("retransmits");
  sent.counters.spurious_retransmits = count("spurious_retransmits");
  sent.counters.reordering = count("reordering");
  sent.congestion = finished.Get("congestion");
  return sent;
}

ThroughputResult ThroughputFromWindow(const TestRequest& test,
                                      const ReceivedWindow& window,
                                      const SentWindow& sender) {
  ThroughputResult r;
  r.streams = test.streams;
  r.settings = test.settings;
  r.stream_bytes = window.stream_bytes;
  r.bytes = window.bytes;
  r.window_s = std::chrono::duration<double>(window.window).count();
  r.gbps = GbpsFromBytes(r.bytes, r.window_s);
  r.retransmits = sender.counters.retransmits;
  r.spurious_retransmits = sender.counters.spurious_retransmits;
  r.reordering = sender.counters.reordering;
  r.congestion = sender.congestion;
  return r;
}

}  // namespace fleetbench::agent::net
