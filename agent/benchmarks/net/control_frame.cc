#include "agent/benchmarks/net/control_frame.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fleetbench::agent::net {

using ::fleetbench::agent::pairwise::CancelFn;
using ::fleetbench::agent::pairwise::Deadline;
using ::fleetbench::agent::pairwise::RecvExact;
using ::fleetbench::agent::pairwise::SendAll;

namespace {

std::string OneLine(absl::string_view text) {
  std::string out(text);
  std::replace(out.begin(), out.end(), '\n', ' ');
  std::replace(out.begin(), out.end(), '\r', ' ');
  return out;
}

}  // namespace

std::string ControlMessage::Get(const std::string& key) const {
  auto it = fields.find(key);
  return it == fields.end() ? std::string() : it->second;
}

absl::StatusOr<int64_t> ControlMessage::Int(const std::string& key) const {
  auto it = fields.find(key);
  int64_t value = 0;
  if (it == fields.end() || !absl::SimpleAtoi(it->second, &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("control message ", verb, ": field '", key,
                     "' is missing or not an integer"));
  }
  return value;
}

std::string EncodeFrame(const ControlMessage& message) {
  std::string payload = OneLine(message.verb);
  for (const auto& [key, value] : message.fields) {
    absl::StrAppend(&payload, "\n", OneLine(key), "=", OneLine(value));
  }
  if (payload.size() > kMaxFramePayload) payload.resize(kMaxFramePayload);
  const uint32_t n = static_cast<uint32_t>(payload.size());
  std::string frame(4, '\0');
  frame[0] = static_cast<char>((n >> 24) & 0xff);
  frame[1] = static_cast<char>((n >> 16) & 0xff);
  frame[2] = static_cast<char>((n >> 8) & 0xff);
  frame[3] = static_cast<char>(n & 0xff);
  return frame + payload;
}

absl::StatusOr<ControlMessage> DecodePayload(absl::string_view payload) {
  ControlMessage message;
  bool first = true;
  for (absl::string_view line : absl::StrSplit(payload, '\n')) {
    if (first) {
      if (line.empty()) {
        return absl::InvalidArgumentError("control message has no verb");
      }
      message.verb = std::string(line);
      first = false;
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "control message ", message.verb, ": bad line '", line, "'"));
    }
    message.fields[std::string(line.substr(0, eq))] =
        std::string(line.substr(eq + 1));
  }
  return message;
}

absl::Status SendMessage(int fd, const ControlMessage& message,
                         Deadline deadline, const CancelFn& cancelled) {
  const std::string frame = EncodeFrame(message);
  return SendAll(fd, frame.data(), frame.size(), deadline, cancelled);
}

absl::StatusOr<ControlMessage> RecvMessage(int fd, Deadline deadline,
                                           const CancelFn& cancelled) {
  unsigned char header[4];
  if (absl::Status s =
          RecvExact(fd, header, sizeof(header), deadline, cancelled);
      !s.ok()) {
    return s;
  }
  const uint32_t n = (uint32_t{header[0]} << 24) | (uint32_t{header[1]} << 16) |
                     (uint32_t{header[2]} << 8) | uint32_t{header[3]};
  if (n == 0 || n > kMaxFramePayload) {
    return absl::InvalidArgumentError(
        absl::StrCat("control frame of ", n, " bytes (allowed 1..",
                     kMaxFramePayload, "): not a fleetbench net peer"));
  }
  std::string payload(n, '\0');
  if (absl::Status s = RecvExact(fd, payload.data(), n, deadline, cancelled);
      !s.ok()) {
    return s;
  }
  return DecodePayload(payload);
}

}  // namespace fleetbench::agent::net
