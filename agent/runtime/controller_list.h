// agent/runtime/controller_list.h — which controller the agent dials next
// when it knows several: a leader and its standbys on one PostgreSQL
// history (docs/operations.md). A standby does not listen until it leads,
// so a dial to it fails at once and the agent goes on.
//
// Contract: the first dial goes to the first address. A session that was
// welcomed and then ended is dialled again at the same address, after the
// backoff (a restart of that controller is the common case). A dial that
// was not welcomed goes on to the next address at once; only a whole round
// in which no address welcomed the agent waits for the backoff, so with
// one address every failed dial waits, as before there were several.
//
// Pure: the agent's dial loop reports how each session went. Not
// thread-safe; the dial loop owns it.
#ifndef FLEETBENCH_AGENT_RUNTIME_CONTROLLER_LIST_H_
#define FLEETBENCH_AGENT_RUNTIME_CONTROLLER_LIST_H_

#include <cstddef>
#include <string>
#include <vector>

namespace fleetbench::agent {

class ControllerList {
 public:
  // `addresses`: HOST:PORT each, checked and not empty (the CLI's job).
  explicit ControllerList(std::vector<std::string> addresses);

  // The address to dial now.
  const std::string& current() const { return addresses_[current_]; }

  // A session at current() ended, `welcomed` or not. Returns true when the
  // next dial waits for the backoff, false when it goes at once (to the
  // next address).
  bool SessionEnded(bool welcomed);

 private:
  std::vector<std::string> addresses_;
  size_t current_ = 0;
  size_t unanswered_ = 0;  // dials not welcomed in this round
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_RUNTIME_CONTROLLER_LIST_H_
