// NodeSessions: the sessions of the nodes this controller hears from.
#include "controller/core/node_sessions.h"

#include <algorithm>
#include <utility>

#include "common/logging.h"

namespace fleetbench::controller {

const NodeSessions::Session& NodeSessions::Open(std::shared_ptr<AgentLink> link,
                                                const v1::Hello& hello,
                                                const std::string& peer_host, absl::Time now) {
  Session& session = sessions_[hello.name()];
  if (session.link && session.link != link) {
    // The same node connected again (a restart, a new network path): the
    // newest stream wins.
    session.link->Close();
  }
  session.link = std::move(link);
  session.online = true;
  session.last_seen = now;
  session.expected_until = absl::InfinitePast();
  session.labels.clear();
  for (const auto& [k, v] : hello.labels()) session.labels[k] = v;
  session.facts = hello.facts();
  session.agent_version = hello.agent_version();
  session.capabilities.assign(hello.capabilities().begin(), hello.capabilities().end());
  session.address = hello.advertise_addr().empty() ? peer_host : hello.advertise_addr();
  return session;
}

void NodeSessions::ExpectBack(const std::string& node, absl::Time now,
                              absl::Duration within) {
  if (sessions_.contains(node)) return;
  Session& s = sessions_[node];
  s.last_seen = now;
  s.online = false;
  s.expected_until = now + within;
}

std::string NodeSessions::NodeOf(const std::shared_ptr<AgentLink>& link) const {
  for (const auto& [name, session] : sessions_) {
    if (session.link == link) return name;
  }
  return "";
}

bool NodeSessions::Heard(const std::string& node, absl::Time now) {
  // Only a node with a session: a name must never make one (it would have
  // no hello, no labels and no link).
  auto it = sessions_.find(node);
  if (it == sessions_.end()) return false;
  Session& session = it->second;
  session.last_seen = now;
  if (session.online) return false;
  session.online = true;
  return true;
}

void NodeSessions::Touch(const std::string& node, absl::Time now) {
  if (auto it = sessions_.find(node); it != sessions_.end()) it->second.last_seen = now;
}

void NodeSessions::DropLink(const std::string& node) {
  if (auto it = sessions_.find(node); it != sessions_.end()) it->second.link.reset();
}

bool NodeSessions::MarkDeparting(const std::string& node, const std::string& key) {
  auto it = sessions_.find(node);
  if (it == sessions_.end()) return false;
  it->second.departing = true;
  it->second.departure_key = key;
  return true;
}

const NodeSessions::Session* NodeSessions::Find(const std::string& node) const {
  auto it = sessions_.find(node);
  return it == sessions_.end() ? nullptr : &it->second;
}

bool NodeSessions::Online(const std::string& node) const {
  const Session* s = Find(node);
  return s != nullptr && s->online;
}

bool NodeSessions::Reachable(const std::string& node) const {
  const Session* s = Find(node);
  return s != nullptr && s->online && !s->departing && s->link != nullptr;
}

bool NodeSessions::Send(const std::string& node, const v1::ControllerMessage& message) const {
  const Session* s = Find(node);
  if (s == nullptr || !s->link) return false;
  s->link->Send(message);
  return true;
}

std::vector<std::string> NodeSessions::OnlineNodes() const {
  std::vector<std::string> nodes;
  for (const auto& [name, s] : sessions_) {
    if (s.online && !s.departing) nodes.push_back(name);
  }
  return nodes;
}

std::set<std::string> NodeSessions::DeclaredBenchmarks(bool pairwise_only) const {
  std::set<std::string> names;
  for (const auto& [name, s] : sessions_) {
    for (const v1::Capability& c : s.capabilities) {
      if (!pairwise_only || c.pairwise()) names.insert(c.benchmark());
    }
  }
  return names;
}

std::vector<NodeSessions::Silent> NodeSessions::Sweep(absl::Time now) {
  std::vector<Silent> silent;
  for (auto& [name, session] : sessions_) {
    if (now - session.last_seen <= heartbeat_timeout_ || now <= session.expected_until) continue;
    const bool was_online = session.online;
    session.online = false;
    if (session.link) {
      session.link->Close();
      session.link.reset();
    }
    if (was_online) LOG(WARNING) << "node " << name << " offline (heartbeat timeout)";
    silent.push_back(
        {name, now - session.last_seen, session.last_seen, was_online, session.departing});
    session.departing = false;
  }
  return silent;
}

int NodeSessions::online_count() const {
  return static_cast<int>(std::count_if(sessions_.begin(), sessions_.end(),
                                        [](const auto& s) { return s.second.online; }));
}

}  // namespace fleetbench::controller
