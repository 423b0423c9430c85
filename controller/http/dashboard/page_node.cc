// A node's page ("/node?name=.."): its facts as ListNodes has them, one
// history chart per metric it measured (FleetCore::History, what `fleetbench
// history` prints) with the times its facts changed marked, and its
// findings (ListFindings for the node, as `fleetbench findings --node`).
#include <algorithm>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api_enums.h"
#include "common/api_text.h"
#include "common/number_text.h"
#include "controller/http/dashboard/dashboard.h"
#include "controller/http/dashboard/page_common.h"
#include "controller/http/dashboard/svg_chart.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/message_differencer.h"

namespace fleetbench::controller::dashboard {
namespace {

// A node's page draws at most this many metrics, each from its newest
// samples: the page stays small for a node that measured everything.
constexpr size_t kMaxCharts = 24;
constexpr uint32_t kChartSamples = 200;
constexpr int kFactsVersions = 50;

// The top-level facts fields that differ ("kernel, gpus").
std::string ChangedFields(const v1::NodeFacts& before, const v1::NodeFacts& after) {
  std::vector<std::string> changed;
  const google::protobuf::Descriptor* d = v1::NodeFacts::descriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    google::protobuf::util::MessageDifferencer diff;
    std::vector<const google::protobuf::FieldDescriptor*> only = {f};
    if (!diff.CompareWithFields(before, after, only, only)) changed.push_back(f->name());
  }
  return changed.empty() ? "facts changed" : "facts changed: " + absl::StrJoin(changed, ", ");
}

std::string FactsTable(const v1::Node& n) {
  const v1::NodeFacts& f = n.facts();
  HtmlTable table({"FACT", "VALUE"}, "facts");
  auto row = [&table](const std::string& name, std::string value) {
    table.AddRow({TextCell(name), TextCell(std::move(value))});
  };
  row("status", NodeStatusName(n.status()));
  row("last seen", TimeText(n.last_seen_unix_ms()));
  row("agent", n.agent_version());
  row("labels", LabelsText(n.labels()));
  row("hostname", f.hostname());
  row("os", f.os());
  row("kernel", f.kernel());
  row("cpu", absl::StrCat(f.cpu().model(), " (", f.cpu().logical_cores(), " logical cores)"));
  row("memory GiB", FormatForPeople(static_cast<double>(f.memory_total_bytes()) / (1 << 30)));
  std::vector<std::string> gpus;
  for (const v1::GpuFacts& g : f.gpus()) {
    gpus.push_back(absl::StrCat(g.index(), ": ", g.name(), " driver ", g.driver_version()));
  }
  row("gpus", gpus.empty() ? (f.gpu_unavailable_reason().empty() ? "none" : f.gpu_unavailable_reason())
                           : absl::StrJoin(gpus, "; "));
  row("virtualization", absl::StrCat(f.virtualization().hypervisor() ? "hypervisor " : "",
                                     f.virtualization().dmi_vendor(), " ",
                                     f.virtualization().dmi_product(), " ",
                                     f.virtualization().container()));
  row("scratch filesystem", f.scratch_filesystem());
  row("rdma devices", f.rdma_devices().empty() ? "none" : absl::StrJoin(f.rdma_devices(), ", "));
  return table.Render();
}

}  // namespace

HttpReply NodePage(FleetCore& core, const DashboardOptions& options, const HttpRequest& request) {
  const std::string name = Param(request, "name");
  if (name.empty()) {
    return ErrorReply(request, "node", absl::InvalidArgumentError("which node? /node?name=NAME"));
  }
  absl::StatusOr<v1::ListNodesResponse> nodes = core.ListNodes(Deadline(options));
  if (!nodes.ok()) return ErrorReply(request, "node " + name, nodes.status());
  const v1::Node* node = nullptr;
  for (const v1::Node& n : nodes->nodes()) {
    if (n.name() == name) node = &n;
  }
  if (node == nullptr) {
    return ErrorReply(request, "node " + name,
                      absl::NotFoundError(absl::StrCat("no node named '", name.substr(0, 200), "'")));
  }
  std::string body = FactsTable(*node);

  // Facts changes, oldest first: each version after the first is a change.
  std::vector<ChartMark> marks;
  absl::StatusOr<std::vector<storage::FactsVersion>> versions =
      core.FactsHistory(name, kFactsVersions, Deadline(options));
  if (versions.ok()) {
    std::reverse(versions->begin(), versions->end());
    for (size_t i = 1; i < versions->size(); ++i) {
      marks.push_back({static_cast<double>(absl::ToUnixMillis((*versions)[i].seen)),
                       ChangedFields((*versions)[i - 1].facts, (*versions)[i].facts)});
    }
  }

  absl::StrAppend(&body, Heading("findings"));
  v1::ListFindingsRequest judge;
  judge.set_node(name);
  absl::StatusOr<v1::ListFindingsResponse> findings = core.ListFindings(judge, Deadline(options));
  absl::StrAppend(&body, findings.ok() ? FindingsTable(*findings, "findings")
                                       : Note("no findings: " + std::string(findings.status().message())));

  absl::StrAppend(&body, Heading("history"));
  std::set<std::string> metrics;
  absl::StatusOr<FleetCore::LatestMeasurements> latest = core.LatestSamples(Deadline(options));
  if (latest.ok()) {
    for (const v1::Sample& s : latest->samples) {
      if (s.node() == name) metrics.insert(s.metric());
    }
  }
  if (metrics.empty()) absl::StrAppend(&body, Note("nothing measured in the rank window"));
  size_t drawn = 0;
  for (const std::string& metric : metrics) {
    if (++drawn > kMaxCharts) {
      absl::StrAppend(&body, Note(absl::StrCat("and ", metrics.size() - kMaxCharts,
                                               " more metric(s): see fleetbench history")));
      break;
    }
    v1::HistoryRequest history;
    history.set_node(name);
    history.set_metric(metric);
    history.set_page_size(kChartSamples);
    absl::StatusOr<v1::HistoryResponse> samples = core.History(history, Deadline(options));
    if (!samples.ok()) {
      absl::StrAppend(&body, Note(metric + ": " + std::string(samples.status().message())));
      continue;
    }
    LineChart chart;
    chart.title = metric;
    double first = 0, last = 0;
    for (const v1::Sample& s : samples->samples()) {
      chart.unit = s.unit();
      const double t = static_cast<double>(s.time_unix_ms());
      if (chart.points.empty() || t < first) first = t;
      if (chart.points.empty() || t > last) last = t;
      chart.points.push_back({t, s.value(), s.run_id()});
    }
    for (const ChartMark& m : marks) {
      if (m.x >= first && m.x <= last) chart.marks.push_back(m);
    }
    absl::StrAppend(&body, "<div class=\"history\" data-metric=\"", HtmlEscape(metric), "\">",
                    RenderLineChart(chart), "</div>");
  }
  return HtmlReply(request, "node " + name, std::move(body));
}

}  // namespace fleetbench::controller::dashboard
