// cli/table.h — aligned plain-text tables for human output.
#ifndef FLEETBENCH_TOOLS_TABLE_H_
#define FLEETBENCH_TOOLS_TABLE_H_

#include <string>
#include <vector>

namespace fleetbench::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

// For people reading a table: common/number_text.h's FormatForPeople (the
// dashboard's pages format with it too). Not common/units.h's FormatNumber
// ("%.6g"), which writes the param values stored with samples.
std::string FormatNumber(double value);

}  // namespace fleetbench::cli

#endif  // FLEETBENCH_TOOLS_TABLE_H_
