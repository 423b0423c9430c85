// controller/api/agent_gateway_service.h — the AgentGateway gRPC service: one
// bidirectional stream per agent, served with the callback API so that a
// thousand idle agents cost no threads. Thin: authentication and bounds on
// the hello here, everything else in FleetCore.
#ifndef FLEETBENCH_CONTROLLER_API_AGENT_GATEWAY_SERVICE_H_
#define FLEETBENCH_CONTROLLER_API_AGENT_GATEWAY_SERVICE_H_

#include <string>

#include "controller/security/auth.h"
#include "controller/core/fleet_core.h"
#include "fleetbench/v1/agent_service.grpc.pb.h"

namespace fleetbench::controller {

class NodeIdentities;

class AgentGatewayService final : public v1::AgentGateway::CallbackService {
 public:
  // Both must outlive the service.
  AgentGatewayService(FleetCore* core, const Authenticator* authenticator)
      : core_(core), authenticator_(authenticator) {}

  // Node identities (docs/security.md); null on a controller run --insecure,
  // where nodes connect by token only. Must outlive the service.
  void set_identities(NodeIdentities* identities) { identities_ = identities; }

  grpc::ServerBidiReactor<v1::AgentMessage, v1::ControllerMessage>* Connect(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* Enroll(grpc::CallbackServerContext* context,
                                   const v1::EnrollRequest* request,
                                   v1::EnrollResponse* response) override;
  // Authenticated by the peer's certificate alone (docs/security.md).
  grpc::ServerUnaryReactor* Renew(grpc::CallbackServerContext* context,
                                  const v1::RenewRequest* request,
                                  v1::RenewResponse* response) override;

 private:
  FleetCore* const core_;
  const Authenticator* const authenticator_;
  NodeIdentities* identities_ = nullptr;
};

// The host part of grpc's peer string, "" when it has none (unix sockets).
std::string HostOfGrpcPeer(const std::string& peer);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_API_AGENT_GATEWAY_SERVICE_H_
