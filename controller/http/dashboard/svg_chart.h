// controller/http/dashboard/svg_chart.h — charts drawn on the server as inline
// SVG, so a page needs no script and no chart library: a line chart with a
// marker per point and vertical marks (facts changes), bars with whiskers
// (median, p10..p90), and a heatmap (pair matrix, hour of day). Pure: data
// in, markup out; every label is escaped. Empty data draws a frame that
// says so. Each value also stands in a <title> (a tooltip), formatted by
// common/number_text.h as the CLI formats it.
#ifndef FLEETBENCH_CONTROLLER_HTTP_DASHBOARD_SVG_CHART_H_
#define FLEETBENCH_CONTROLLER_HTTP_DASHBOARD_SVG_CHART_H_

#include <optional>
#include <string>
#include <vector>

namespace fleetbench::controller::dashboard {

// Maps [lo, hi] onto [from, to] pixels; a flat range is widened so that a
// single value sits in the middle.
class LinearScale {
 public:
  LinearScale(double lo, double hi, double from, double to);
  double operator()(double v) const;
  double lo() const { return lo_; }
  double hi() const { return hi_; }

 private:
  double lo_, hi_, from_, to_;
};

struct ChartPoint {
  double x = 0;  // unix milliseconds for a time axis
  double y = 0;
  std::string label;  // the tooltip's first words (a run id)
};

struct ChartMark {
  double x = 0;
  std::string label;  // "facts changed: driver 550 -> 560"
};

struct LineChart {
  std::string title;
  std::string unit;
  std::vector<ChartPoint> points;
  std::vector<ChartMark> marks;  // vertical dashed lines
  int width = 720;
  int height = 240;
};
std::string RenderLineChart(const LineChart& chart);

struct WhiskerBar {
  std::string label;
  double value = 0;  // the bar (a median)
  double low = 0;    // whisker ends (p10, p90)
  double high = 0;
};

struct BarChart {
  std::string title;
  std::string unit;
  std::vector<WhiskerBar> bars;
  int width = 720;
  int row_height = 26;  // bars are horizontal, one row each
};
std::string RenderBarChart(const BarChart& chart);

struct Heatmap {
  std::string title;
  std::string unit;
  std::vector<std::string> rows;
  std::vector<std::string> columns;
  // cells[row][column]; nullopt: not measured.
  std::vector<std::vector<std::optional<double>>> cells;
  bool higher_is_better = true;  // the better end is drawn darker
  int cell_width = 56;
  int cell_height = 24;
};
std::string RenderHeatmap(const Heatmap& map);

}  // namespace fleetbench::controller::dashboard

#endif  // FLEETBENCH_CONTROLLER_HTTP_DASHBOARD_SVG_CHART_H_
