#include "agent/benchmarks/net/throughput_window.h"

#include <chrono>

#include "gtest/gtest.h"

namespace fleetbench::agent::net {
namespace {

TEST(ThroughputWindowTest, CountsTravelInTheReceiversClose) {
  ReceivedWindow w;
  w.stream_bytes = {100, 250};
  w.bytes = 350;
  w.window = std::chrono::milliseconds(1500);
  const ControlMessage close = EncodeCountsClose(w);
  EXPECT_EQ(close.verb, "CLOSE");
  EXPECT_EQ(close.Get("window_ns"), "1500000000");
  EXPECT_EQ(close.Get("stream_bytes"), "100,250");
  absl::StatusOr<ReceivedWindow> back = DecodeCountsClose(close, "peer");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->bytes, 350u);
  EXPECT_EQ(back->stream_bytes, w.stream_bytes);
  EXPECT_EQ(back->window, w.window);
}

TEST(ThroughputWindowTest, ACloseWithoutCountsIsAProtocolError) {
  const absl::Status s =
      DecodeCountsClose(ControlMessage("CLOSE"), "10.0.0.5:1").status();
  EXPECT_TRUE(absl::IsInternal(s)) << s;
  EXPECT_NE(s.message().find("10.0.0.5:1"), std::string::npos) << s;
}

TEST(ThroughputWindowTest, CountersTravelInTheSendersFinished) {
  SentWindow sent;
  sent.counters = {12, 10, 4};
  sent.congestion = "cubic";
  const SentWindow back = DecodeSenderFinished(EncodeSenderFinished(sent));
  EXPECT_EQ(back.counters.retransmits, 12);
  EXPECT_EQ(back.counters.spurious_retransmits, 10);
  EXPECT_EQ(back.counters.reordering, 4);
  EXPECT_EQ(back.congestion, "cubic");
  const SentWindow none = DecodeSenderFinished(ControlMessage("FINISHED"));
  EXPECT_EQ(none.counters.retransmits, -1);
  EXPECT_EQ(none.counters.spurious_retransmits, -1);
  EXPECT_EQ(none.congestion, "");
}

TEST(ThroughputWindowTest, ResultJoinsCountsAndRetransmits) {
  ReceivedWindow w;
  w.stream_bytes = {1'000'000'000};
  w.bytes = 1'000'000'000;
  w.window = std::chrono::seconds(2);
  TestRequest test;
  test.streams = 1;
  test.settings.write_bytes = 4096;
  SentWindow sent;
  sent.counters = {3, 2, 1};
  sent.congestion = "bbr";
  const ThroughputResult r = ThroughputFromWindow(test, w, sent);
  EXPECT_EQ(r.streams, 1);
  EXPECT_EQ(r.window_s, 2);
  EXPECT_DOUBLE_EQ(r.gbps, 4);
  EXPECT_EQ(r.retransmits, 3);
  EXPECT_EQ(r.spurious_retransmits, 2);
  EXPECT_EQ(r.reordering, 1);
  EXPECT_EQ(r.congestion, "bbr");
  EXPECT_EQ(r.settings.write_bytes, 4096);
}

}  // namespace
}  // namespace fleetbench::agent::net
