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

namespace {

std::string SubjectText(const v1::FindingSubject& s) {
  std::string text = s.node();
  if (s.has_gpu_index()) absl::StrAppend(&text, " GPU ", s.gpu_index());
  if (!s.device().empty()) absl::StrAppend(&text, " ", s.device());
  if (!s.link().empty()) absl::StrAppend(&text, " ", s.link());
  return text;
}

}  // namespace

std::string FormatFinding(const v1::Finding& f, bool with_subject) {
  std::string text =
      with_subject
          ? absl::StrFormat("%-9s %s  %s  %s\n", diagnosis::SeverityName(f.severity()),
                            SubjectText(f.subject()), f.code(), f.summary())
          : absl::StrFormat("%-9s %s  %s\n", diagnosis::SeverityName(f.severity()),
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
  if (with_subject && !f.run_id().empty()) {
    absl::StrAppend(&text, "    run: ", f.run_id(), "\n");
  }
  return text;
}

std::string RenderFindings(const v1::ListFindingsResponse& findings) {
  std::string out;
  for (const v1::Finding& f : findings.findings()) {
    absl::StrAppend(&out, FormatFinding(f, /*with_subject=*/true));
  }
  for (const std::string& n : findings.notes()) absl::StrAppend(&out, "note: ", n, "\n");
  return out;
}


}  // namespace fleetbench::cli
