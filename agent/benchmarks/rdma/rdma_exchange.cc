#include "agent/benchmarks/rdma/rdma_exchange.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace fleetbench::agent::rdma {
namespace {

constexpr uint32_t kMax24Bits = 0xFFFFFF;
constexpr uint32_t kMaxStatusCode = 16;  // absl::StatusCode::kUnauthenticated

// Little-endian appends and reads, byte by byte: independent of the host's
// byte order and of struct layout.
void PutLe(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
}

uint64_t GetLe(absl::string_view in, size_t offset, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= static_cast<uint64_t>(static_cast<uint8_t>(in[offset + i]))
             << (8 * i);
  }
  return value;
}

std::string Header(RecordType type, size_t payload_bytes) {
  std::string out(kRecordMagic, sizeof(kRecordMagic));
  PutLe(out, kExchangeVersion, 2);
  PutLe(out, static_cast<uint16_t>(type), 2);
  PutLe(out, payload_bytes, 4);
  return out;
}

absl::Status Bad(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("bad exchange record: ", what));
}

const char* TypeName(RecordType type) {
  switch (type) {
    case RecordType::kQueuePairInfo:
      return "queue-pair info";
    case RecordType::kReady:
      return "ready";
    case RecordType::kLatencyPlan:
      return "latency plan";
    case RecordType::kDone:
      return "done";
  }
  return "unknown";
}

// The header of `record`, which must be of type `want`, and its payload.
absl::StatusOr<absl::string_view> Payload(absl::string_view record,
                                          RecordType want) {
  if (record.size() < kRecordHeaderBytes) {
    return Bad(absl::StrCat(record.size(), " bytes, shorter than the ",
                            kRecordHeaderBytes, "-byte header"));
  }
  absl::StatusOr<RecordHeader> header =
      DecodeRecordHeader(record.substr(0, kRecordHeaderBytes));
  if (!header.ok()) return header.status();
  if (header->type != want) {
    return Bad(absl::StrCat("expected a ", TypeName(want), " record, got a ",
                            TypeName(header->type), " record"));
  }
  const size_t total = kRecordHeaderBytes + header->payload_bytes;
  if (record.size() != total) {
    return Bad(absl::StrCat(TypeName(want), " record is ", record.size(),
                            " bytes, its header says ", total));
  }
  return record.substr(kRecordHeaderBytes);
}

}  // namespace

int MtuEnumFromBytes(uint32_t bytes) {
  switch (bytes) {
    case 256:
      return 1;
    case 512:
      return 2;
    case 1024:
      return 3;
    case 2048:
      return 4;
    case 4096:
      return 5;
    default:
      return 0;
  }
}

uint32_t MtuBytesFromEnum(int mtu_enum) {
  return mtu_enum >= 1 && mtu_enum <= 5 ? 128u << mtu_enum : 0;
}

std::string EncodeQueuePairInfo(const QueuePairInfo& info) {
  std::string out =
      Header(RecordType::kQueuePairInfo, kQueuePairInfoPayloadBytes);
  PutLe(out, info.qpn, 4);
  PutLe(out, info.psn, 4);
  PutLe(out, info.rkey, 4);
  PutLe(out, info.lid, 2);
  PutLe(out, info.mtu, 2);
  PutLe(out, info.addr, 8);
  PutLe(out, info.target_bytes, 8);
  out.append(reinterpret_cast<const char*>(info.gid.data()), info.gid.size());
  return out;
}

std::string EncodeReady() { return Header(RecordType::kReady, 0); }

std::string EncodeLatencyPlan(const LatencyPlan& plan) {
  std::string out = Header(RecordType::kLatencyPlan, kLatencyPlanPayloadBytes);
  PutLe(out, plan.bytes, 4);
  PutLe(out, plan.warmup, 4);
  PutLe(out, plan.iterations, 4);
  return out;
}

std::string EncodeDone(const absl::Status& status) {
  const absl::string_view reason = status.message().substr(
      0, std::min(status.message().size(), kMaxReasonBytes));
  std::string out = Header(RecordType::kDone, 8 + reason.size());
  PutLe(out, static_cast<uint32_t>(status.code()), 4);
  PutLe(out, reason.size(), 4);
  out.append(reason.data(), reason.size());
  return out;
}

