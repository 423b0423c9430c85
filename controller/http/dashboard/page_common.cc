#include "controller/http/dashboard/page_common.h"

#include <map>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/units.h"
#include "diagnosis/finding.h"

namespace fleetbench::controller::dashboard {

HttpReply HtmlReply(const HttpRequest& request, std::string title, std::string body_html,
                    int refresh_seconds) {
  PageFrame frame;
  frame.title = std::move(title);
  frame.body_html = std::move(body_html);
  frame.refresh_seconds = refresh_seconds;
  frame.principal = request.principal.name;
  return HttpReply{200, "text/html; charset=utf-8", RenderPage(frame), ""};
}

HttpReply ErrorReply(const HttpRequest& request, const std::string& title,
                     const absl::Status& status) {
  HttpReply reply = HtmlReply(
      request, title,
      absl::StrCat("<p class=\"error\" id=\"error\">", HtmlEscape(status.message()), "</p>"));
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument: reply.status = 400; break;
    case absl::StatusCode::kNotFound: reply.status = 404; break;
    default: reply.status = 503;
  }
  return reply;
}

std::string Param(const HttpRequest& request, const std::string& key) {
  auto it = request.params.find(key);
  return it == request.params.end() ? "" : it->second;
}

absl::Time Deadline(const DashboardOptions& options) { return absl::Now() + options.call_timeout; }

absl::StatusOr<int64_t> WindowMillis(const HttpRequest& request) {
  const std::string w = Param(request, "window");
  if (w.empty()) return 0;
  constexpr int64_t kMaxWindowDays = 3650;  // as the CLI's --window
  const absl::Duration max = absl::Hours(24) * kMaxWindowDays;
  int64_t days = 0;
  absl::Duration d;
  if (w.back() == 'd' && absl::SimpleAtoi(w.substr(0, w.size() - 1), &days)) {
    if (days > 0 && days <= kMaxWindowDays) return absl::ToInt64Milliseconds(absl::Hours(24) * days);
  } else if (absl::ParseDuration(w, &d) && d > absl::ZeroDuration() && d <= max) {
    return absl::ToInt64Milliseconds(d);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("window wants a duration like 7d or 24h, at most ", kMaxWindowDays, "d; got '",
                   w.substr(0, 64), "'"));
}

std::string QueryForm(const std::string& action,
                      const std::vector<std::array<std::string, 3>>& fields) {
  std::string out = absl::StrCat("<form method=\"get\" action=\"", HtmlEscape(action),
                                 "\" class=\"inline\">");
  for (const auto& [name, label, value] : fields) {
    absl::StrAppend(&out, "<label>", HtmlEscape(label), "<input name=\"", HtmlEscape(name),
                    "\" value=\"", HtmlEscape(value), "\"></label>");
  }
  absl::StrAppend(&out, "<button type=\"submit\">show</button></form>");
  return out;
}

std::string NodeLink(const std::string& node) {
  return absl::StrCat("<a href=\"", HtmlEscape(Link("/node", {{"name", node}})), "\">",
                      HtmlEscape(node), "</a>");
}

std::string RunLink(const std::string& run_id) {
  return absl::StrCat("<a href=\"", HtmlEscape(Link("/run", {{"id", run_id}})), "\">",
                      HtmlEscape(run_id), "</a>");
}

std::string TimeText(int64_t unix_ms) {
  if (unix_ms == 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::FromUnixMillis(unix_ms), absl::UTCTimeZone());
}

namespace {

std::string EvidenceText(const v1::Evidence& e) {
  const bool flag = e.unit() == "flag";
  std::string text = absl::StrCat(
      e.name(), ": ", flag ? (e.measured() != 0 ? "yes" : "no") : FormatNumber(e.measured()));
  if (!flag && !e.unit().empty()) absl::StrAppend(&text, " ", e.unit());
  if (e.has_expected()) {
    absl::StrAppend(&text, " (expected ", FormatNumber(e.expected()),
                    e.unit().empty() ? "" : " ", e.unit(), ")");
  }
  return text;
}

}  // namespace

std::string FindingsTable(const v1::ListFindingsResponse& findings, const std::string& id) {
  if (findings.findings().empty()) return Note("no findings");
  HtmlTable table({"SEVERITY", "SUBJECT", "CODE", "SUMMARY", "EVIDENCE"}, id);
  for (const v1::Finding& f : findings.findings()) {
    const std::string severity = diagnosis::SeverityName(f.severity());
    std::string subject = f.subject().node();
    if (f.subject().has_gpu_index()) absl::StrAppend(&subject, " GPU ", f.subject().gpu_index());
    if (!f.subject().device().empty()) absl::StrAppend(&subject, " ", f.subject().device());
    if (!f.subject().link().empty()) absl::StrAppend(&subject, " ", f.subject().link());
    std::vector<std::string> evidence;
    for (const v1::Evidence& e : f.evidence()) evidence.push_back(HtmlEscape(EvidenceText(e)));
    table.AddRow({HtmlCell(absl::StrCat("<span class=\"", HtmlEscape(severity), "\">",
                                        HtmlEscape(severity), "</span>")),
                  TextCell(subject), TextCell(f.code()), TextCell(f.summary()),
                  HtmlCell(absl::StrJoin(evidence, "<br>"))});
  }
  std::string out = table.Render();
  for (const std::string& n : findings.notes()) absl::StrAppend(&out, Note("note: " + n));
  return out;
}

}  // namespace fleetbench::controller::dashboard
