// controller/core/agent_link.h — the core's handle on one connected agent
// stream (the gRPC service implements it over its reactor). Implementations
// queue the message for writing and never block; Send after the stream has
// ended is a no-op. Any thread.
#ifndef FLEETBENCH_CONTROLLER_CORE_AGENT_LINK_H_
#define FLEETBENCH_CONTROLLER_CORE_AGENT_LINK_H_

#include "fleetbench/v1/agent.pb.h"

namespace fleetbench::controller {

class AgentLink {
 public:
  virtual ~AgentLink() = default;
  virtual void Send(const v1::ControllerMessage& message) = 0;
  // Ends the stream (a newer connection of the same node replaced it).
  virtual void Close() = 0;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_AGENT_LINK_H_
