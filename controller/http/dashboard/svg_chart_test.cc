#include "controller/http/dashboard/svg_chart.h"

#include <cmath>
#include <regex>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::controller::dashboard {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(LinearScaleTest, MapsEndsAndWidensAFlatRange) {
  const LinearScale s(0, 10, 100, 200);
  EXPECT_DOUBLE_EQ(s(0), 100);
  EXPECT_DOUBLE_EQ(s(10), 200);
  EXPECT_DOUBLE_EQ(s(5), 150);
  const LinearScale inverted(0, 10, 200, 100);  // a y axis: up is smaller
  EXPECT_DOUBLE_EQ(inverted(10), 100);
  const LinearScale flat(4, 4, 0, 100);
  EXPECT_DOUBLE_EQ(flat(4), 50);  // a single value sits in the middle
  const LinearScale zero(0, 0, 0, 100);
  EXPECT_DOUBLE_EQ(zero(0), 50);
}

TEST(LineChartTest, EmptyDataSaysSo) {
  LineChart chart;
  chart.title = "gemm <fp32>";
  const std::string svg = RenderLineChart(chart);
  EXPECT_THAT(svg, HasSubstr("no data"));
  EXPECT_THAT(svg, HasSubstr("gemm &lt;fp32&gt;"));
  EXPECT_THAT(svg, Not(HasSubstr("<circle")));
  chart.points.push_back({NAN, 1, ""});
  EXPECT_THAT(RenderLineChart(chart), HasSubstr("no data"));
}

TEST(LineChartTest, OneMarkerPerPointAndAMarkPerFactsChange) {
  LineChart chart;
  chart.title = "t";
  chart.unit = "tflops";
  chart.points = {{3000, 2.5, "r3"}, {1000, 1.25, "r1<"}, {2000, 2.0, "r2"}};
  chart.marks = {{1500, "facts changed: kernel<"}};
  const std::string svg = RenderLineChart(chart);
  EXPECT_EQ(Count(svg, "<circle class=\"point\""), 3);
  EXPECT_EQ(Count(svg, "<g class=\"mark\">"), 1);
  EXPECT_THAT(svg, HasSubstr("facts changed: kernel&lt;"));
  EXPECT_THAT(svg, HasSubstr("data-value=\"2.5000\""));
  EXPECT_THAT(svg, HasSubstr("r1&lt;"));
  // Sorted by time: the path goes left to right.
  std::smatch m;
  const std::string path = svg.substr(svg.find("<path d=\"M", svg.find("</g>")));
  ASSERT_TRUE(std::regex_search(path, m, std::regex(R"(M([0-9.]+) [0-9.]+L([0-9.]+) [0-9.]+L([0-9.]+))")));
  EXPECT_LT(std::stod(m[1]), std::stod(m[2]));
  EXPECT_LT(std::stod(m[2]), std::stod(m[3]));
}

TEST(LineChartTest, OnePointSitsInTheMiddleOfTwoHours) {
  LineChart chart;
  chart.points = {{1.7e12, 5, "r"}};
  const std::string svg = RenderLineChart(chart);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, std::regex(R"re(<circle class="point" cx="([0-9.]+)")re")));
  EXPECT_NEAR(std::stod(m[1]), (70 + 720 - 16) / 2.0, 0.1);
  // The axis ends are an hour either side.
  EXPECT_THAT(svg, HasSubstr(">11-14 21:13<"));
  EXPECT_THAT(svg, HasSubstr(">11-14 23:13<"));
}

TEST(BarChartTest, BarsWithWhiskersAndEscapedLabels) {
  BarChart chart;
  chart.title = "rank";
  chart.unit = "GB/s";
  chart.bars = {{"n<1>", 10, 8, 12}, {"n2", 5, 4, 6}};
  const std::string svg = RenderBarChart(chart);
  EXPECT_EQ(Count(svg, "<g class=\"bar\""), 2);
  EXPECT_EQ(Count(svg, "class=\"whisker\""), 2);
  EXPECT_THAT(svg, HasSubstr("n&lt;1&gt;: 10.00 GB/s (8.0000 .. 12.00)"));
  EXPECT_THAT(svg, Not(HasSubstr("n<1>")));
  BarChart empty;
  EXPECT_THAT(RenderBarChart(empty), HasSubstr("no data"));
}

TEST(BarChartTest, TheLongestBarReachesTheRightEdgeOfThePlot) {
  BarChart chart;
  chart.width = 720;
  chart.bars = {{"a", 100, 100, 100}, {"b", 50, 50, 50}};
  const std::string svg = RenderBarChart(chart);
  std::smatch m;
  std::regex width(R"re(<rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)")re");
  std::vector<double> widths;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), width); it != std::sregex_iterator();
       ++it) {
    widths.push_back(std::stod((*it)[2]));
  }
  ASSERT_EQ(widths.size(), 2u);
  EXPECT_NEAR(widths[0], 720 - 60 - 160, 0.1);
  EXPECT_NEAR(widths[1], widths[0] / 2, 0.1);
}

TEST(HeatmapTest, CellsCarryTheirValueAndMissingCellsAreBlank) {
  Heatmap map;
  map.title = "net.tcp.Gbps";
  map.unit = "Gbit/s";
  map.rows = {"n1", "n2"};
  map.columns = {"n1", "n<2>"};
  map.cells = {{std::nullopt, 9.5}, {9.25, std::nullopt}};
  const std::string svg = RenderHeatmap(map);
  EXPECT_EQ(Count(svg, "<g class=\"cell\""), 2);
  EXPECT_THAT(svg, HasSubstr("data-row=\"n1\" data-column=\"n&lt;2&gt;\" data-value=\"9.5000\""));
  EXPECT_THAT(svg, HasSubstr("fill=\"#f1f1f1\""));
  // The better value is darker: 9.5 (the max) gets the darkest blue.
  EXPECT_THAT(svg, HasSubstr("fill=\"rgb(30,64,175)\""));
  map.higher_is_better = false;
  EXPECT_THAT(RenderHeatmap(map), HasSubstr("fill=\"rgb(219,234,254)\""));
}

TEST(HeatmapTest, NoValuesSaysNoData) {
  Heatmap map;
  map.rows = {"a"};
  map.columns = {"00"};
  map.cells = {{std::nullopt}};
  EXPECT_THAT(RenderHeatmap(map), HasSubstr("no data"));
  EXPECT_THAT(RenderHeatmap(Heatmap()), HasSubstr("no data"));
}

}  // namespace
}  // namespace fleetbench::controller::dashboard
