#include "common/metrics.h"

#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace fleetbench {
namespace {

TEST(MetricsTest, NamesAreUniqueAndEndWithTheirUnit) {
  std::set<std::string> seen;
  for (const MetricInfo& m : AllMetrics()) {
    EXPECT_TRUE(seen.insert(m.name).second) << "duplicate " << m.name;
    EXPECT_TRUE(absl::EndsWith(m.name, m.unit)) << m.name << " vs unit " << m.unit;
    EXPECT_NE(FindMetric(m.name), nullptr);
  }
  EXPECT_EQ(FindMetric("no.such.metric"), nullptr);
}

TEST(MetricsTest, DocsListEveryMetric) {
  std::ifstream in(std::string(FLEETBENCH_SOURCE_DIR) + "/docs/metrics.md");
  ASSERT_TRUE(in) << "docs/metrics.md missing";
  std::stringstream docs;
  docs << in.rdbuf();
  for (const MetricInfo& m : AllMetrics()) {
    EXPECT_NE(docs.str().find(std::string("`") + m.name + "`"), std::string::npos)
        << m.name << " is not in docs/metrics.md";
  }
}

TEST(MetricsTest, UnitOfMetricNameIsTheLastComponent) {
  EXPECT_EQ(UnitOfMetricName("gemm.cpu.fp32.tflops"), "tflops");
  EXPECT_EQ(UnitOfMetricName("nodots"), "");
}

}  // namespace
}  // namespace fleetbench
