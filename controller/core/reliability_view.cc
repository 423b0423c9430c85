#include "controller/core/reliability_view.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/core/caller_deadline.h"
#include "common/api_enums.h"
#include "controller/ranking/ranking.h"
#include "controller/ranking/reliability_table.h"

namespace fleetbench::controller {

absl::StatusOr<v1::ReliabilityResponse> ReliabilityView::Reliability(
    const v1::ReliabilityRequest& request, absl::Time deadline) const {
  if (absl::Status s = CheckRankGrouping(request.by()); !s.ok()) return s;
  if (request.window_ms() < 0) {
    return absl::InvalidArgumentError("reliability: the window must not be negative");
  }
  const absl::Duration window =
      request.window_ms() == 0 ? kReliabilityWindow : absl::Milliseconds(request.window_ms());
  if (window > absl::Hours(24 * 365)) {
    return absl::InvalidArgumentError("reliability: the window is longer than 365 days");
  }
  ReliabilityOptions options;
  if (request.min_node_hours() != 0) options.min_node_hours = request.min_node_hours();
  if (!std::isfinite(options.min_node_hours) || options.min_node_hours < 0) {
    return absl::InvalidArgumentError(
        "reliability: --min-node-hours must be a number of 0 or more");
  }
  if (request.list_limit() > kMaxListedInterruptions) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reliability: list at most ", kMaxListedInterruptions, " interruptions"));
  }
  const absl::Time since = clock_->Now() - window;

  auto uptime = store_->UptimeSince(storage::UtcDayOf(absl::ToUnixMillis(since)));
  if (!uptime.ok()) return uptime.status();
  auto counts = store_->InterruptionCountsSince(since);
  if (!counts.ok()) return counts.status();
  auto stored = store_->ListNodes();
  if (!stored.ok()) return stored.status();
  if (absl::Now() >= deadline) return CallerDeadlinePassed();

  std::map<std::string, NodeReliability> nodes;
  for (const auto& [node, ms] : *uptime) {
    NodeReliability& n = nodes[node];
    n.node = node;
    n.node_hours = static_cast<double>(ms) / 3.6e6;
  }
  for (const auto& [node, kinds] : *counts) {
    NodeReliability& n = nodes[node];
    n.node = node;
    for (const auto& [kind, count] : kinds) n.interruptions[InterruptionKindOf(kind)] += count;
  }
  for (const storage::NodeRecord& record : *stored) {
    if (auto it = nodes.find(record.name); it != nodes.end()) it->second.labels = record.labels;
  }
  std::vector<NodeReliability> input;
  input.reserve(nodes.size());
  for (const auto& [name, n] : nodes) input.push_back(n);

  auto groups = GroupReliability(input, request.by(), options);
  if (!groups.ok()) return groups.status();
  v1::ReliabilityResponse out;
  out.set_by(request.by() == v1::RANK_GROUPING_UNSPECIFIED ? v1::RANK_GROUPING_NODE
                                                           : request.by());
  out.set_window_ms(absl::ToInt64Milliseconds(window));
  out.set_confidence(options.confidence);
  out.set_min_node_hours(options.min_node_hours);
  for (v1::ReliabilityGroup& g : *groups) *out.add_groups() = std::move(g);
  if (request.list_limit() > 0) {
    auto listed = store_->InterruptionsSince(since, static_cast<int>(request.list_limit()));
    if (!listed.ok()) return listed.status();
    for (const storage::InterruptionRecord& r : *listed) {
      v1::Interruption* i = out.add_interruptions();
      i->set_node(r.node);
      auto node = nodes.find(r.node);
      i->set_group(node == nodes.end() ? r.node : ReliabilityGroupOf(node->second, out.by()));
      i->set_time_unix_ms(absl::ToUnixMillis(r.time));
      i->set_kind(InterruptionKindOf(r.kind));
      i->set_detail(r.detail);
    }
  }
  return out;
}

}  // namespace fleetbench::controller
