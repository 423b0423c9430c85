#include "cli/finding_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/units.h"
#include "diagnosis/finding.h"

namespace fleetbench::cli {

std::string FormatEvidence(const v1::Evidence& e) {
  // A flag (MIG on, rotational) reads as yes/no, not "1 flag".
  const bool flag = e.unit() == "flag";
  std::string text = absl::StrCat(
      e.name(), ": ",
      flag ? (e.measured() != 0 ? "yes" : "no") : FormatNumber(e.measured()));
  if (!flag && !e.unit().empty()) absl::StrAppend(&text, " ", e.unit());
  if (e.has_expected()) {
    absl::StrAppend(&text, " (expected ", FormatNumber(e.expected()),
                    e.unit().empty() ? "" : " ", e.unit());
    if (!e.expectation_source().empty()) {
      absl::StrAppend(&text, ": ", e.expectation_source());
    }
    absl::StrAppend(&text, ")");
  } else if (!e.expectation_source().empty()) {
    absl::StrAppend(&text, " (", e.expectation_source(), ")");
  }
  return text;
}

std::string FormatFinding(const v1::Finding& f) {
  std::string text =
      absl::StrFormat("%-9s %s  %s\n", diagnosis::SeverityName(f.severity()),
                      f.code(), f.summary());
  for (const v1::Evidence& e : f.evidence()) {
    absl::StrAppend(&text, "    ", FormatEvidence(e), "\n");
  }
  for (const std::string& c : f.context())
    absl::StrAppend(&text, "    ", c, "\n");
  if (!f.effect().empty())
    absl::StrAppend(&text, "    effect: ", f.effect(), "\n");
  if (!f.suggestion().empty()) {
    absl::StrAppend(&text, "    suggestion: ", f.suggestion(), "\n");
  }
  return text;
}

}  // namespace fleetbench::cli
