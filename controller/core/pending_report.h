// controller/core/pending_report.h — a report as the core's actor takes it
// from an agent's stream: the link to acknowledge it on, the node it is
// resolved to (on the actor, where the sessions live), the report, and
// what the bounds refused of it. Plain data, moved from part to part.
#ifndef FLEETBENCH_CONTROLLER_CORE_PENDING_REPORT_H_
#define FLEETBENCH_CONTROLLER_CORE_PENDING_REPORT_H_

#include <memory>
#include <string>

#include "controller/core/agent_link.h"
#include "fleetbench/v1/agent.pb.h"

namespace fleetbench::controller {

struct PendingReport {
  std::shared_ptr<AgentLink> link;
  std::string node;
  v1::Report report;
  // What the bounds refused of it ("" when nothing), for the ack.
  std::string refused;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_PENDING_REPORT_H_
