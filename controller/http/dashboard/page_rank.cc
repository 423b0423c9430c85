// The ranking ("/rank?metric=..&by=..&price=..&window=..&job_nodes=.."):
// FleetCore::Rank, the table `fleetbench rank` prints (same columns, same
// numbers) and the medians as bars with p10..p90 whiskers; with job_nodes,
// each group's goodput and effective cost for a job of that size. Without
// a metric or profile, the metrics measured in the fleet, each a link.
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/api_enums.h"
#include "common/number_text.h"
#include "controller/http/dashboard/dashboard.h"
#include "controller/http/dashboard/page_common.h"
#include "controller/http/dashboard/svg_chart.h"

namespace fleetbench::controller::dashboard {
namespace {

std::string PriceText(double price, const std::string& currency) {
  return price > 0 && !currency.empty() ? FormatForPeople(price) + " " + currency : "-";
}

std::string PriceSourceText(const std::string& source, int64_t effective_from_ms) {
  if (source.empty()) return "-";
  if (effective_from_ms == 0) return source;
  return source + " " +
         absl::FormatTime("%Y-%m-%d", absl::FromUnixMillis(effective_from_ms), absl::UTCTimeZone());
}

std::string MetricList(FleetCore& core, const DashboardOptions& options, const std::string& path) {
  absl::StatusOr<FleetCore::LatestMeasurements> latest = core.LatestSamples(Deadline(options));
  if (!latest.ok()) return Note("no metrics: " + std::string(latest.status().message()));
  std::set<std::string> measured;
  for (const v1::Sample& s : latest->samples) measured.insert(s.metric());
  if (measured.empty()) return Note("nothing measured yet");
  std::string out = absl::StrCat(Heading("metrics measured"), "<ul id=\"metrics\">");
  for (const std::string& m : measured) {
    absl::StrAppend(&out, "<li><a href=\"", HtmlEscape(Link(path, {{"metric", m}})), "\">",
                    HtmlEscape(m), "</a></li>");
  }
  return out + "</ul>";
}

}  // namespace

HttpReply RankPage(FleetCore& core, const DashboardOptions& options, const HttpRequest& request) {
  v1::RankRequest rank;
  rank.set_metric(Param(request, "metric"));
  rank.set_profile(Param(request, "profile"));
  const std::string by_text = Param(request, "by").empty() ? "node" : Param(request, "by");
  const std::string price_text =
      Param(request, "price").empty() ? "on_demand" : Param(request, "price");
  std::string body = QueryForm("/rank", {{"metric", "metric", rank.metric()},
                                         {"profile", "or profile (cpu, io, training)", rank.profile()},
                                         {"by", "by (node, instance_type, region, provider)", by_text},
                                         {"price", "price (on_demand, spot)", price_text},
                                         {"window", "window (7d, 24h)", Param(request, "window")},
                                         {"job_nodes", "for a job of N nodes",
                                          Param(request, "job_nodes")}});
  if (rank.metric().empty() && rank.profile().empty()) {
    absl::StrAppend(&body, MetricList(core, options, "/rank"));
    return HtmlReply(request, "ranking", std::move(body));
  }
  if (!rank.metric().empty() && !rank.profile().empty()) {
    return ErrorReply(request, "ranking",
                      absl::InvalidArgumentError("give metric or profile (one of them)"));
  }
  absl::StatusOr<v1::RankGrouping> by = ParseRankGrouping(by_text);
  if (!by.ok()) return ErrorReply(request, "ranking", by.status());
  rank.set_by(*by);
  absl::StatusOr<v1::PriceKind> price = ParsePriceKind(price_text);
  if (!price.ok()) return ErrorReply(request, "ranking", price.status());
  rank.set_price(*price);
  absl::StatusOr<int64_t> window = WindowMillis(request);
  if (!window.ok()) return ErrorReply(request, "ranking", window.status());
  rank.set_window_ms(*window);
  if (const std::string nodes = Param(request, "job_nodes"); !nodes.empty()) {
    uint64_t n = 0;
    if (!absl::SimpleAtoi(nodes, &n) || n == 0) {
      return ErrorReply(request, "ranking",
                        absl::InvalidArgumentError("job_nodes wants a count of nodes, e.g. 512"));
    }
    rank.mutable_job()->set_nodes(n);
  }
  absl::StatusOr<v1::RankResponse> response = core.Rank(rank, Deadline(options));
  if (!response.ok()) return ErrorReply(request, "ranking", response.status());

  // The table as `fleetbench rank` prints it.
  const bool profile = !response->profile().empty();
  const std::string unit = profile ? "score" : response->unit();
  const std::string cost_header =
      profile ? "COST_PER_H_PER_SCORE"
              : (response->higher_is_better() ? "COST_PER_H_PER_" : "COST_PER_H_x_") + unit;
  std::vector<std::string> header = {"#", absl::AsciiStrToUpper(RankGroupingName(response->by())),
                                     "NODES", "RUNS"};
  if (profile) {
    header.push_back("SCORE");
    for (const v1::ProfileMetric& m : response->profile_metrics()) header.push_back(m.metric());
  } else {
    for (const std::string& h : {"MEDIAN_" + unit, std::string("P10"), std::string("P90")}) {
      header.push_back(h);
    }
  }
  for (const char* h : {"PRICE_PER_H", "PRICE_SOURCE"}) header.push_back(h);
  header.push_back(cost_header);
  const bool job = response->has_job();
  if (job) {
    header.push_back("GOODPUT");
    header.push_back("EFFECTIVE_" + cost_header);
  }
  HtmlTable table(header, "ranking");
  BarChart chart;
  chart.title = absl::StrCat(profile ? "score" : response->metric(), " by ",
                             RankGroupingName(response->by()), ": median, whiskers p10..p90");
  chart.unit = unit;
  std::string notes;
  int position = 0;
  for (const v1::RankRow& r : response->rows()) {
    auto cell = [&r](std::string text, const char* column) {
      return NumberCell(std::move(text), {{"group", r.group()}, {"col", column}});
    };
    std::vector<HtmlTable::Cell> line = {NumberCell(std::to_string(++position)),
                                         TextCell(r.group()),
                                         NumberCell(std::to_string(r.node_count())),
                                         NumberCell(std::to_string(r.run_count()))};
    if (profile) {
      line.push_back(cell(r.median() > 0 ? FormatForPeople(r.median()) : "-", "score"));
      for (const v1::ProfileComponent& c : r.components()) {
        line.push_back(TextCell(c.present() ? FormatForPeople(c.median()) + " (x" +
                                                  FormatForPeople(c.score()) + ")"
                                            : "missing"));
      }
      chart.bars.push_back({r.group(), r.median(), r.median(), r.median()});
    } else {
      line.push_back(cell(FormatForPeople(r.median()), "median"));
      line.push_back(cell(FormatForPeople(r.p10()), "p10"));
      line.push_back(cell(FormatForPeople(r.p90()), "p90"));
      chart.bars.push_back({r.group(), r.median(), r.p10(), r.p90()});
    }
    line.push_back(TextCell(PriceText(r.price_per_hour(), r.currency())));
    line.push_back(TextCell(PriceSourceText(r.price_source(), r.price_effective_from_unix_ms())));
    line.push_back(cell(r.priced() ? FormatForPeople(r.cost_per_unit()) : "-", "cost"));
    if (job) {
      line.push_back(cell(absl::StrFormat("%.3f%s", r.job().goodput(),
                                          r.job().enough_data() ? "" : "?"),
                          "goodput"));
      line.push_back(cell(r.job().effective_cost_per_unit() > 0
                              ? FormatForPeople(r.job().effective_cost_per_unit())
                              : "-",
                          "effective"));
    }
    table.AddRow(std::move(line));
    if (!r.price_note().empty()) absl::StrAppend(&notes, Note(r.group() + ": " + r.price_note()));
  }
  if (profile) {
    absl::StrAppend(&body, Note(absl::StrCat("rank by profile ", response->profile(), ", ",
                                             PriceKindName(response->price()),
                                             " prices; score = weighted geometric mean of each "
                                             "metric over its fleet median (higher is better)")));
  } else {
    absl::StrAppend(&body, Note(absl::StrCat("rank by ", response->metric(), " (",
                                             response->higher_is_better() ? "higher" : "lower",
                                             " is better), ", PriceKindName(response->price()),
                                             " prices")));
  }
  if (job) {
    absl::StrAppend(
        &body, Note(absl::StrCat("for a job on ", response->job().nodes(),
                                 " node(s), checkpointing every ",
                                 absl::FormatDuration(
                                     absl::Milliseconds(response->job().checkpoint_interval_ms())),
                                 " and restarting in ",
                                 absl::FormatDuration(
                                     absl::Milliseconds(response->job().restart_cost_ms())),
                                 ": "
                                 "GOODPUT from each group's interruptions per node-hour "
                                 "(? : too few node-hours), EFFECTIVE the cost per unit once "
                                 "the time lost is counted; see the reliability page")));
  }
  absl::StrAppend(&body, table.Render(), notes, RenderBarChart(chart));
  return HtmlReply(request, "ranking", std::move(body));
}

}  // namespace fleetbench::controller::dashboard
