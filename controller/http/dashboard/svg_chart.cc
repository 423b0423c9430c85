#include "controller/http/dashboard/svg_chart.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/number_text.h"
#include "controller/http/dashboard/html_page.h"

namespace fleetbench::controller::dashboard {
namespace {

std::string Px(double v) { return absl::StrFormat("%.1f", v); }

std::string Open(int width, int height, const std::string& title, const std::string& kind) {
  return absl::StrCat("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart ", kind,
                      "\" width=\"", width, "\" height=\"", height, "\" viewBox=\"0 0 ", width,
                      " ", height, "\" role=\"img\" aria-label=\"", HtmlEscape(title), "\">",
                      "<text x=\"8\" y=\"16\" font-size=\"13\" font-weight=\"bold\">",
                      HtmlEscape(title), "</text>");
}

std::string Text(double x, double y, const std::string& text, const char* anchor = "start",
                 int size = 11) {
  return absl::StrCat("<text x=\"", Px(x), "\" y=\"", Px(y), "\" font-size=\"", size,
                      "\" text-anchor=\"", anchor, "\">", HtmlEscape(text), "</text>");
}

std::string Empty(int width, int height, const std::string& title) {
  return absl::StrCat(Open(width, height, title, "empty"),
                      Text(width / 2.0, height / 2.0, "no data", "middle", 13), "</svg>");
}

std::string TimeText(double unix_ms) {
  return absl::FormatTime("%m-%d %H:%M", absl::FromUnixMillis(static_cast<int64_t>(unix_ms)),
                          absl::UTCTimeZone());
}

bool Finite(double v) { return std::isfinite(v); }

}  // namespace

LinearScale::LinearScale(double lo, double hi, double from, double to)
    : lo_(lo), hi_(hi), from_(from), to_(to) {
  if (!(hi_ > lo_)) {
    const double pad = lo_ == 0 ? 1 : std::fabs(lo_) * 0.1;
    lo_ -= pad;
    hi_ += pad;
  }
}

double LinearScale::operator()(double v) const {
  return from_ + (v - lo_) / (hi_ - lo_) * (to_ - from_);
}

std::string RenderLineChart(const LineChart& chart) {
  std::vector<ChartPoint> points;
  for (const ChartPoint& p : chart.points) {
    if (Finite(p.x) && Finite(p.y)) points.push_back(p);
  }
  if (points.empty()) return Empty(chart.width, chart.height, chart.title);
  std::sort(points.begin(), points.end(),
            [](const ChartPoint& a, const ChartPoint& b) { return a.x < b.x; });
  const double left = 70, right = chart.width - 16.0, top = 28, bottom = chart.height - 28.0;
  double y_lo = points[0].y, y_hi = points[0].y;
  for (const ChartPoint& p : points) {
    y_lo = std::min(y_lo, p.y);
    y_hi = std::max(y_hi, p.y);
  }
  // From zero when the values are all positive and not far from it: the
  // eye reads the height as the amount.
  if (y_lo > 0 && y_lo < y_hi * 0.5) y_lo = 0;
  double x_lo = points.front().x, x_hi = points.back().x;
  for (const ChartMark& m : chart.marks) {
    if (!Finite(m.x)) continue;
    x_lo = std::min(x_lo, m.x);
    x_hi = std::max(x_hi, m.x);
  }
  // One time: an hour either side (LinearScale's widening is for values).
  if (!(x_hi > x_lo)) {
    x_lo -= 3600e3;
    x_hi += 3600e3;
  }
  const LinearScale xs(x_lo, x_hi, left, right);
  const LinearScale ys(y_lo, y_hi, bottom, top);
  std::string out = Open(chart.width, chart.height, chart.title, "line");
  // Axes with the ends labelled.
  absl::StrAppend(&out, "<path d=\"M", Px(left), " ", Px(top), "V", Px(bottom), "H", Px(right),
                  "\" stroke=\"#889\" fill=\"none\"/>");
  absl::StrAppend(&out, Text(left - 4, ys(ys.hi()) + 4, FormatForPeople(ys.hi()), "end"),
                  Text(left - 4, ys(ys.lo()) + 4, FormatForPeople(ys.lo()), "end"),
                  Text(left + 6, top + 10, chart.unit, "start"),
                  Text(left, bottom + 16, TimeText(xs.lo()), "start"),
                  Text(right, bottom + 16, TimeText(xs.hi()), "end"));
  for (const ChartMark& m : chart.marks) {
    if (!Finite(m.x)) continue;
    absl::StrAppend(&out, "<g class=\"mark\"><title>", HtmlEscape(m.label), "</title><line x1=\"",
                    Px(xs(m.x)), "\" x2=\"", Px(xs(m.x)), "\" y1=\"", Px(top), "\" y2=\"",
                    Px(bottom),
                    "\" stroke=\"#c2410c\" stroke-dasharray=\"4 3\" stroke-width=\"1.5\"/></g>");
  }
  std::string path;
  for (const ChartPoint& p : points) {
    absl::StrAppend(&path, path.empty() ? "M" : "L", Px(xs(p.x)), " ", Px(ys(p.y)));
  }
  absl::StrAppend(&out, "<path d=\"", path, "\" stroke=\"#2563eb\" stroke-width=\"1.5\" fill=\"none\"/>");
  for (const ChartPoint& p : points) {
    absl::StrAppend(&out, "<circle class=\"point\" cx=\"", Px(xs(p.x)), "\" cy=\"", Px(ys(p.y)),
                    "\" r=\"3.5\" fill=\"#2563eb\" data-value=\"", FormatForPeople(p.y),
                    "\"><title>", HtmlEscape(p.label), p.label.empty() ? "" : " ",
                    TimeText(p.x), ": ", FormatForPeople(p.y), " ", HtmlEscape(chart.unit),
                    "</title></circle>");
  }
  out += "</svg>";
  return out;
}

std::string RenderBarChart(const BarChart& chart) {
  std::vector<WhiskerBar> bars;
  for (const WhiskerBar& b : chart.bars) {
    if (Finite(b.value) && Finite(b.low) && Finite(b.high)) bars.push_back(b);
  }
  const int height = 40 + chart.row_height * static_cast<int>(std::max<size_t>(bars.size(), 1));
  if (bars.empty()) return Empty(chart.width, height, chart.title);
  const double left = 160, right = chart.width - 60.0, top = 28;
  double hi = 0, lo = 0;
  for (const WhiskerBar& b : bars) {
    hi = std::max({hi, b.value, b.high, b.low});
    lo = std::min({lo, b.value, b.low});
  }
  const LinearScale xs(lo, hi, left, right);
  std::string out = Open(chart.width, height, chart.title, "bars");
  for (size_t i = 0; i < bars.size(); ++i) {
    const WhiskerBar& b = bars[i];
    const double y = top + chart.row_height * static_cast<double>(i);
    const double mid = y + chart.row_height / 2.0;
    const double x0 = xs(std::min(0.0, b.value)), x1 = xs(std::max(0.0, b.value));
    absl::StrAppend(&out, "<g class=\"bar\" data-label=\"", HtmlEscape(b.label), "\"><title>",
                    HtmlEscape(b.label), ": ", FormatForPeople(b.value), " ",
                    HtmlEscape(chart.unit), " (", FormatForPeople(b.low), " .. ",
                    FormatForPeople(b.high), ")</title>");
    absl::StrAppend(&out, Text(left - 6, mid + 4, b.label, "end"));
    absl::StrAppend(&out, "<rect x=\"", Px(x0), "\" y=\"", Px(y + 4), "\" width=\"",
                    Px(std::max(1.0, x1 - x0)), "\" height=\"", chart.row_height - 8,
                    "\" fill=\"#93c5fd\"/>");
    const double wl = xs(std::min(b.low, b.high)), wh = xs(std::max(b.low, b.high));
    absl::StrAppend(&out, "<path class=\"whisker\" d=\"M", Px(wl), " ", Px(mid), "H", Px(wh), "M",
                    Px(wl), " ", Px(mid - 5), "V", Px(mid + 5), "M", Px(wh), " ", Px(mid - 5),
                    "V", Px(mid + 5), "\" stroke=\"#1e3a8a\" stroke-width=\"1.5\" fill=\"none\"/>");
    absl::StrAppend(&out, Text(std::max(x1, wh) + 4, mid + 4, FormatForPeople(b.value)), "</g>");
  }
  absl::StrAppend(&out, Text(right + 56, 16, chart.unit, "end"), "</svg>");
  return out;
}

std::string RenderHeatmap(const Heatmap& map) {
  const double left = 120, top = 48;
  // Wide enough for the title too.
  const int width = std::max(
      static_cast<int>(left) + map.cell_width * static_cast<int>(map.columns.size()) + 16,
      static_cast<int>(map.title.size()) * 8 + 16);
  const int height = static_cast<int>(top) + map.cell_height * static_cast<int>(map.rows.size()) + 24;
  bool any = false;
  double lo = 0, hi = 0;
  for (const auto& row : map.cells) {
    for (const auto& c : row) {
      if (!c || !Finite(*c)) continue;
      lo = any ? std::min(lo, *c) : *c;
      hi = any ? std::max(hi, *c) : *c;
      any = true;
    }
  }
  if (!any || map.rows.empty() || map.columns.empty()) {
    return Empty(std::max(width, 320), std::max(height, 80), map.title);
  }
  const LinearScale shade(lo, hi, 0, 1);
  std::string out = Open(width, height, map.title, "heatmap");
  for (size_t c = 0; c < map.columns.size(); ++c) {
    absl::StrAppend(&out, Text(left + map.cell_width * (c + 0.5), top - 6, map.columns[c], "middle"));
  }
  for (size_t r = 0; r < map.rows.size(); ++r) {
    const double y = top + map.cell_height * static_cast<double>(r);
    absl::StrAppend(&out, Text(left - 6, y + map.cell_height / 2.0 + 4, map.rows[r], "end"));
    for (size_t c = 0; c < map.columns.size(); ++c) {
      const double x = left + map.cell_width * static_cast<double>(c);
      std::optional<double> v;
      if (r < map.cells.size() && c < map.cells[r].size()) v = map.cells[r][c];
      if (!v || !Finite(*v)) {
        absl::StrAppend(&out, "<rect x=\"", Px(x), "\" y=\"", Px(y), "\" width=\"",
                        map.cell_width, "\" height=\"", map.cell_height,
                        "\" fill=\"#f1f1f1\" stroke=\"#fff\"/>");
        continue;
      }
      double t = std::clamp(shade(*v), 0.0, 1.0);
      if (!map.higher_is_better) t = 1 - t;
      // Light (worse) to dark blue (better); text flips to white when dark.
      const int red = static_cast<int>(219 - t * 189), green = static_cast<int>(234 - t * 170),
                blue = static_cast<int>(254 - t * 79);
      const std::string value = FormatForPeople(*v);
      absl::StrAppend(&out, "<g class=\"cell\" data-row=\"", HtmlEscape(map.rows[r]),
                      "\" data-column=\"", HtmlEscape(map.columns[c]), "\" data-value=\"", value,
                      "\"><title>", HtmlEscape(map.rows[r]), " / ", HtmlEscape(map.columns[c]),
                      ": ", value, " ", HtmlEscape(map.unit), "</title><rect x=\"", Px(x),
                      "\" y=\"", Px(y), "\" width=\"", map.cell_width, "\" height=\"",
                      map.cell_height, "\" fill=\"rgb(", red, ",", green, ",", blue,
                      ")\" stroke=\"#fff\"/>",
                      absl::StrCat("<text x=\"", Px(x + map.cell_width / 2.0), "\" y=\"",
                                   Px(y + map.cell_height / 2.0 + 4),
                                   "\" font-size=\"10\" text-anchor=\"middle\" fill=\"",
                                   t > 0.55 ? "#fff" : "#1d2430", "\">", value, "</text>"),
                      "</g>");
    }
  }
  absl::StrAppend(&out, Text(left, height - 6.0, map.unit), "</svg>");
  return out;
}

}  // namespace fleetbench::controller::dashboard
