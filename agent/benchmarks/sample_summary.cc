#include "agent/benchmarks/sample_summary.h"

#include "absl/strings/str_cat.h"
#include "common/units.h"

namespace fleetbench::agent {

void AddSummaryParams(const Summary& summary, absl::string_view unit,
                      google::protobuf::Map<std::string, std::string>* params) {
  auto& p = *params;
  p["runs"] = absl::StrCat(summary.count);
  p[absl::StrCat("min_", unit)] = FormatNumber(summary.min);
  p[absl::StrCat("max_", unit)] = FormatNumber(summary.max);
  p[absl::StrCat("p10_", unit)] = FormatNumber(summary.p10);
  p[absl::StrCat("p90_", unit)] = FormatNumber(summary.p90);
  p["spread"] = FormatNumber(summary.spread);
}

}  // namespace fleetbench::agent
