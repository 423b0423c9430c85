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
