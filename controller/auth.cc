#include "controller/auth.h"

#include "common/token.h"

namespace fleetbench::controller {

grpc::Status CheckBearerToken(const grpc::ServerContextBase& context,
                              const std::string& expected) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kAuthMetadataKey);
  if (it == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "missing token: set FLEETBENCH_TOKEN or pass --token-file");
  }
  const std::string header(it->second.data(), it->second.size());
  if (!TokenMatches(expected, TokenFromAuthorizationHeader(header))) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "wrong token");
  }
  return grpc::Status::OK;
}

}  // namespace fleetbench::controller
