#include "diagnosis/finding.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::diagnosis {
namespace {

v1::Finding Make(const std::string& node, const std::string& code,
                 v1::Severity severity) {
  v1::Finding f;
  f.set_code(code);
  f.set_severity(severity);
  f.mutable_subject()->set_node(node);
  return f;
}

TEST(SeverityTest, NamesRoundTripAndUnknownWordsAreRefused) {
  for (v1::Severity s :
       {v1::SEVERITY_INFO, v1::SEVERITY_WARNING, v1::SEVERITY_CRITICAL}) {
    absl::StatusOr<v1::Severity> parsed = ParseSeverity(SeverityName(s));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, s);
  }
  absl::StatusOr<v1::Severity> bad = ParseSeverity("severe");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()),
              testing::HasSubstr("info, warning or critical"));
}

TEST(VerdictTest, WorstFindingDecides) {
  EXPECT_EQ(VerdictOf({}), Verdict::kPass);
  EXPECT_EQ(VerdictOf({Make("a", "disk.rotational", v1::SEVERITY_INFO)}),
            Verdict::kPass);
  EXPECT_EQ(VerdictOf({Make("a", "disk.rotational", v1::SEVERITY_INFO),
                       Make("a", "gpu.power_capped", v1::SEVERITY_WARNING)}),
            Verdict::kWarn);
  EXPECT_EQ(VerdictOf({Make("a", "gpu.ecc_errors", v1::SEVERITY_CRITICAL),
                       Make("a", "gpu.power_capped", v1::SEVERITY_WARNING)}),
            Verdict::kFail);
  EXPECT_EQ(VerdictName(Verdict::kWarn), "WARN");
}

TEST(SortFindingsTest, WorstFirstThenNodeAndCode) {
  std::vector<v1::Finding> f = {Make("b", "x.a", v1::SEVERITY_INFO),
                                Make("b", "x.b", v1::SEVERITY_CRITICAL),
                                Make("a", "x.c", v1::SEVERITY_INFO),
                                Make("a", "x.a", v1::SEVERITY_INFO)};
  SortFindings(&f);
  std::vector<std::string> order;
  for (const v1::Finding& x : f) order.push_back(x.subject().node() + x.code());
  EXPECT_THAT(order, testing::ElementsAre("bx.b", "ax.a", "ax.c", "bx.a"));
  EXPECT_EQ(WorstSeverity(f), v1::SEVERITY_CRITICAL);
}

}  // namespace
}  // namespace fleetbench::diagnosis
