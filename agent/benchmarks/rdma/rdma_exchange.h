// agent/benchmarks/rdma/rdma_exchange.h — the records the two ends of the
// "rdma" benchmark exchange over their TCP connection (out of band: verbs
// cannot address a queue pair before it knows the peer's).
//
// Every record is a fixed 12-byte header followed by a payload, all fields
// little-endian, no padding:
//   header   magic "FBRX" (4 bytes) | version u16 | type u16 | payload u32
//   kQueuePairInfo  48 bytes: qpn u32 | psn u32 | rkey u32 | lid u16 |
//                   mtu u16 (bytes) | addr u64 | target_bytes u64 |
//                   gid[16]
//   kReady          0 bytes  (server: my QP is in RTR/RTS, write away)
//   kLatencyPlan    12 bytes: bytes u32 | warmup u32 | iterations u32
//   kDone           8 + n bytes: code u32 (absl::StatusCode) | n u32 |
//                   reason (n <= kMaxReasonBytes bytes, not terminated)
// The sequence is in docs/rdma.md ("Exchange").
//
// Every decoder checks the whole input: a wrong magic, an unknown version or
// type, a length that is not exactly the type's, and out-of-range fields
// are INVALID_ARGUMENT with a message naming what was wrong. Pure functions,
// no state; thread-safe.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_RDMA_RDMA_EXCHANGE_H_
#define FLEETBENCH_AGENT_BENCHMARKS_RDMA_RDMA_EXCHANGE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetbench::agent::rdma {

inline constexpr char kRecordMagic[4] = {'F', 'B', 'R', 'X'};
// Bumped on any incompatible change to a record or the sequence.
inline constexpr uint16_t kExchangeVersion = 1;
inline constexpr size_t kRecordHeaderBytes = 12;
inline constexpr size_t kQueuePairInfoPayloadBytes = 48;
inline constexpr size_t kLatencyPlanPayloadBytes = 12;
inline constexpr size_t kMaxReasonBytes = 512;
// No record's payload is longer; a reader refuses a header announcing more
// before it reads a byte of the payload.
inline constexpr size_t kMaxPayloadBytes = 8 + kMaxReasonBytes;
// The first bytes of the advertised target region belong to the latency
// ping-pong; the bandwidth test writes after them, so the two never share a
// byte (docs/rdma.md, "Buffers").
inline constexpr size_t kLatencySlotBytes = 64;

enum class RecordType : uint16_t {
  kQueuePairInfo = 1,
  kReady = 2,
  kLatencyPlan = 3,
  kDone = 4,
};

// What the peer needs to address this side's RC queue pair and buffer.
struct QueuePairInfo {
  uint32_t qpn = 0;   // 24 bits, >= 2 (0 and 1 are special QPs)
  uint32_t psn = 0;   // 24 bits: the first packet sequence number we send
  uint32_t rkey = 0;  // of the memory region holding the target region
  uint16_t lid = 0;   // 0 on RoCE (Ethernet has no LIDs)
  uint16_t mtu = 0;   // the port's active MTU in bytes: 256..4096, power of 2
  uint64_t addr = 0;  // virtual address of the target region, not 0
  uint64_t target_bytes = 0;      // length of the target region, >= 1
  std::array<uint8_t, 16> gid{};  // all zero when the port has none

  friend bool operator==(const QueuePairInfo&, const QueuePairInfo&) = default;
};

struct LatencyPlan {
  uint32_t bytes = 0;       // per write, 1..kLatencySlotBytes
  uint32_t warmup = 0;      // untimed round trips first
  uint32_t iterations = 0;  // timed round trips, >= 1

  friend bool operator==(const LatencyPlan&, const LatencyPlan&) = default;
};

struct RecordHeader {
  RecordType type = RecordType::kReady;
  uint32_t payload_bytes = 0;
};

std::string EncodeQueuePairInfo(const QueuePairInfo& info);
std::string EncodeReady();
std::string EncodeLatencyPlan(const LatencyPlan& plan);
// The reason is cut to kMaxReasonBytes.
std::string EncodeDone(const absl::Status& status);

// The first kRecordHeaderBytes of a record: magic, version, a known type
// and a payload length that is exactly the type's (at most kMaxPayloadBytes
// for kDone).
absl::StatusOr<RecordHeader> DecodeRecordHeader(absl::string_view header);

// A whole record (header and payload) of the named type.
absl::StatusOr<QueuePairInfo> DecodeQueuePairInfo(absl::string_view record);
absl::Status DecodeReady(absl::string_view record);
absl::StatusOr<LatencyPlan> DecodeLatencyPlan(absl::string_view record);
// Fills *peer_status with the status the peer sent (OK for a clean
// goodbye); the return value says whether the record was well formed.
absl::Status DecodeDone(absl::string_view record, absl::Status* peer_status);

// Checks a QueuePairInfo's fields (the decoder calls it too).
absl::Status ValidateQueuePairInfo(const QueuePairInfo& info);

// MTU in bytes <-> the verbs enum value (IBV_MTU_256 = 1 .. IBV_MTU_4096 =
// 5); 0 for anything else.
int MtuEnumFromBytes(uint32_t bytes);
uint32_t MtuBytesFromEnum(int mtu_enum);

}  // namespace fleetbench::agent::rdma

#endif  // FLEETBENCH_AGENT_BENCHMARKS_RDMA_RDMA_EXCHANGE_H_
