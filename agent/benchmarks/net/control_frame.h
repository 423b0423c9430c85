// agent/benchmarks/net/control_frame.h — the framed messages the two ends
// of the "net" benchmark exchange on their control connection (and once at
// the start of every data connection, to say which test and stream it is).
//
// Wire format: a 4-byte big-endian payload length, then the payload: the
// verb on the first line, then one "key=value" per line. At most
// kMaxFramePayload bytes; newlines in values are sent as spaces. Text, so a
// capture is readable and both ends are easy to test. The message
// sequence is in docs/network.md ("Control protocol").
//
// Pure encode/decode plus two socket helpers; no state, thread-compatible.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_NET_CONTROL_FRAME_H_
#define FLEETBENCH_AGENT_BENCHMARKS_NET_CONTROL_FRAME_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/benchmarks/pairwise/tcp_socket.h"

namespace fleetbench::agent::net {

inline constexpr uint32_t kMaxFramePayload = 4096;

struct ControlMessage {
  std::string verb;
  std::map<std::string, std::string> fields;

  ControlMessage() = default;
  explicit ControlMessage(std::string v) : verb(std::move(v)) {}
  ControlMessage& Set(const std::string& key, const std::string& value) {
    fields[key] = value;
    return *this;
  }
  // "" when absent.
  std::string Get(const std::string& key) const;
  // INVALID_ARGUMENT when absent or not an integer.
  absl::StatusOr<int64_t> Int(const std::string& key) const;
};

// Length prefix plus payload.
std::string EncodeFrame(const ControlMessage& message);
// The payload (without the length prefix). INVALID_ARGUMENT when there is
// no verb or a line has no '='.
absl::StatusOr<ControlMessage> DecodePayload(absl::string_view payload);

absl::Status SendMessage(int fd, const ControlMessage& message,
                         pairwise::Deadline deadline,
                         const pairwise::CancelFn& cancelled);
// Reads exactly one frame, never past it (a data connection's bytes follow
// its hello frame). UNAVAILABLE when the peer closed, INVALID_ARGUMENT for
// an oversized or malformed frame.
absl::StatusOr<ControlMessage> RecvMessage(int fd, pairwise::Deadline deadline,
                                           const pairwise::CancelFn& cancelled);

}  // namespace fleetbench::agent::net

#endif  // FLEETBENCH_AGENT_BENCHMARKS_NET_CONTROL_FRAME_H_
