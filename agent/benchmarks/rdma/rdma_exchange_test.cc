#include "agent/benchmarks/rdma/rdma_exchange.h"

#include <string>

#include "gtest/gtest.h"

namespace fleetbench::agent::rdma {
namespace {

QueuePairInfo SampleInfo() {
  QueuePairInfo info;
  info.qpn = 0x123456;
  info.psn = 0xABCDEF;
  info.rkey = 0xDEADBEEF;
  info.lid = 0x0102;
  info.mtu = 4096;
  info.addr = 0x00007F0011223340ull;
  info.target_bytes = 64 + 65536;
  for (size_t i = 0; i < info.gid.size(); ++i) {
    info.gid[i] = static_cast<uint8_t>(0xF0 + i);
  }
  return info;
}

void ExpectInvalid(const absl::Status& s, const std::string& mention) {
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find(mention), std::string::npos)
      << "'" << s.message() << "' should mention '" << mention << "'";
}

TEST(RdmaExchangeTest, QueuePairInfoRoundTrips) {
  const QueuePairInfo info = SampleInfo();
  const std::string record = EncodeQueuePairInfo(info);
  EXPECT_EQ(record.size(), kRecordHeaderBytes + kQueuePairInfoPayloadBytes);
  absl::StatusOr<QueuePairInfo> decoded = DecodeQueuePairInfo(record);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, info);
}

TEST(RdmaExchangeTest, QueuePairInfoLayoutIsFixedLittleEndian) {
  // Pins the wire format: a change here must bump kExchangeVersion.
  const std::string r = EncodeQueuePairInfo(SampleInfo());
  const std::string expected_header("FBRX\x01\x00\x01\x00\x30\x00\x00\x00", 12);
  EXPECT_EQ(r.substr(0, 12), expected_header);
  EXPECT_EQ(r.substr(12, 4), std::string("\x56\x34\x12\x00", 4));  // qpn
  EXPECT_EQ(r.substr(16, 4), std::string("\xEF\xCD\xAB\x00", 4));  // psn
  EXPECT_EQ(r.substr(20, 4), std::string("\xEF\xBE\xAD\xDE", 4));  // rkey
  EXPECT_EQ(r.substr(24, 2), std::string("\x02\x01", 2));          // lid
  EXPECT_EQ(r.substr(26, 2), std::string("\x00\x10", 2));          // mtu
  EXPECT_EQ(r.substr(28, 8),
            std::string("\x40\x33\x22\x11\x00\x7F\x00\x00", 8));  // addr
  EXPECT_EQ(r.substr(36, 8),
            std::string("\x40\x00\x01\x00\x00\x00\x00\x00", 8));  // bytes
  EXPECT_EQ(static_cast<uint8_t>(r[44]), 0xF0);                   // gid[0]
  EXPECT_EQ(static_cast<uint8_t>(r[59]), 0xFF);                   // gid[15]
}

TEST(RdmaExchangeTest, RejectsEveryShortRecord) {
  const std::string record = EncodeQueuePairInfo(SampleInfo());
  for (size_t n = 0; n < record.size(); ++n) {
    const absl::StatusOr<QueuePairInfo> d =
        DecodeQueuePairInfo(record.substr(0, n));
    EXPECT_TRUE(absl::IsInvalidArgument(d.status())) << n << ": " << d.status();
  }
}

TEST(RdmaExchangeTest, RejectsALongRecord) {
  ExpectInvalid(
      DecodeQueuePairInfo(EncodeQueuePairInfo(SampleInfo()) + "x").status(),
      "61 bytes");
}

TEST(RdmaExchangeTest, RejectsGarbage) {
  ExpectInvalid(DecodeQueuePairInfo(std::string(60, '\x5A')).status(), "magic");
  ExpectInvalid(DecodeQueuePairInfo("GET / HTTP/1.1\r\nHost: x\r\n\r\n"
                                    "0123456789012345678901234567890123")
                    .status(),
                "magic");
}

TEST(RdmaExchangeTest, RejectsAnotherVersion) {
  std::string record = EncodeQueuePairInfo(SampleInfo());
  record[4] = 2;
  ExpectInvalid(DecodeQueuePairInfo(record).status(), "version 2");
}

TEST(RdmaExchangeTest, RejectsUnknownTypeAndWrongType) {
  std::string record = EncodeQueuePairInfo(SampleInfo());
  record[6] = 9;
  ExpectInvalid(DecodeQueuePairInfo(record).status(), "unknown record type 9");
  ExpectInvalid(DecodeQueuePairInfo(EncodeReady()).status(),
                "expected a queue-pair info record, got a ready record");
}

