#include "cli/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fleetbench::cli {

std::string Table::Render() const {
  std::vector<size_t> widths;
  for (const auto& row : rows_) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows_) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string FormatNumber(double value) {
  char buf[64];
  const double a = std::fabs(value);
  if (a != 0 && (a < 0.001 || a >= 1e9)) {
    std::snprintf(buf, sizeof(buf), "%.4g", value);
  } else if (a >= 1000) {
    std::snprintf(buf, sizeof(buf), "%.0f", value);
  } else if (a >= 10) {
    std::snprintf(buf, sizeof(buf), "%.2f", value);
  } else {
    std::snprintf(buf, sizeof(buf), "%.4f", value);
  }
  return buf;
}

}  // namespace fleetbench::cli
