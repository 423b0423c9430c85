// The fleet overview ("/"): every node with its status, labels, worst
// finding and last run, as `fleetbench nodes` lists them, then the newest
// runs as `fleetbench runs` lists them.
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api_enums.h"
#include "common/api_text.h"
#include "common/number_text.h"
#include "controller/http/dashboard/dashboard.h"
#include "controller/http/dashboard/page_common.h"
#include "diagnosis/finding.h"

namespace fleetbench::controller::dashboard {

HttpReply FleetPage(FleetCore& core, const DashboardOptions& options, const HttpRequest& request) {
  absl::StatusOr<v1::ListNodesResponse> nodes = core.ListNodes(Deadline(options));
  if (!nodes.ok()) return ErrorReply(request, "fleet", nodes.status());
  std::string body;
  if (!nodes->store_error().empty()) {
    absl::StrAppend(&body, "<p class=\"error\">the controller cannot write its history since ",
                    HtmlEscape(TimeText(nodes->store_failing_since_unix_ms())), ": ",
                    HtmlEscape(nodes->store_error()), "; ", nodes->reports_held(),
                    " report(s) held and retried</p>");
  }
  // The findings and the last runs are extra: the nodes show without them.
  absl::StatusOr<v1::ListFindingsResponse> findings =
      core.ListFindings(v1::ListFindingsRequest(), Deadline(options));
  // Each node's newest measurement names its last run.
  std::map<std::string, std::pair<int64_t, std::string>> last_run;  // node -> (time, run)
  absl::StatusOr<FleetCore::LatestMeasurements> latest = core.LatestSamples(Deadline(options));
  if (latest.ok()) {
    for (const v1::Sample& s : latest->samples) {
      auto& [time, run] = last_run[s.node()];
      if (s.time_unix_ms() > time) {
        time = s.time_unix_ms();
        run = s.run_id();
      }
    }
  }
  int online = 0;
  HtmlTable table({"NAME", "STATUS", "CPU", "CORES", "MEMORY_GiB", "GPUS", "WORST_FINDING",
                   "LABELS", "LAST_RUN", "LAST_SEEN"},
                  "nodes");
  for (const v1::Node& n : nodes->nodes()) {
    const std::string status = NodeStatusName(n.status());
    if (n.status() == v1::NODE_STATUS_ONLINE) ++online;
    auto run = last_run.find(n.name());
    table.AddRow(
        {HtmlCell(NodeLink(n.name())),
         HtmlCell(absl::StrCat("<span class=\"", HtmlEscape(status), "\">", HtmlEscape(status),
                               "</span>")),
         TextCell(n.facts().cpu().model()),
         NumberCell(std::to_string(n.facts().cpu().logical_cores())),
         NumberCell(FormatForPeople(static_cast<double>(n.facts().memory_total_bytes()) / (1 << 30)),
                    {{"node", n.name()}, {"col", "memory"}}),
         NumberCell(std::to_string(n.facts().gpus_size())),
         TextCell(findings.ok() ? diagnosis::WorstFindingOf(*findings, n.name()) : "?"),
         TextCell(LabelsText(n.labels())),
         run == last_run.end() ? TextCell("-") : HtmlCell(RunLink(run->second.second)),
         TextCell(TimeText(n.last_seen_unix_ms()))});
  }
  absl::StrAppend(&body, "<p id=\"summary\">", nodes->nodes_size(), " node(s), ", online,
                  " online</p>", table.Render());
  if (!findings.ok()) absl::StrAppend(&body, Note("no findings: " + std::string(findings.status().message())));

  v1::ListRunsRequest runs_request;
  runs_request.set_page_size(20);
  absl::StatusOr<v1::ListRunsResponse> runs = core.ListRuns(runs_request, Deadline(options));
  absl::StrAppend(&body, Heading("newest runs"));
  if (!runs.ok()) {
    absl::StrAppend(&body, Note("no runs: " + std::string(runs.status().message())));
  } else {
    HtmlTable list({"RUN", "STATE", "CREATED", "BENCHMARKS"}, "runs");
    for (const v1::Run& r : runs->runs()) {
      std::vector<std::string> names;
      for (const auto& b : r.benchmarks()) names.push_back(b.name());
      list.AddRow({HtmlCell(RunLink(r.run_id())), TextCell(RunStateName(r.state())),
                   TextCell(TimeText(r.created_unix_ms())), TextCell(absl::StrJoin(names, ","))});
    }
    absl::StrAppend(&body, list.size() > 0 ? list.Render() : Note("no runs yet"));
  }
  return HtmlReply(request, "fleet", std::move(body));
}

}  // namespace fleetbench::controller::dashboard