TEST(RdmaExchangeTest, RejectsALengthThatIsNotTheTypes) {
  std::string record = EncodeQueuePairInfo(SampleInfo());
  record[8] = 47;
  ExpectInvalid(DecodeQueuePairInfo(record).status(), "announces 47");
  // A header promising a huge payload is refused before anything is read.
  std::string header = EncodeDone(absl::InternalError("x")).substr(0, 12);
  header[8] = '\xFF';
  header[9] = '\xFF';
  ExpectInvalid(DecodeRecordHeader(header).status(), "announces 65535");
}

TEST(RdmaExchangeTest, RejectsOutOfRangeFields) {
  const auto with = [](auto change) {
    QueuePairInfo info = SampleInfo();
    change(info);
    return DecodeQueuePairInfo(EncodeQueuePairInfo(info)).status();
  };
  ExpectInvalid(with([](QueuePairInfo& i) { i.qpn = 0; }), "queue pair number");
  ExpectInvalid(with([](QueuePairInfo& i) { i.qpn = 1 << 24; }),
                "queue pair number");
  ExpectInvalid(with([](QueuePairInfo& i) { i.psn = 1 << 24; }),
                "packet sequence number");
  ExpectInvalid(with([](QueuePairInfo& i) { i.mtu = 1500; }), "MTU 1500");
  ExpectInvalid(with([](QueuePairInfo& i) { i.addr = 0; }), "address is 0");
  ExpectInvalid(with([](QueuePairInfo& i) { i.target_bytes = 0; }),
                "length is 0");
  ExpectInvalid(with([](QueuePairInfo& i) {
                  i.addr = ~uint64_t{0} - 10;
                  i.target_bytes = 100;
                }),
                "wraps");
}

TEST(RdmaExchangeTest, ReadyAndLatencyPlanRoundTrip) {
  EXPECT_TRUE(DecodeReady(EncodeReady()).ok());
  ExpectInvalid(DecodeReady(EncodeReady() + "?"), "13 bytes");
  const LatencyPlan plan{2, 100, 1000};
  absl::StatusOr<LatencyPlan> decoded =
      DecodeLatencyPlan(EncodeLatencyPlan(plan));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, plan);
  ExpectInvalid(DecodeLatencyPlan(EncodeLatencyPlan({0, 0, 1})).status(),
                "outside 1..64");
  ExpectInvalid(DecodeLatencyPlan(EncodeLatencyPlan({65, 0, 1})).status(),
                "outside 1..64");
  ExpectInvalid(DecodeLatencyPlan(EncodeLatencyPlan({2, 0, 0})).status(),
                "no iterations");
}

TEST(RdmaExchangeTest, DoneCarriesTheStatus) {
  absl::Status peer = absl::InternalError("unset");
  ASSERT_TRUE(DecodeDone(EncodeDone(absl::OkStatus()), &peer).ok());
  EXPECT_TRUE(peer.ok()) << peer;

  ASSERT_TRUE(
      DecodeDone(EncodeDone(absl::UnavailableError("retry exceeded")), &peer)
          .ok());
  EXPECT_TRUE(absl::IsUnavailable(peer)) << peer;
  EXPECT_EQ(peer.message(), "retry exceeded");

  ASSERT_TRUE(
      DecodeDone(EncodeDone(absl::InternalError(std::string(2000, 'r'))), &peer)
          .ok());
  EXPECT_EQ(peer.message().size(), kMaxReasonBytes);
}

TEST(RdmaExchangeTest, DoneRejectsBadCodesAndLengths) {
  absl::Status peer;
  std::string record = EncodeDone(absl::InternalError("why"));
  std::string bad_code = record;
  bad_code[12] = 99;
  ExpectInvalid(DecodeDone(bad_code, &peer), "unknown status code 99");
  std::string bad_length = record;
  bad_length[16] = 4;
  ExpectInvalid(DecodeDone(bad_length, &peer), "reason is 4 bytes but 3");
  ExpectInvalid(DecodeDone(record.substr(0, record.size() - 1), &peer),
                "header says");
}

TEST(RdmaExchangeTest, MtuConversions) {
  for (int e = 1; e <= 5; ++e) {
    EXPECT_EQ(MtuEnumFromBytes(MtuBytesFromEnum(e)), e);
  }
  EXPECT_EQ(MtuBytesFromEnum(5), 4096u);
  EXPECT_EQ(MtuBytesFromEnum(0), 0u);
  EXPECT_EQ(MtuBytesFromEnum(6), 0u);
  EXPECT_EQ(MtuEnumFromBytes(1500), 0);
}

}  // namespace
}  // namespace fleetbench::agent::rdma
