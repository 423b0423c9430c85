// fleetbench reliability --by node|instance_type|region|provider: how often
// each group's nodes were interrupted per node-hour they were online, with
// the interval, the implied MTBF and the repeat offenders
// (docs/reliability.md).
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/args.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "cli/usage.h"
#include "common/api_enums.h"
#include "common/proto_json.h"
#include "fleetbench/v1/fleet_service.grpc.pb.h"
#include "fleetbench/v1/reliability.pb.h"

namespace fleetbench::cli {
namespace {

std::string ByKindText(const v1::ReliabilityGroup& g) {
  std::vector<std::string> parts;
  for (const v1::InterruptionCount& c : g.by_kind()) {
    parts.push_back(absl::StrCat(InterruptionKindName(c.kind()), " ", c.count()));
  }
  return parts.empty() ? "-" : absl::StrJoin(parts, ", ");
}

}  // namespace

int ReliabilityCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {
      {"by", true, false, "node, instance_type, region or provider (default node)"},
      WindowFlag("30 days"),
      {"min-node-hours", true, false,
       "below this many node-hours a group reads \"not enough data\" (default 24)"},
      kJsonFlag};
  int code = 0;
  auto p = Prepare("reliability", argv, flags, 0, &code);
  if (!p) return code;
  v1::ReliabilityRequest request;
  absl::StatusOr<v1::RankGrouping> by = ParseRankGrouping(p->args.Get("by", "node"));
  if (!by.ok()) return Usage("reliability", "--" + std::string(by.status().message()), flags);
  request.set_by(*by);
  absl::StatusOr<int64_t> window_ms = WindowMillis(p->args);
  if (!window_ms.ok()) {
    return Usage("reliability", std::string(window_ms.status().message()), flags);
  }
  request.set_window_ms(*window_ms);
  if (p->args.Has("min-node-hours")) {
    double hours = 0;
    if (!absl::SimpleAtod(p->args.Get("min-node-hours"), &hours) || !(hours > 0) ||
        hours > 1e9) {
      return Usage("reliability", "--min-node-hours wants a number of hours above 0", flags);
    }
    request.set_min_node_hours(hours);
  }
  v1::ReliabilityResponse response;
  if (absl::Status s = p->client->Call(&v1::Fleet::Stub::Reliability, request, &response);
      !s.ok()) {
    return RemoteError("reliability", s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  constexpr int64_t kDayMs = 24 * 3600 * 1000;
  const std::string window =
      response.window_ms() % kDayMs == 0
          ? absl::StrCat(response.window_ms() / kDayMs, " days")
          : absl::FormatDuration(absl::Milliseconds(response.window_ms()));
  std::cout << "interruptions by " << RankGroupingName(response.by()) << " over the last "
            << window << ", per 1,000 "
            << "node-hours online (" << absl::StrFormat("%.0f%%", 100 * response.confidence())
            << " interval: exact Poisson)\n";
  if (response.groups().empty()) {
    std::cout << "no node was online in the window\n";
    return kExitOk;
  }
  Table table({"#", absl::AsciiStrToUpper(RankGroupingName(response.by())), "NODES",
               "NODE_HOURS", "INTERRUPTIONS", "BY_KIND", "PER_1000_NODE_H", "INTERVAL",
               "MTBF_H", "LEMONS"});
  std::vector<std::string> lemons;
  int rank = 0;
  for (const v1::ReliabilityGroup& g : response.groups()) {
    std::vector<std::string> names;
    for (const v1::LemonNode& l : g.lemons()) {
      names.push_back(l.node());
      lemons.push_back(absl::StrFormat(
          "  %s (%s): %d interruptions in %s node-hours where its peers' rate gives %s "
          "(p = %.2g)",
          l.node(), g.group(), l.interruptions(), FormatNumber(l.node_hours()),
          FormatNumber(l.expected()), l.tail_probability()));
    }
    table.AddRow({std::to_string(++rank), g.group(), std::to_string(g.node_count()),
                  FormatNumber(g.node_hours()), std::to_string(g.interruptions()),
                  ByKindText(g),
                  g.enough_data() ? FormatNumber(g.per_1000_node_hours()) : "not enough data",
                  g.node_hours() > 0 ? absl::StrCat(FormatNumber(g.per_1000_node_hours_lower()),
                                                    "-",
                                                    FormatNumber(g.per_1000_node_hours_upper()))
                                     : "-",
                  g.mtbf_hours() > 0 ? FormatNumber(g.mtbf_hours()) : "-",
                  names.empty() ? "-" : absl::StrJoin(names, " ")});
  }
  std::cout << table.Render();
  std::cout << "not enough data: fewer than " << FormatNumber(response.min_node_hours())
            << " node-hours observed; the interval still says what the record allows\n";
  if (!lemons.empty()) {
    std::cout << "\nlemons (interrupted far more than their peers):\n";
    for (const std::string& l : lemons) std::cout << l << "\n";
  }
  return kExitOk;
}

}  // namespace fleetbench::cli
