// docs/findings.md's "Fleet rules" section and FleetRuleTable() list the same
// rules with the same severity, source and threshold, both ways.
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "diagnosis/fleet_rules.h"
#include "gtest/gtest.h"

namespace fleetbench::diagnosis {
namespace {

struct DocRow {
  std::string severity;
  std::string source;
  std::string threshold;
};

// The rows of the first table under "## Fleet rules", by code.
std::map<std::string, DocRow> FleetSection() {
  std::ifstream in(std::string(FLEETBENCH_SOURCE_DIR) + "/docs/findings.md");
  std::map<std::string, DocRow> rows;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) {
      inside = line == "## Fleet rules";
      continue;
    }
    if (!inside || line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells = absl::StrSplit(line, '|');
    // "", code, severity, source, threshold, ""
    if (cells.size() != 6) {
      ADD_FAILURE() << "a row of four cells expected: " << line;
      continue;
    }
    for (std::string& c : cells) absl::StripAsciiWhitespace(&c);
    std::string code(absl::StripSuffix(absl::StripPrefix(cells[1], "`"), "`"));
    rows[code] = {cells[2], cells[3], cells[4]};
  }
  return rows;
}

TEST(FleetRulesDocTest, TableAndDocAgree) {
  const std::map<std::string, DocRow> doc = FleetSection();
  ASSERT_FALSE(doc.empty()) << "no \"## Fleet rules\" table in docs/findings.md";
  for (const RuleInfo& rule : FleetRuleTable()) {
    auto it = doc.find(std::string(rule.code));
    if (it == doc.end()) {
      ADD_FAILURE() << "docs/findings.md lacks the row:\n| `" << rule.code << "` | "
                    << SeverityName(rule.severity) << " | " << rule.source << " | "
                    << rule.threshold << " |";
      continue;
    }
    EXPECT_EQ(it->second.severity, SeverityName(rule.severity)) << rule.code;
    EXPECT_EQ(it->second.source, rule.source) << rule.code;
    EXPECT_EQ(it->second.threshold, rule.threshold) << rule.code;
  }
  for (const auto& [code, row] : doc) {
    bool known = false;
    for (const RuleInfo& rule : FleetRuleTable()) known |= rule.code == code;
    EXPECT_TRUE(known) << "docs/findings.md lists " << code << ", which FleetRuleTable() lacks";
  }
}

}  // namespace
}  // namespace fleetbench::diagnosis
