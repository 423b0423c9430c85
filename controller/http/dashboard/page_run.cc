// A run's page ("/run?id=.."): FleetCore::GetRun as `fleetbench results`
// shows it — state, each task with its live progress (the page refreshes
// itself while the run is going), every sample, each pairwise metric as a
// listener x connector heatmap (the CLI's matrix), and the run's findings.
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api_enums.h"
#include "common/api_text.h"
#include "common/number_text.h"
#include "controller/http/dashboard/dashboard.h"
#include "controller/http/dashboard/page_common.h"
#include "controller/http/dashboard/svg_chart.h"

namespace fleetbench::controller::dashboard {
namespace {

// A page shows at most this many samples (a run can hold 200k): the rest
// is in `fleetbench results --json`.
constexpr int kMaxSamplesShown = 5000;
constexpr int kMaxSamplePages = 100;

std::string PairHeatmaps(const v1::Run& run) {
  // metric -> listener -> connector -> value, as the CLI's PrintPairMatrix.
  std::map<std::string, std::map<std::string, std::map<std::string, double>>> by_metric;
  std::map<std::string, std::string> units;
  for (const v1::Sample& s : run.samples()) {
    auto peer = s.params().find("peer_node");
    if (peer == s.params().end()) continue;
    by_metric[s.metric()][peer->second][s.node()] = s.value();
    units[s.metric()] = s.unit();
  }
  std::string out;
  for (const auto& [metric, cells] : by_metric) {
    Heatmap map;
    map.title = metric + ": listener (rows) x connector (columns)";
    map.unit = units[metric];
    std::set<std::string> connectors;
    for (const auto& [listener, row] : cells) {
      for (const auto& [connector, v] : row) connectors.insert(connector);
    }
    map.columns.assign(connectors.begin(), connectors.end());
    for (const auto& [listener, row] : cells) {
      map.rows.push_back(listener);
      std::vector<std::optional<double>> line;
      for (const std::string& c : map.columns) {
        auto it = row.find(c);
        line.push_back(it == row.end() ? std::nullopt : std::optional<double>(it->second));
      }
      map.cells.push_back(std::move(line));
    }
    absl::StrAppend(&out, "<div class=\"matrix\" data-metric=\"", HtmlEscape(metric), "\">",
                    RenderHeatmap(map), "</div>");
  }
  return out;
}

}  // namespace

HttpReply RunPage(FleetCore& core, const DashboardOptions& options, const HttpRequest& request) {
  const std::string run_id = Param(request, "id");
  if (run_id.empty()) {
    return ErrorReply(request, "run", absl::InvalidArgumentError("which run? /run?id=RUN"));
  }
  v1::GetRunRequest get;
  get.set_run_id(run_id);
  get.set_include_samples(true);
  v1::Run run;
  google::protobuf::RepeatedPtrField<v1::Sample> samples;
  bool clipped = false;
  for (int page = 0;; ++page) {
    absl::StatusOr<v1::Run> got = core.GetRun(get, Deadline(options));
    if (!got.ok()) return ErrorReply(request, "run " + run_id, got.status());
    for (v1::Sample& s : *got->mutable_samples()) {
      if (samples.size() < kMaxSamplesShown) samples.Add(std::move(s));
    }
    const std::string next = got->samples_next_page_token();
    run = *std::move(got);
    if (next.empty()) break;
    if (page + 1 >= kMaxSamplePages || samples.size() >= kMaxSamplesShown) {
      clipped = true;
      break;
    }
    get.set_samples_page_token(next);
  }
  run.mutable_samples()->Swap(&samples);

  const bool going = !IsTerminal(run.state());
  std::string body = absl::StrCat("<p id=\"state\" data-state=\"", HtmlEscape(RunStateName(run.state())),
                                  "\">", HtmlEscape(RunStateName(run.state())));
  if (!run.suite().empty()) absl::StrAppend(&body, " (suite ", HtmlEscape(run.suite()), ")");
  if (!run.schedule().empty()) absl::StrAppend(&body, " (schedule ", HtmlEscape(run.schedule()), ")");
  absl::StrAppend(&body, "; created ", HtmlEscape(TimeText(run.created_unix_ms())));
  if (run.finished_unix_ms() != 0) {
    absl::StrAppend(&body, ", finished ", HtmlEscape(TimeText(run.finished_unix_ms())));
  }
  absl::StrAppend(&body, going ? " — this page refreshes while the run is going" : "", "</p>");
  if (!run.offline_nodes().empty()) {
    absl::StrAppend(&body, Note("offline at the start, not in the run: " +
                                absl::StrJoin(run.offline_nodes(), ", ")));
  }

  HtmlTable tasks({"NODE", "STATE", "PROGRESS", "REASON"}, "tasks");
  for (const v1::NodeTask& t : run.tasks()) {
    std::string reason = t.reason();
    for (const auto& o : t.outcomes()) {
      if (o.state() == v1::TASK_STATE_SKIPPED || o.state() == v1::TASK_STATE_FAILED) {
        absl::StrAppend(&reason, reason.empty() ? "" : "; ", o.benchmark(), " ",
                        TaskStateName(o.state()),
                        o.code() == v1::STATUS_CODE_OK ? "" : " (" + StatusCodeName(o.code()) + ")",
                        ": ", o.reason());
      }
    }
    std::string progress = "-";
    if (t.state() == v1::TASK_STATE_RUNNING && !t.progress_benchmark().empty()) {
      progress = absl::StrCat(t.progress_benchmark(), " ",
                              static_cast<int>(t.progress_fraction() * 100), "%");
      if (!t.progress_message().empty()) absl::StrAppend(&progress, " ", t.progress_message());
    }
    tasks.AddRow({HtmlCell(NodeLink(t.node())), TextCell(TaskStateName(t.state())),
                  TextCell(progress), TextCell(reason)});
  }
  absl::StrAppend(&body, tasks.Render());

  if (run.samples_size() > 0) {
    absl::StrAppend(&body, Heading("results"));
    HtmlTable table({"NODE", "BENCHMARK", "METRIC", "VALUE", "UNIT", "PARAMS"}, "samples");
    for (const v1::Sample& s : run.samples()) {
      table.AddRow({HtmlCell(NodeLink(s.node())), TextCell(s.benchmark()), TextCell(s.metric()),
                    NumberCell(FormatForPeople(s.value()),
                               {{"node", s.node()}, {"metric", s.metric()}}),
                    TextCell(s.unit()), TextCell(MeasuredParamsText(s.params()))});
    }
    absl::StrAppend(&body, table.Render());
    if (clipped) {
      absl::StrAppend(&body, Note(absl::StrCat("the first ", run.samples_size(),
                                               " samples; every one: fleetbench results ", run_id,
                                               " --json")));
    }
    absl::StrAppend(&body, PairHeatmaps(run));
  }
  if (!run.groups().empty()) {
    absl::StrAppend(&body, Note("group results (curves, scaling, isolation): fleetbench results " +
                                run_id));
  }
  absl::StrAppend(&body, Heading("findings"));
  v1::ListFindingsRequest judge;
  judge.set_run_id(run_id);
  absl::StatusOr<v1::ListFindingsResponse> findings = core.ListFindings(judge, Deadline(options));
  absl::StrAppend(&body, findings.ok() ? FindingsTable(*findings, "findings")
                                       : Note("no findings: " + std::string(findings.status().message())));
  return HtmlReply(request, "run " + run_id, std::move(body),
                   going ? options.run_refresh_seconds : 0);
}

}  // namespace fleetbench::controller::dashboard
