// controller/auth.h — checks the bearer token on every incoming call.
#ifndef FLEETBENCH_CONTROLLER_AUTH_H_
#define FLEETBENCH_CONTROLLER_AUTH_H_

#include <string>

#include "grpcpp/server_context.h"

namespace fleetbench::controller {

// OK when the call carries "authorization: Bearer <expected>"; otherwise
// UNAUTHENTICATED with a message that says what to set.
grpc::Status CheckBearerToken(const grpc::ServerContextBase& context,
                              const std::string& expected);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_AUTH_H_