absl::StatusOr<RecordHeader> DecodeRecordHeader(absl::string_view header) {
  if (header.size() != kRecordHeaderBytes) {
    return Bad(absl::StrCat("header is ", header.size(), " bytes, not ",
                            kRecordHeaderBytes));
  }
  if (std::memcmp(header.data(), kRecordMagic, sizeof(kRecordMagic)) != 0) {
    return Bad(
        absl::StrCat("magic is '", absl::CHexEscape(header.substr(0, 4)),
                     "', not 'FBRX' (is the peer a fleetbench rdma agent?)"));
  }
  const uint64_t version = GetLe(header, 4, 2);
  if (version != kExchangeVersion) {
    return Bad(absl::StrCat("the peer speaks exchange version ", version,
                            ", this agent ", kExchangeVersion,
                            "; run the same fleetbench release on both nodes"));
  }
  const uint64_t type = GetLe(header, 6, 2);
  const uint64_t payload = GetLe(header, 8, 4);
  RecordHeader out;
  out.payload_bytes = static_cast<uint32_t>(payload);
  size_t want = 0;
  switch (type) {
    case static_cast<uint16_t>(RecordType::kQueuePairInfo):
      out.type = RecordType::kQueuePairInfo;
      want = kQueuePairInfoPayloadBytes;
      break;
    case static_cast<uint16_t>(RecordType::kReady):
      out.type = RecordType::kReady;
      want = 0;
      break;
    case static_cast<uint16_t>(RecordType::kLatencyPlan):
      out.type = RecordType::kLatencyPlan;
      want = kLatencyPlanPayloadBytes;
      break;
    case static_cast<uint16_t>(RecordType::kDone):
      out.type = RecordType::kDone;
      if (payload < 8 || payload > kMaxPayloadBytes) {
        return Bad(absl::StrCat("done record announces ", payload,
                                " payload bytes, want 8..", kMaxPayloadBytes));
      }
      return out;
    default:
      return Bad(absl::StrCat("unknown record type ", type));
  }
  if (payload != want) {
    return Bad(absl::StrCat(TypeName(out.type), " record announces ", payload,
                            " payload bytes, want ", want));
  }
  return out;
}

absl::Status ValidateQueuePairInfo(const QueuePairInfo& info) {
  if (info.qpn < 2 || info.qpn > kMax24Bits) {
    return Bad(absl::StrCat("queue pair number ", info.qpn,
                            " is outside 2..0xFFFFFF"));
  }
  if (info.psn > kMax24Bits) {
    return Bad(absl::StrCat("packet sequence number ", info.psn,
                            " does not fit in 24 bits"));
  }
  if (MtuEnumFromBytes(info.mtu) == 0) {
    return Bad(absl::StrCat("MTU ", info.mtu,
                            " is not one of 256, 512, 1024, 2048, 4096"));
  }
  if (info.addr == 0) return Bad("remote buffer address is 0");
  if (info.target_bytes == 0) return Bad("remote buffer length is 0");
  if (info.addr + info.target_bytes < info.addr) {
    return Bad("remote buffer wraps around the address space");
  }
  return absl::OkStatus();
}

absl::StatusOr<QueuePairInfo> DecodeQueuePairInfo(absl::string_view record) {
  absl::StatusOr<absl::string_view> p =
      Payload(record, RecordType::kQueuePairInfo);
  if (!p.ok()) return p.status();
  QueuePairInfo info;
  info.qpn = static_cast<uint32_t>(GetLe(*p, 0, 4));
  info.psn = static_cast<uint32_t>(GetLe(*p, 4, 4));
  info.rkey = static_cast<uint32_t>(GetLe(*p, 8, 4));
  info.lid = static_cast<uint16_t>(GetLe(*p, 12, 2));
  info.mtu = static_cast<uint16_t>(GetLe(*p, 14, 2));
  info.addr = GetLe(*p, 16, 8);
  info.target_bytes = GetLe(*p, 24, 8);
  std::memcpy(info.gid.data(), p->data() + 32, info.gid.size());
  if (absl::Status s = ValidateQueuePairInfo(info); !s.ok()) return s;
  return info;
}

absl::Status DecodeReady(absl::string_view record) {
  return Payload(record, RecordType::kReady).status();
}

absl::StatusOr<LatencyPlan> DecodeLatencyPlan(absl::string_view record) {
  absl::StatusOr<absl::string_view> p =
      Payload(record, RecordType::kLatencyPlan);
  if (!p.ok()) return p.status();
  LatencyPlan plan;
  plan.bytes = static_cast<uint32_t>(GetLe(*p, 0, 4));
  plan.warmup = static_cast<uint32_t>(GetLe(*p, 4, 4));
  plan.iterations = static_cast<uint32_t>(GetLe(*p, 8, 4));
  if (plan.bytes < 1 || plan.bytes > kLatencySlotBytes) {
    return Bad(absl::StrCat("latency write of ", plan.bytes,
                            " bytes is outside 1..", kLatencySlotBytes));
  }
  if (plan.iterations < 1) return Bad("latency plan has no iterations");
  return plan;
}

absl::Status DecodeDone(absl::string_view record, absl::Status* peer_status) {
  absl::StatusOr<absl::string_view> p = Payload(record, RecordType::kDone);
  if (!p.ok()) return p.status();
  const uint64_t code = GetLe(*p, 0, 4);
  const uint64_t reason_bytes = GetLe(*p, 4, 4);
  if (code > kMaxStatusCode) {
    return Bad(absl::StrCat("done record carries unknown status code ", code));
  }
  if (8 + reason_bytes != p->size()) {
    return Bad(absl::StrCat("done record's reason is ", reason_bytes,
                            " bytes but ", p->size() - 8, " follow"));
  }
  *peer_status = code == 0 ? absl::OkStatus()
                           : absl::Status(static_cast<absl::StatusCode>(code),
                                          std::string(p->substr(8)));
  return absl::OkStatus();
}

}  // namespace fleetbench::agent::rdma
