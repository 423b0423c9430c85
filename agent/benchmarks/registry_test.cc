// Tests of the registry as a whole: every plugin declares well-formed
// metrics, no two plugins declare the same one, and docs/metrics.md lists
// exactly what the plugins declare, with the same unit, direction and
// description (a documented metric no plugin declares fails too); and
// every suite names registered plugins with parameters they accept.
#include "agent/benchmarks/registry.h"

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/suites.h"
#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

struct DocRow {
  std::string unit;
  std::string direction;
  std::string description;
};

// The rows of the "## Table" section of docs/metrics.md:
// | `name` | `unit` | higher is better | description |
std::map<std::string, DocRow> ReadDocsTable() {
  std::ifstream in(std::string(FLEETBENCH_SOURCE_DIR) + "/docs/metrics.md");
  EXPECT_TRUE(in) << "docs/metrics.md missing";
  std::map<std::string, DocRow> rows;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (absl::StartsWith(line, "## ")) in_table = line == "## Table";
    if (!in_table || !absl::StartsWith(line, "| `")) continue;
    std::vector<std::string> cells = absl::StrSplit(line, '|');
    // "", name, unit, direction, description, "".
    EXPECT_EQ(cells.size(), 6u) << "malformed row: " << line;
    if (cells.size() != 6) continue;
    for (std::string& c : cells) c = std::string(absl::StripAsciiWhitespace(c));
    const std::string name(
        absl::StripSuffix(absl::StripPrefix(cells[1], "`"), "`"));
    const std::string unit(
        absl::StripSuffix(absl::StripPrefix(cells[2], "`"), "`"));
    EXPECT_TRUE(rows.emplace(name, DocRow{unit, cells[3], cells[4]}).second)
        << name << " is listed twice in docs/metrics.md";
  }
  return rows;
}

std::string DirectionWords(v1::MetricDirection direction) {
  switch (direction) {
    case v1::METRIC_DIRECTION_HIGHER_IS_BETTER:
      return "higher is better";
    case v1::METRIC_DIRECTION_LOWER_IS_BETTER:
      return "lower is better";
    default:
      return "unspecified";
  }
}

TEST(RegistryTest, EveryPluginDeclaresWellFormedMetricsOfItsOwn) {
  std::set<std::string> seen;
  for (const auto& benchmark : MakeAllBenchmarks()) {
    const std::vector<MetricInfo> metrics = benchmark->metrics();
    // A plugin whose metrics are named at run time (a workload's own)
    // declares them as it runs, under its prefix.
    EXPECT_FALSE(metrics.empty() && benchmark->dynamic_metric_prefix().empty())
        << benchmark->name() << " declares no metric";
    for (const MetricInfo& m : metrics) {
      SCOPED_TRACE(std::string(benchmark->name()) + ": " + m.name);
      EXPECT_TRUE(seen.insert(m.name).second) << "declared twice";
      EXPECT_TRUE(absl::EndsWith(m.name, m.unit))
          << "the name ends with the unit " << m.unit;
      EXPECT_NE(std::string(m.name).find('.'), std::string::npos);
      EXPECT_NE(DirectionWords(m.direction), "unspecified");
      EXPECT_NE(std::string(m.description), "");
    }
  }
}

TEST(RegistryTest, DocsTableListsExactlyTheDeclaredMetrics) {
  const std::map<std::string, DocRow> docs = ReadDocsTable();
  ASSERT_FALSE(docs.empty()) << "no rows under \"## Table\" in docs/metrics.md";
  std::set<std::string> declared;
  for (const auto& benchmark : MakeAllBenchmarks()) {
    for (const MetricInfo& m : benchmark->metrics()) {
      declared.insert(m.name);
      auto row = docs.find(m.name);
      if (row == docs.end()) {
        ADD_FAILURE() << m.name << " (plugin " << benchmark->name()
                      << ") is not in docs/metrics.md; add the row:\n| `"
                      << m.name << "` | `" << m.unit << "` | "
                      << DirectionWords(m.direction) << " | " << m.description
                      << " |";
        continue;
      }
      EXPECT_EQ(row->second.unit, m.unit) << m.name;
      EXPECT_EQ(row->second.direction, DirectionWords(m.direction)) << m.name;
      EXPECT_EQ(row->second.description, m.description) << m.name;
    }
  }
  for (const auto& [name, row] : docs) {
    EXPECT_TRUE(declared.contains(name))
        << name
        << " is in docs/metrics.md but no registered plugin declares it";
  }
}

// A suite is data; a typo in it (a plugin renamed, a parameter out of
// range) must fail here, not on the first node that runs the suite.
TEST(RegistryTest, EverySuiteNamesPluginsWithParametersTheyAccept) {
  std::map<std::string, std::unique_ptr<Benchmark>> plugins;
  for (std::unique_ptr<Benchmark>& b : MakeAllBenchmarks()) {
    const std::string name = b->name();
    plugins.emplace(name, std::move(b));
  }
  for (const SuiteInfo& suite : AllSuites()) {
    for (const v1::BenchmarkSpec& spec : suite.benchmarks) {
      auto it = plugins.find(spec.name());
      ASSERT_NE(it, plugins.end()) << suite.name << ": " << spec.name();
      Params params(spec.params().begin(), spec.params().end());
      if (it->second->pairwise()) {
        // What the agent's server half gets from the controller
        // (controller/core/pairing.h): the pairing keys taken out, a role in.
        params.erase("pairing");
        params.erase("reference");
        params["role"] = "server";
      }
      EXPECT_TRUE(it->second->ValidateParams(params).ok())
          << suite.name << ": " << it->second->ValidateParams(params);
    }
  }
}

}  // namespace
}  // namespace fleetbench::agent
