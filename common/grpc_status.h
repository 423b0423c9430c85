// common/grpc_status.h — absl::Status <-> grpc::Status. The codes are
// the same numbers by design; only the types differ.
#ifndef FLEETBENCH_COMMON_GRPC_STATUS_H_
#define FLEETBENCH_COMMON_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "common/reason.h"
#include "grpcpp/support/status.h"

namespace fleetbench {

// The message travels in a trailer, which a client refuses past its
// metadata limit (8 KiB by default) with an error that hides the real one:
// cut it to kMaxReasonLength, in case a message still quotes too much.
inline grpc::Status ToGrpcStatus(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), TruncateReason(s.message()));
}

inline absl::Status FromGrpcStatus(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

}  // namespace fleetbench

#endif  // FLEETBENCH_COMMON_GRPC_STATUS_H_
