// controller/grpc_status.h — absl::Status <-> grpc::Status. The codes are
// the same numbers by design; only the types differ.
#ifndef FLEETBENCH_CONTROLLER_GRPC_STATUS_H_
#define FLEETBENCH_CONTROLLER_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace fleetbench {

inline grpc::Status ToGrpcStatus(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

inline absl::Status FromGrpcStatus(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

}  // namespace fleetbench

#endif  // FLEETBENCH_CONTROLLER_GRPC_STATUS_H_
