// Reliability ("/reliability?by=..&window=.."): FleetCore::Reliability, the
// table `fleetbench reliability` prints (same columns, same numbers), each
// group's interruptions per UTC day as a heatmap (the newest 1000 in the
// window), and the newest interruptions with what happened.
#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/api_enums.h"
#include "common/number_text.h"
#include "controller/http/dashboard/dashboard.h"
#include "controller/http/dashboard/page_common.h"
#include "controller/http/dashboard/svg_chart.h"

namespace fleetbench::controller::dashboard {
namespace {

constexpr uint32_t kListed = 1000;
constexpr int kShownInterruptions = 50;
constexpr int kMaxDays = 31;

std::string ByKind(const v1::ReliabilityGroup& g) {
  std::vector<std::string> parts;
  for (const v1::InterruptionCount& c : g.by_kind()) {
    parts.push_back(absl::StrCat(InterruptionKindName(c.kind()), " ", c.count()));
  }
  return parts.empty() ? "-" : absl::StrJoin(parts, ", ");
}

// Rows: groups with an interruption; columns: the window's last UTC days.
Heatmap PerDay(const v1::ReliabilityResponse& r, absl::Time now) {
  Heatmap map;
  map.title = "interruptions per UTC day (newest 1000 in the window)";
  map.unit = "interruptions";
  map.higher_is_better = false;
  map.cell_width = 22;
  const int days = static_cast<int>(
      std::min<int64_t>(kMaxDays, r.window_ms() / (24 * 3600 * 1000) + 1));
  const absl::Time last_day = absl::FromUnixSeconds(
      absl::ToUnixSeconds(now) / 86400 * 86400);
  for (int d = days - 1; d >= 0; --d) {
    map.columns.push_back(absl::FormatTime("%d", last_day - absl::Hours(24 * d),
                                           absl::UTCTimeZone()));
  }
  std::map<std::string, std::vector<std::optional<double>>> rows;
  for (const v1::Interruption& i : r.interruptions()) {
    const int64_t age_days =
        (absl::ToUnixSeconds(last_day) - i.time_unix_ms() / 1000 + 86399) / 86400;
    if (age_days < 0 || age_days >= days) continue;
    auto& row = rows.try_emplace(i.group(), days).first->second;
    std::optional<double>& cell = row[days - 1 - age_days];
    cell = cell.value_or(0) + 1;
  }
  for (auto& [group, cells] : rows) {
    map.rows.push_back(group);
    map.cells.push_back(std::move(cells));
  }
  return map;
}

}  // namespace

HttpReply ReliabilityPage(FleetCore& core, const DashboardOptions& options,
                          const HttpRequest& request) {
  const std::string by_text = Param(request, "by").empty() ? "instance_type" : Param(request, "by");
  std::string body =
      QueryForm("/reliability", {{"by", "by (node, instance_type, region, provider)", by_text},
                                 {"window", "window (30d)", Param(request, "window")}});
  v1::ReliabilityRequest reliability;
  absl::StatusOr<v1::RankGrouping> by = ParseRankGrouping(by_text);
  if (!by.ok()) return ErrorReply(request, "reliability", by.status());
  reliability.set_by(*by);
  absl::StatusOr<int64_t> window = WindowMillis(request);
  if (!window.ok()) return ErrorReply(request, "reliability", window.status());
  reliability.set_window_ms(*window);
  reliability.set_list_limit(kListed);
  absl::StatusOr<v1::ReliabilityResponse> response =
      core.Reliability(reliability, Deadline(options));
  if (!response.ok()) return ErrorReply(request, "reliability", response.status());

  HtmlTable table({"#", absl::AsciiStrToUpper(RankGroupingName(response->by())), "NODES",
                   "NODE_HOURS", "INTERRUPTIONS", "BY_KIND", "PER_1000_NODE_H", "INTERVAL",
                   "MTBF_H", "LEMONS"},
                  "reliability");
  int position = 0;
  for (const v1::ReliabilityGroup& g : response->groups()) {
    auto cell = [&g](std::string text, const char* column) {
      return NumberCell(std::move(text), {{"group", g.group()}, {"col", column}});
    };
    std::vector<std::string> lemons;
    for (const v1::LemonNode& l : g.lemons()) lemons.push_back(l.node());
    table.AddRow(
        {NumberCell(std::to_string(++position)), TextCell(g.group()),
         NumberCell(std::to_string(g.node_count())),
         cell(FormatForPeople(g.node_hours()), "node_hours"),
         cell(std::to_string(g.interruptions()), "interruptions"), TextCell(ByKind(g)),
         cell(g.enough_data() ? FormatForPeople(g.per_1000_node_hours()) : "not enough data",
              "rate"),
         TextCell(g.node_hours() > 0 ? absl::StrCat(FormatForPeople(g.per_1000_node_hours_lower()),
                                                    "-",
                                                    FormatForPeople(g.per_1000_node_hours_upper()))
                                     : "-"),
         cell(g.mtbf_hours() > 0 ? FormatForPeople(g.mtbf_hours()) : "-", "mtbf"),
         TextCell(lemons.empty() ? "-" : absl::StrJoin(lemons, " "))});
  }
  absl::StrAppend(
      &body,
      Note(absl::StrCat("interruptions per 1,000 node-hours online, 90% interval (exact "
                        "Poisson); fewer than ",
                        FormatForPeople(response->min_node_hours()),
                        " node-hours: not enough data")),
      table.Render());
  if (response->interruptions().empty()) {
    absl::StrAppend(&body, Note("no interruption in the window"));
    return HtmlReply(request, "reliability", std::move(body));
  }
  // The chart ends today, or on the newest interruption's day when that is
  // later (a controller whose clock runs ahead of this process's).
  const absl::Time newest_time =
      absl::FromUnixMillis(response->interruptions(0).time_unix_ms());
  absl::StrAppend(&body, RenderHeatmap(PerDay(*response, std::max(absl::Now(), newest_time))));
  HtmlTable newest({"TIME", "NODE", "GROUP", "KIND", "WHAT"}, "interruptions");
  int shown = 0;
  for (const v1::Interruption& i : response->interruptions()) {
    if (++shown > kShownInterruptions) break;
    newest.AddRow({TextCell(TimeText(i.time_unix_ms())), TextCell(i.node()), TextCell(i.group()),
                   TextCell(InterruptionKindName(i.kind())), TextCell(i.detail())});
  }
  absl::StrAppend(&body, Heading("newest interruptions"), newest.Render());
  return HtmlReply(request, "reliability", std::move(body));
}

}  // namespace fleetbench::controller::dashboard
