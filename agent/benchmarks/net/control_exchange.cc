#include "agent/benchmarks/net/control_exchange.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fleetbench::agent::net {

using ::fleetbench::agent::pairwise::CancelFn;
using ::fleetbench::agent::pairwise::Deadline;
using ::fleetbench::agent::pairwise::DeadlineIn;
using ::fleetbench::agent::pairwise::WaitReadable;

namespace {

ControlMessage ErrorMessage(const absl::Status& status) {
  ControlMessage m("ERROR");
  m.Set("code", absl::StrCat(static_cast<int>(status.code())));
  m.Set("message", std::string(status.message()));
  return m;
}

}  // namespace

absl::Status FromPeerError(const ControlMessage& message,
                           const std::string& peer) {
  int code = static_cast<int>(absl::StatusCode::kAborted);
  absl::SimpleAtoi(message.Get("code"), &code);
  if (code <= 0 ||
      code > static_cast<int>(absl::StatusCode::kUnauthenticated) ||
      code == static_cast<int>(absl::StatusCode::kCancelled)) {
    code = static_cast<int>(absl::StatusCode::kAborted);
  }
  return absl::Status(
      static_cast<absl::StatusCode>(code),
      absl::StrCat("net: peer ", peer, " stopped: ", message.Get("message")));
}

void SendErrorBestEffort(int fd, const absl::Status& status) {
  SendMessage(fd, ErrorMessage(status), DeadlineIn(1), nullptr).IgnoreError();
}

absl::Status Annotate(const absl::Status& status, absl::string_view what) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat("net: ", what, ": ", status.message()));
}

absl::StatusOr<ControlMessage> Expect(int fd, const std::string& verb,
                                      Deadline deadline,
                                      const CancelFn& cancelled,
                                      const std::string& peer) {
  absl::StatusOr<ControlMessage> m = RecvMessage(fd, deadline, cancelled);
  if (!m.ok()) {
    return Annotate(m.status(),
                    absl::StrCat("waiting for ", verb, " from ", peer));
  }
  if (m->verb == "ERROR") return FromPeerError(*m, peer);
  if (m->verb != verb) {
    return absl::InternalError(absl::StrCat(
        "net: protocol error: ", peer, " sent ", m->verb, ", expected ", verb));
  }
  return m;
}

absl::Status QuietUntil(int fd, Deadline until, const CancelFn& cancelled,
                        const std::string& peer) {
  absl::Status waited = WaitReadable(fd, until, cancelled);
  if (absl::IsDeadlineExceeded(waited)) return absl::OkStatus();
  if (!waited.ok()) return waited;
  absl::StatusOr<ControlMessage> m = RecvMessage(fd, DeadlineIn(1), cancelled);
  if (!m.ok()) {
    return Annotate(m.status(), absl::StrCat("control connection to ", peer));
  }
  if (m->verb == "ERROR") return FromPeerError(*m, peer);
  return absl::InternalError(absl::StrCat("net: protocol error: ", peer,
                                          " sent ", m->verb,
                                          " during a measurement"));
}

}  // namespace fleetbench::agent::net
