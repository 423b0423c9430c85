#include "controller/http/prometheus_text.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::controller::prometheus {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(PrometheusTextTest, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue(R"(a\b"c)" "\n" "d"), R"(a\\b\"c\nd)");
  EXPECT_EQ(EscapeLabelValue("NVIDIA H100 80GB HBM3"), "NVIDIA H100 80GB HBM3");
}

TEST(PrometheusTextTest, EscapesHelpButNotQuotes) {
  EXPECT_EQ(EscapeHelp("a \"b\" \\ c\nd"), "a \"b\" \\\\ c\\nd");
}

TEST(PrometheusTextTest, SanitizesNames) {
  EXPECT_EQ(SanitizeMetricName("fleetbench_gemm.cpu-fp32"), "fleetbench_gemm_cpu_fp32");
  EXPECT_EQ(SanitizeMetricName("a:b"), "a:b");
  EXPECT_EQ(SanitizeMetricName("4k"), "_4k");
  EXPECT_EQ(SanitizeMetricName(""), "_");
  EXPECT_EQ(SanitizeLabelName("a:b"), "a_b");
  EXPECT_EQ(SanitizeLabelName("__name__"), "x__name__");
  EXPECT_EQ(SanitizeLabelName("9"), "_9");
}

TEST(PrometheusTextTest, FormatsValuesSoTheyReadBack) {
  EXPECT_EQ(FormatValue(1), "1");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(1.5e12), "1.5e+12");
  EXPECT_EQ(FormatValue(0.0005), "0.0005");
  EXPECT_EQ(FormatValue(1e-5), "1e-05");
  EXPECT_EQ(std::stod(FormatValue(1.0 / 3)), 1.0 / 3);
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(PrometheusTextTest, WritesHelpTypeAndSeries) {
  Exposition e;
  Family& f = e.Add("fleetbench_x_seconds", MetricType::kGauge, "What x is.\nTwo lines.");
  f.Add({{"node", "n\"1"}, {"a", "b"}}, 0.25);
  f.Add({}, 2);
  EXPECT_EQ(e.Render(),
            "# HELP fleetbench_x_seconds What x is.\\nTwo lines.\n"
            "# TYPE fleetbench_x_seconds gauge\n"
            "fleetbench_x_seconds{a=\"b\",node=\"n\\\"1\"} 0.25\n"
            "fleetbench_x_seconds 2\n");
}

TEST(PrometheusTextTest, OneFamilyPerNameFirstHelpWins) {
  Exposition e;
  e.Add("m", MetricType::kCounter, "first").Add({{"k", "1"}}, 1);
  e.Add("m", MetricType::kGauge, "second").Add({{"k", "2"}}, 2);
  const std::string text = e.Render();
  EXPECT_EQ(text,
            "# HELP m first\n# TYPE m counter\nm{k=\"1\"} 1\nm{k=\"2\"} 2\n");
}

TEST(PrometheusTextTest, LeavesOutRepeatedSeriesKeepsEmptyFamilies) {
  Exposition e;
  Family& f = e.Add("m", MetricType::kGauge, "h");
  f.Add({{"k", "1"}}, 1);
  f.Add({{"k", "1"}}, 9);
  e.Add("empty", MetricType::kGauge, "nothing");
  const std::string text = e.Render();
  EXPECT_THAT(text, HasSubstr("m{k=\"1\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr(" 9\n")));
  EXPECT_THAT(text, HasSubstr("# HELP empty nothing\n# TYPE empty gauge\n"));
}

TEST(PrometheusTextTest, SanitizesLabelNamesOfSeries) {
  Exposition e;
  e.Add("m", MetricType::kGauge, "h").Add({{"block-bytes", "4096"}}, 1);
  EXPECT_THAT(e.Render(), HasSubstr("m{block_bytes=\"4096\"} 1\n"));
}

TEST(PrometheusTextTest, WritesHistogramsCumulativeWithInf) {
  Exposition e;
  e.Add("lat_seconds", MetricType::kHistogram, "h")
      .AddHistogram({{"op", "commit"}}, {{0.001, 0.01}, {2, 5}, 7, 0.125});
  EXPECT_EQ(e.Render(),
            "# HELP lat_seconds h\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{op=\"commit\",le=\"0.001\"} 2\n"
            "lat_seconds_bucket{op=\"commit\",le=\"0.01\"} 5\n"
            "lat_seconds_bucket{op=\"commit\",le=\"+Inf\"} 7\n"
            "lat_seconds_sum{op=\"commit\"} 0.125\n"
            "lat_seconds_count{op=\"commit\"} 7\n");
}

}  // namespace
}  // namespace fleetbench::controller::prometheus
