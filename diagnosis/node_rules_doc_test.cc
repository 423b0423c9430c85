// docs/findings.md and NodeRuleTable() agree both ways: every rule has its
// row in "## Node rules" with the same severity, source and threshold, and
// every row there is a rule. The checklist sections name only known codes.
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "diagnosis/node_rules.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetbench::diagnosis {
namespace {

struct DocRow {
  std::string severity, source, threshold;
};

std::string ReadDoc() {
  std::ifstream in(std::string(FLEETBENCH_SOURCE_DIR) + "/docs/findings.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The lines of the section headed `heading` ("## Node rules"), up to the next
// "## " heading.
std::vector<std::string> Section(const std::string& doc,
                                 const std::string& heading) {
  std::vector<std::string> lines;
  bool in = false;
  for (absl::string_view line : absl::StrSplit(doc, '\n')) {
    if (absl::StartsWith(line, "## ")) {
      in = line == heading;
      continue;
    }
    if (in) lines.emplace_back(line);
  }
  return lines;
}

// "| `code` | severity | source | threshold |" rows of a section.
std::map<std::string, DocRow> RuleRows(const std::vector<std::string>& lines) {
  std::map<std::string, DocRow> rows;
  for (const std::string& line : lines) {
    if (!absl::StartsWith(line, "| `")) continue;
    std::vector<std::string> cells = absl::StrSplit(line, " | ");
    EXPECT_EQ(cells.size(), 4u) << "malformed row: " << line;
    if (cells.size() != 4) continue;
    std::string code(absl::StripPrefix(cells[0], "| `"));
    code = std::string(absl::StripSuffix(code, "`"));
    std::string threshold(absl::StripSuffix(cells[3], " |"));
    EXPECT_EQ(rows.count(code), 0u) << "two rows for " << code;
    rows[code] = DocRow{cells[1], cells[2], threshold};
  }
  return rows;
}

TEST(NodeRulesDocTest, TableAndDocAgreeBothWays) {
  const std::string doc = ReadDoc();
  ASSERT_FALSE(doc.empty()) << "docs/findings.md not found";
  const std::map<std::string, DocRow> rows =
      RuleRows(Section(doc, "## Node rules"));
  std::set<std::string> codes;
  for (const RuleInfo& rule : NodeRuleTable()) {
    const std::string code(rule.code);
    EXPECT_TRUE(codes.insert(code).second) << "two rules named " << code;
    auto row = rows.find(code);
    if (row == rows.end()) {
      ADD_FAILURE() << "docs/findings.md lacks the row:\n| `" << code << "` | "
                    << SeverityName(rule.severity) << " | " << rule.source
                    << " | " << rule.threshold << " |";
      continue;
    }
    EXPECT_EQ(row->second.severity, SeverityName(rule.severity)) << code;
    EXPECT_EQ(row->second.source, rule.source) << code;
    EXPECT_EQ(row->second.threshold, rule.threshold) << code;
  }
  for (const auto& [code, row] : rows) {
    EXPECT_TRUE(codes.count(code))
        << "docs/findings.md lists " << code << ", which no node rule has";
  }
}

TEST(NodeRulesDocTest, FleetRulesSectionExists) {
  EXPECT_THAT(ReadDoc(), ::testing::HasSubstr("\n## Fleet rules\n"));
}

TEST(NodeRulesDocTest, ChecklistsNameOnlyKnownCodes) {
  // Codes the fleet rules and the multi-node verdicts own are named there
  // too; every other dotted code in backticks must be a node rule.
  std::set<std::string> known = {"fleet.outlier", "node.regression",
                                 "node.time_of_day"};
  for (const RuleInfo& rule : NodeRuleTable())
    known.insert(std::string(rule.code));
  const std::vector<std::string> lines =
      Section(ReadDoc(), "## The checklists, rule by rule");
  ASSERT_FALSE(lines.empty());
  int named = 0;
  for (const std::string& line : lines) {
    if (!absl::StartsWith(line, "|")) continue;
    for (absl::string_view part : absl::StrSplit(line, '`')) {
      // Odd parts are inside backticks; only code-shaped ones count.
      if (part.find('.') == absl::string_view::npos ||
          part.find(' ') != absl::string_view::npos ||
          absl::StrContains(part, "*") || absl::StrContains(part, "=")) {
        continue;
      }
      if (absl::StartsWith(part, "gpu.") || absl::StartsWith(part, "pcie.") ||
          absl::StartsWith(part, "disk.") || absl::StartsWith(part, "net.") ||
          absl::StartsWith(part, "host.") || absl::StartsWith(part, "stack.") ||
          absl::StartsWith(part, "node.") || absl::StartsWith(part, "fleet.")) {
        if (absl::StrContains(part, "_GBps") ||
            absl::StrContains(part, ".Gbps"))
          continue;
        EXPECT_TRUE(known.count(std::string(part))) << "unknown code " << part;
        ++named;
      }
    }
  }
  EXPECT_GT(named, 20);
}

}  // namespace
}  // namespace fleetbench::diagnosis
