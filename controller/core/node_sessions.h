// controller/core/node_sessions.h — the nodes this controller hears from:
// one session per node name with its current stream (link), when it was
// last heard, whether it counts as online, and what its last hello said
// (labels, facts, agent version, capabilities, the address peers dial).
//
// Rules:
// - The newest stream of a node wins: a hello on a new link closes the
//   old one.
// - A disconnect drops only the link: the node stays online until the
//   heartbeat timeout, so a quick reconnect keeps its running task.
// - A node silent past the heartbeat timeout goes offline and its link is
//   closed (Sweep).
// - A node departing (its provider's preemption notice, its identity
//   revoked) gets no new work: it is neither reachable nor among the
//   online nodes, though its link still carries its running task. A
//   reconnect within the heartbeat timeout keeps it departing; once it has
//   gone silent past the timeout (it left, as announced) a later hello is
//   a new start.
// Knows nothing of tasks or runs: what a node going away means for its
// tasks is the caller's (FleetCore ends them).
//
// Threading: the core's actor thread only.
#ifndef FLEETBENCH_CONTROLLER_CORE_NODE_SESSIONS_H_
#define FLEETBENCH_CONTROLLER_CORE_NODE_SESSIONS_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "controller/core/agent_link.h"
#include "fleetbench/v1/agent.pb.h"
#include "fleetbench/v1/node.pb.h"

namespace fleetbench::controller {

class NodeSessions {
 public:
  struct Session {
    std::shared_ptr<AgentLink> link;  // null while disconnected
    absl::Time last_seen;
    bool online = false;
    std::map<std::string, std::string> labels;
    v1::NodeFacts facts;
    std::string agent_version;
    std::vector<v1::Capability> capabilities;
    std::string address;  // where peers dial it (pairwise benchmarks, groups)
    bool departing = false;
    // What the last announced departure was (a preemption notice's key):
    // kept across hellos, so the same notice sent again after a reconnect
    // is known.
    std::string departure_key;
    // Not swept before this (ExpectBack); a hello clears it.
    absl::Time expected_until = absl::InfinitePast();
  };

  explicit NodeSessions(absl::Duration heartbeat_timeout)
      : heartbeat_timeout_(heartbeat_timeout) {}

  // A hello on `link`: opens the node's session, or replaces it (closing an
  // older link). The address is the hello's advertised one, else
  // `peer_host`, where the stream came from.
  const Session& Open(std::shared_ptr<AgentLink> link, const v1::Hello& hello,
                      const std::string& peer_host, absl::Time now);
  // After a controller restart: a node whose task was in flight is known,
  // offline, and not swept before `now + within` (its agent's backoff may
  // have grown while the controller was away). No change to a node already
  // known.
  void ExpectBack(const std::string& node, absl::Time now, absl::Duration within);

  // The node behind a link, or "" when the link is not a node's current
  // stream (a replaced or unauthenticated one).
  std::string NodeOf(const std::shared_ptr<AgentLink>& link) const;
  // `node` (known) was heard at `now`. Heard also counts it online again
  // and says whether it was offline; Touch only moves last_seen. A node
  // without a session is left alone.
  bool Heard(const std::string& node, absl::Time now);
  void Touch(const std::string& node, absl::Time now);
  // The node's stream ended; the session stays.
  void DropLink(const std::string& node);
  // The node is going away for a known reason, `key` naming the occasion;
  // false without a session.
  bool MarkDeparting(const std::string& node, const std::string& key);

  const Session* Find(const std::string& node) const;
  bool Online(const std::string& node) const;
  // Online, not departing and with a stream to send on: may take work.
  bool Reachable(const std::string& node) const;
  // Sends on the node's current stream; false when it has none.
  bool Send(const std::string& node, const v1::ControllerMessage& message) const;
  // The online nodes that may take work (not departing), by name.
  std::vector<std::string> OnlineNodes() const;
  // The benchmarks some node's hello declared (only those declared
  // pairwise, with `pairwise_only`), online or not.
  std::set<std::string> DeclaredBenchmarks(bool pairwise_only) const;

  // Nodes silent past the heartbeat timeout at `now`, offline or not:
  // each is now offline with its link closed (logged when it was online)
  // and no longer departing (its departure happened).
  struct Silent {
    std::string node;
    absl::Duration silent_for;
    absl::Time last_seen;
    bool was_online = false;  // went offline in this sweep
    bool departing = false;   // its going away was announced
  };
  std::vector<Silent> Sweep(absl::Time now);
  int online_count() const;

  // Forgets the node (it was taken out of the fleet).
  void Remove(const std::string& node) { sessions_.erase(node); }
  const std::map<std::string, Session>& all() const { return sessions_; }

 private:
  const absl::Duration heartbeat_timeout_;
  std::map<std::string, Session> sessions_;
};

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_CORE_NODE_SESSIONS_H_
