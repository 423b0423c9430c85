#include "diagnosis/finding.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace fleetbench::diagnosis {

std::string SeverityName(v1::Severity severity) {
  switch (severity) {
    case v1::SEVERITY_INFO:
      return "info";
    case v1::SEVERITY_WARNING:
      return "warning";
    case v1::SEVERITY_CRITICAL:
      return "critical";
    default:
      return "unspecified";
  }
}

std::string WorstFindingOf(const v1::ListFindingsResponse& findings, const std::string& node) {
  int count = 0;
  const v1::Finding* worst = nullptr;
  for (const v1::Finding& f : findings.findings()) {
    if (f.subject().node() != node) continue;
    ++count;
    if (worst == nullptr) worst = &f;  // sorted worst first
  }
  if (worst == nullptr) return "-";
  std::string cell = absl::StrCat(SeverityName(worst->severity()), " ", worst->code());
  if (count > 1) absl::StrAppend(&cell, " (+", count - 1, ")");
  return cell;
}

absl::StatusOr<v1::Severity> ParseSeverity(absl::string_view name) {
  for (v1::Severity s :
       {v1::SEVERITY_INFO, v1::SEVERITY_WARNING, v1::SEVERITY_CRITICAL}) {
    if (SeverityName(s) == name) return s;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown severity '", name.substr(0, 64),
                   "': want info, warning or critical"));
}

v1::Severity WorstSeverity(const std::vector<v1::Finding>& findings) {
  v1::Severity worst = v1::SEVERITY_UNSPECIFIED;
  for (const v1::Finding& f : findings) worst = std::max(worst, f.severity());
  return worst;
}

Verdict VerdictOf(const std::vector<v1::Finding>& findings) {
  switch (WorstSeverity(findings)) {
    case v1::SEVERITY_CRITICAL:
      return Verdict::kFail;
    case v1::SEVERITY_WARNING:
      return Verdict::kWarn;
    default:
      return Verdict::kPass;
  }
}

std::string VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kFail:
      return "FAIL";
    case Verdict::kWarn:
      return "WARN";
    case Verdict::kPass:
      break;
  }
  return "PASS";
}

void SortFindings(std::vector<v1::Finding>* findings) {
  auto key = [](const v1::Finding& f) {
    const v1::FindingSubject& s = f.subject();
    return std::make_tuple(-static_cast<int>(f.severity()), s.node(), f.code(),
                           s.has_gpu_index() ? s.gpu_index() : -1, s.device(),
                           s.link());
  };
  std::stable_sort(findings->begin(), findings->end(),
                   [&](const v1::Finding& a, const v1::Finding& b) {
                     return key(a) < key(b);
                   });
}

}  // namespace fleetbench::diagnosis
