#include "agent/benchmarks/net/test_request.h"

#include "agent/benchmarks/net/tcp_engine.h"
#include "gtest/gtest.h"

namespace fleetbench::agent::net {
namespace {

TestRequest Forward() {
  TestRequest t;
  t.id = 7;
  t.kind = "forward";
  t.streams = 4;
  t.warmup_s = 2;
  t.duration_s = 10;
  return t;
}

TEST(TestRequestTest, RoundTripsInWholeMilliseconds) {
  TestRequest t = Forward();
  t.warmup_s = 0.0004;  // rounds to 0 ms
  const ControlMessage m = EncodeTest(t);
  EXPECT_EQ(m.verb, "TEST");
  EXPECT_EQ(m.Get("warmup_ms"), "0");
  EXPECT_EQ(m.Get("duration_ms"), "10000");
  absl::StatusOr<TestRequest> back = DecodeTest(m);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->id, 7);
  EXPECT_EQ(back->kind, "forward");
  EXPECT_EQ(back->streams, 4);
  EXPECT_EQ(back->warmup_s, 0);
  EXPECT_EQ(back->duration_s, 10);
}

TEST(TestRequestTest, StreamSettingsTravel) {
  TestRequest t = Forward();
  t.settings.write_bytes = 9000;
  t.settings.socket_buffer_bytes = 1 << 20;
  t.settings.congestion = "reno";
  t.settings.rate_bps = 2.5e9;
  absl::StatusOr<TestRequest> back = DecodeTest(EncodeTest(t));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->settings.write_bytes, 9000);
  EXPECT_EQ(back->settings.socket_buffer_bytes, 1 << 20);
  EXPECT_EQ(back->settings.congestion, "reno");
  EXPECT_DOUBLE_EQ(back->settings.rate_bps, 2.5e9);

  // The defaults: kernel buffers and congestion control, no rate cap.
  back = DecodeTest(EncodeTest(Forward()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->settings.write_bytes, static_cast<int64_t>(kStreamBufferBytes));
  EXPECT_EQ(back->settings.socket_buffer_bytes, 0);
  EXPECT_EQ(back->settings.congestion, "");
  EXPECT_EQ(back->settings.rate_bps, 0);
}

TEST(TestRequestTest, RejectsSettingsThePluginWouldNotAsk) {
  const auto rejected = [](const TestRequest& t) {
    return absl::IsInvalidArgument(DecodeTest(EncodeTest(t)).status());
  };
  TestRequest t = Forward();
  t.settings.write_bytes = 0;
  EXPECT_TRUE(rejected(t));
  t.settings.write_bytes = kMaxWriteBytes + 1;
  EXPECT_TRUE(rejected(t));
  t = Forward();
  t.settings.socket_buffer_bytes = kMinSocketBufferBytes - 1;
  EXPECT_TRUE(rejected(t));
  t.settings.socket_buffer_bytes = kMaxSocketBufferBytes + 1;
  EXPECT_TRUE(rejected(t));
  t = Forward();
  t.settings.congestion = "../etc";
  EXPECT_TRUE(rejected(t));
  t = Forward();
  t.settings.rate_bps = -1;
  EXPECT_TRUE(rejected(t));
  t.settings.rate_bps = kMaxRateBps * 2;
  EXPECT_TRUE(rejected(t));
}

TEST(TestRequestTest, RejectsWhatThePluginWouldNotAsk) {
  TestRequest t = Forward();
  t.streams = kMaxStreams + 1;
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeTest(EncodeTest(t)).status()));
  t = Forward();
  t.duration_s = 0.05;
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeTest(EncodeTest(t)).status()));
  t = Forward();
  t.kind = "latency";  // needs message_bytes >= 1
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeTest(EncodeTest(t)).status()));
  t = Forward();
  t.kind = "sideways";
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeTest(EncodeTest(t)).status()));
  ControlMessage missing = EncodeTest(Forward());
  missing.fields.erase("count");
  EXPECT_TRUE(absl::IsInvalidArgument(DecodeTest(missing).status()));
}

}  // namespace
}  // namespace fleetbench::agent::net
