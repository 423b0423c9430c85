// Time of day ("/timeofday?metric=..&by=..&window=.."): FleetCore::Variance
// (as `fleetbench variance`), one heatmap row per group and hour of day
// (UTC), the cell the hour's median; then each profile's day and night.
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/api_enums.h"
#include "common/number_text.h"
#include "controller/http/dashboard/dashboard.h"
#include "controller/http/dashboard/page_common.h"
#include "controller/http/dashboard/svg_chart.h"

namespace fleetbench::controller::dashboard {

HttpReply TimeOfDayPage(FleetCore& core, const DashboardOptions& options,
                        const HttpRequest& request) {
  v1::VarianceRequest variance;
  variance.set_metric(Param(request, "metric"));
  const std::string by_text = Param(request, "by").empty() ? "node" : Param(request, "by");
  std::string body =
      QueryForm("/timeofday", {{"metric", "metric", variance.metric()},
                               {"by", "by (node, instance_type, region, provider)", by_text},
                               {"window", "window (14d)", Param(request, "window")}});
  if (variance.metric().empty()) {
    absl::StrAppend(&body, Note("name a metric, e.g. one the ranking page lists"));
    return HtmlReply(request, "time of day", std::move(body));
  }
  absl::StatusOr<v1::RankGrouping> by = ParseRankGrouping(by_text);
  if (!by.ok()) return ErrorReply(request, "time of day", by.status());
  variance.set_by(*by);
  absl::StatusOr<int64_t> window = WindowMillis(request);
  if (!window.ok()) return ErrorReply(request, "time of day", window.status());
  variance.set_window_ms(*window);
  absl::StatusOr<v1::VarianceResponse> response = core.Variance(variance, Deadline(options));
  if (!response.ok()) return ErrorReply(request, "time of day", response.status());

  Heatmap map;
  map.title = absl::StrCat(response->metric(), " median by hour of day (UTC)");
  map.unit = response->unit();
  map.higher_is_better = response->higher_is_better();
  map.cell_width = 34;
  for (int h = 0; h < 24; ++h) map.columns.push_back(absl::StrFormat("%02d", h));
  HtmlTable table({"GROUP", "ZONE", "NODES", "RUNS", "DAY_MEDIAN", "NIGHT_MEDIAN", "GAP",
                   "SLOW_HOURS", "VERDICT"},
                  "profiles");
  for (const v1::VarianceGroup& g : response->groups()) {
    for (const v1::HourProfile& p : g.profiles()) {
      if (p.time_zone() == "UTC") {
        map.rows.push_back(g.group());
        std::vector<std::optional<double>> row(24);
        for (const v1::HourStat& h : p.hours()) {
          if (h.hour() < 24 && h.count() > 0) row[h.hour()] = h.median();
        }
        map.cells.push_back(std::move(row));
      }
      const std::string verdict = !p.enough_data()    ? "not enough data"
                                  : p.beyond_noise()  ? (p.day_is_slower() ? "day slower"
                                                                           : "night slower")
                                                      : "within noise";
      table.AddRow({TextCell(g.group()), TextCell(p.time_zone()),
                    NumberCell(std::to_string(g.node_count())),
                    NumberCell(std::to_string(g.run_count())),
                    NumberCell(p.day_count() > 0 ? FormatForPeople(p.day_median()) : "-",
                               {{"group", g.group()}, {"col", "day"}}),
                    NumberCell(p.night_count() > 0 ? FormatForPeople(p.night_median()) : "-",
                               {{"group", g.group()}, {"col", "night"}}),
                    NumberCell(p.enough_data()
                                   ? absl::StrCat(FormatForPeople(p.gap_fraction() * 100), "%")
                                   : "-"),
                    TextCell(p.slow_hours().empty() ? "-" : p.slow_hours()), TextCell(verdict)});
    }
  }
  absl::StrAppend(&body, RenderHeatmap(map), table.Render());
  return HtmlReply(request, "time of day", std::move(body));
}

}  // namespace fleetbench::controller::dashboard
