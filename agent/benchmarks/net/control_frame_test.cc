#include "agent/benchmarks/net/control_frame.h"

#include <sys/socket.h>

#include "agent/benchmarks/pairwise/tcp_socket.h"
#include "gtest/gtest.h"

namespace fleetbench::agent::net {

using ::fleetbench::agent::pairwise::DeadlineIn;
using ::fleetbench::agent::pairwise::RecvExact;
using ::fleetbench::agent::pairwise::SendAll;
using ::fleetbench::agent::pairwise::Socket;

namespace {

absl::StatusOr<ControlMessage> DecodeFrame(const std::string& frame) {
  if (frame.size() < 4) return absl::InvalidArgumentError("short");
  return DecodePayload(frame.substr(4));
}

TEST(ControlFrameTest, RoundTripsVerbAndFields) {
  ControlMessage m("CLOSE");
  m.Set("bytes", "123").Set("window_ns", "500000000");
  const std::string frame = EncodeFrame(m);
  ASSERT_GE(frame.size(), 4u);
  EXPECT_EQ(frame.substr(0, 3), std::string(3, '\0'));
  EXPECT_EQ(static_cast<unsigned char>(frame[3]), frame.size() - 4);
  absl::StatusOr<ControlMessage> back = DecodeFrame(frame);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->verb, "CLOSE");
  EXPECT_EQ(back->Get("bytes"), "123");
  ASSERT_TRUE(back->Int("window_ns").ok());
  EXPECT_EQ(*back->Int("window_ns"), 500000000);
  EXPECT_EQ(back->Get("absent"), "");
  EXPECT_FALSE(back->Int("absent").ok());
}

TEST(ControlFrameTest, NewlinesInValuesBecomeSpaces) {
  ControlMessage m("ERROR");
  m.Set("message", "two\nlines");
  absl::StatusOr<ControlMessage> back = DecodeFrame(EncodeFrame(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->Get("message"), "two lines");
}

TEST(ControlFrameTest, RejectsMalformedPayloads) {
  EXPECT_FALSE(DecodePayload("").ok());
  EXPECT_FALSE(DecodePayload("VERB\nno-equals").ok());
  EXPECT_FALSE(DecodePayload("VERB\n=value").ok());
  EXPECT_TRUE(DecodePayload("VERB\nkey=").ok());
}

TEST(ControlFrameTest, TravelsOverASocketPairOneFrameAtATime) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  Socket a(fds[0]), b(fds[1]);
  ASSERT_TRUE(SendMessage(a.fd(), ControlMessage("DATA").Set("stream", "3"),
                          DeadlineIn(1), nullptr)
                  .ok());
  const char raw[] = "payload-after-frame";
  ASSERT_TRUE(SendAll(a.fd(), raw, sizeof(raw), DeadlineIn(1), nullptr).ok());
  absl::StatusOr<ControlMessage> m =
      RecvMessage(b.fd(), DeadlineIn(1), nullptr);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->verb, "DATA");
  EXPECT_EQ(m->Get("stream"), "3");
  // The bytes after the frame are still there: RecvMessage never over-reads.
  char rest[sizeof(raw)];
  ASSERT_TRUE(
      RecvExact(b.fd(), rest, sizeof(rest), DeadlineIn(1), nullptr).ok());
  EXPECT_STREQ(rest, raw);
}

TEST(ControlFrameTest, OversizedLengthIsNotAPeer) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  Socket a(fds[0]), b(fds[1]);
  const char http[] = "GET / HTTP/1.1\r\n\r\n";
  ASSERT_TRUE(
      SendAll(a.fd(), http, sizeof(http) - 1, DeadlineIn(1), nullptr).ok());
  absl::StatusOr<ControlMessage> m =
      RecvMessage(b.fd(), DeadlineIn(1), nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(m.status())) << m.status();
}

TEST(ControlFrameTest, RecvTimesOutAndSeesClose) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  Socket a(fds[0]), b(fds[1]);
  absl::StatusOr<ControlMessage> m =
      RecvMessage(b.fd(), DeadlineIn(0.05), nullptr);
  EXPECT_TRUE(absl::IsDeadlineExceeded(m.status())) << m.status();
  a.Close();
  m = RecvMessage(b.fd(), DeadlineIn(1), nullptr);
  EXPECT_TRUE(absl::IsUnavailable(m.status())) << m.status();
}

}  // namespace
}  // namespace fleetbench::agent::net
