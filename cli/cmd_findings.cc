// The diagnosis commands: `findings` (what the controller concludes about
// the nodes, docs/findings.md) and `variance` (a metric's 24-hour profile).
// Both are thin calls to the Fleet service; --json prints the response with
// protobuf's JSON printer.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "cli/args.h"
#include "cli/client.h"
#include "cli/finding_text.h"
#include "cli/table.h"
#include "cli/usage.h"
#include "common/api_enums.h"
#include "common/proto_json.h"
#include "diagnosis/finding.h"

namespace fleetbench::cli {
namespace {

const FlagSpec kWindow = WindowFlag("14 days");

}  // namespace

int FindingsCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {
      {"node", true, false, "only this node (default: every node)"},
      {"severity", true, false, "only findings at least this severe: info, warning, critical"},
      {"run", true, false, "the findings of this run's results (default: each node's latest)"},
      kWindow,
      kJsonFlag};
  int code = 0;
  auto p = Prepare("findings", argv, flags, 0, &code);
  if (!p) return code;
  v1::ListFindingsRequest request;
  request.set_node(p->args.Get("node"));
  request.set_run_id(p->args.Get("run"));
  if (p->args.Has("severity")) {
    absl::StatusOr<v1::Severity> severity = diagnosis::ParseSeverity(p->args.Get("severity"));
    if (!severity.ok()) {
      return UsageError("findings", "--" + std::string(severity.status().message()), flags);
    }
    request.set_min_severity(*severity);
  }
  absl::StatusOr<int64_t> window_ms = WindowMillis(p->args);
  if (!window_ms.ok()) return UsageError("findings", std::string(window_ms.status().message()), flags);
  request.set_window_ms(*window_ms);
  v1::ListFindingsResponse response;
  if (absl::Status s = p->client->Call(&v1::Fleet::Stub::ListFindings, request, &response); !s.ok()) {
    return RemoteError("findings", s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  if (response.findings().empty()) {
    std::cout << "no findings for " << response.nodes_judged() << " node(s)\n";
  }
  std::cout << RenderFindings(response);
  return kExitOk;
}

int VarianceCommand(const Argv& argv) {
  const std::vector<FlagSpec> flags = {
      {"metric", true, false, "the metric, e.g. gemm.cpu.fp32.tflops"},
      {"by", true, false, "node, region, instance_type or provider (default node)"},
      kWindow,
      kJsonFlag};
  int code = 0;
  auto p = Prepare("variance", argv, flags, 0, &code);
  if (!p) return code;
  v1::VarianceRequest request;
  request.set_metric(p->args.Get("metric"));
  if (request.metric().empty()) return UsageError("variance", "--metric is required", flags);
  absl::StatusOr<v1::RankGrouping> by = ParseRankGrouping(p->args.Get("by", "node"));
  if (!by.ok()) return UsageError("variance", "--" + std::string(by.status().message()), flags);
  request.set_by(*by);
  absl::StatusOr<int64_t> window_ms = WindowMillis(p->args);
  if (!window_ms.ok()) return UsageError("variance", std::string(window_ms.status().message()), flags);
  request.set_window_ms(*window_ms);
  v1::VarianceResponse response;
  if (absl::Status s = p->client->Call(&v1::Fleet::Stub::Variance, request, &response); !s.ok()) {
    return RemoteError("variance", s);
  }
  if (p->args.Has("json")) {
    std::cout << ToJson(response) << "\n";
    return kExitOk;
  }
  std::cout << response.metric() << " by hour of day, by " << RankGroupingName(response.by())
            << " (" << (response.higher_is_better() ? "higher" : "lower") << " is better)\n";
  if (response.groups().empty()) std::cout << "no results in the window\n";
  for (const v1::VarianceGroup& g : response.groups()) {
    for (const v1::HourProfile& profile : g.profiles()) {
      std::cout << "\n" << g.group() << " (" << g.node_count() << " node(s), " << g.run_count()
                << " runs), hours in " << profile.time_zone() << "\n";
      Table table({"HOUR", "COUNT", "MEDIAN_" + response.unit()});
      for (const v1::HourStat& h : profile.hours()) {
        table.AddRow({absl::StrFormat("%02d", h.hour()), std::to_string(h.count()),
                      h.count() ? FormatNumber(h.median()) : "-"});
      }
      std::cout << table.Render();
      std::cout << "day 08-20: median " << FormatNumber(profile.day_median()) << " ("
                << profile.day_count() << " runs); night: median "
                << FormatNumber(profile.night_median()) << " (" << profile.night_count()
                << " runs); gap " << absl::StrFormat("%.0f%%", 100 * profile.gap_fraction())
                << ", noise " << FormatNumber(profile.noise()) << ": ";
      if (!profile.enough_data()) {
        std::cout << "too few runs in a half to judge\n";
      } else if (profile.beyond_noise()) {
        std::cout << "beyond the noise, slower by " << (profile.day_is_slower() ? "day" : "night")
                  << " (slow hours " << profile.slow_hours() << ")\n";
      } else {
        std::cout << "within the noise\n";
      }
    }
  }
  return kExitOk;
}

}  // namespace fleetbench::cli
