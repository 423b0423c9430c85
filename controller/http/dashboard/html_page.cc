#include "controller/http/dashboard/html_page.h"

#include "absl/strings/str_cat.h"

namespace fleetbench::controller::dashboard {
namespace {

// Small and inline: no stylesheet to fetch.
constexpr char kStyle[] =
    "body{font-family:system-ui,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}"
    "header{background:#1d2430;color:#fff;padding:8px 16px;display:flex;gap:16px;"
    "align-items:center}header a{color:#cfe0ff;text-decoration:none}"
    "header .who{margin-left:auto;color:#aab}main{padding:12px 16px}"
    "table{border-collapse:collapse;background:#fff;margin:8px 0}"
    "th,td{border:1px solid #d5d9e0;padding:3px 8px;text-align:left;font-size:14px}"
    "th{background:#eef1f5}td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".online{color:#1a7f37}.offline{color:#b42318}.note{color:#556}"
    ".critical{color:#b42318;font-weight:bold}.warning{color:#9a6700}"
    "form.inline{display:flex;gap:8px;align-items:end;flex-wrap:wrap;margin:8px 0}"
    "form.inline label{display:flex;flex-direction:column;font-size:13px}"
    "svg{background:#fff;border:1px solid #d5d9e0;margin:6px 0}"
    ".error{color:#b42318}";

}  // namespace

std::string HtmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string UrlEncode(absl::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string Link(absl::string_view path, const std::map<std::string, std::string>& params) {
  std::string out(path);
  char sep = '?';
  for (const auto& [key, value] : params) {
    absl::StrAppend(&out, std::string(1, sep), UrlEncode(key), "=", UrlEncode(value));
    sep = '&';
  }
  return out;
}

std::string RenderPage(const PageFrame& frame) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  // No favicon request (a 404 would be a console error).
  absl::StrAppend(&out, "<link rel=\"icon\" href=\"data:,\">");
  if (frame.refresh_seconds > 0) {
    absl::StrAppend(&out, "<meta http-equiv=\"refresh\" content=\"", frame.refresh_seconds,
                    "\">");
  }
  absl::StrAppend(&out, "<title>", HtmlEscape(frame.title), " — fleetbench</title><style>",
                  kStyle, "</style></head><body><header><strong>fleetbench</strong>",
                  "<a href=\"/\">fleet</a><a href=\"/rank\">ranking</a>",
                  "<a href=\"/timeofday\">time of day</a>",
                  "<a href=\"/reliability\">reliability</a>");
  if (!frame.principal.empty()) {
    absl::StrAppend(&out, "<span class=\"who\">", HtmlEscape(frame.principal),
                    "</span><a href=\"/logout\">log out</a>");
  }
  absl::StrAppend(&out, "</header><main><h1>", HtmlEscape(frame.title), "</h1>", frame.body_html,
                  "</main></body></html>\n");
  return out;
}

std::string RenderLoginPage(absl::string_view error, absl::string_view next) {
  std::string body;
  if (!error.empty()) absl::StrAppend(&body, "<p class=\"error\" id=\"error\">", HtmlEscape(error), "</p>");
  absl::StrAppend(&body,
                  "<form method=\"post\" action=\"/login\" class=\"inline\">"
                  "<input type=\"hidden\" name=\"next\" value=\"",
                  HtmlEscape(next),
                  "\"><label>API token (viewer or above)"
                  "<input type=\"password\" name=\"token\" autocomplete=\"off\" required></label>"
                  "<button type=\"submit\">log in</button></form>",
                  Note("The browser keeps a session cookie for 12 hours; revoking the token or "
                       "restarting the controller ends the session."));
  PageFrame frame;
  frame.title = "log in";
  frame.body_html = std::move(body);
  return RenderPage(frame);
}

std::string HtmlTable::Render() const {
  std::string out = "<table";
  if (!id_.empty()) absl::StrAppend(&out, " id=\"", HtmlEscape(id_), "\"");
  out += "><thead><tr>";
  for (const std::string& h : header_) absl::StrAppend(&out, "<th>", HtmlEscape(h), "</th>");
  out += "</tr></thead><tbody>";
  for (const auto& row : rows_) {
    out += "<tr>";
    for (const Cell& c : row) {
      out += "<td";
      if (c.numeric) out += " class=\"num\"";
      for (const auto& [key, value] : c.data) {
        // Attribute names are the code's own; only letters, digits and '-'.
        std::string name;
        for (char ch : key) {
          if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-') name += ch;
        }
        if (!name.empty()) absl::StrAppend(&out, " data-", name, "=\"", HtmlEscape(value), "\"");
      }
      absl::StrAppend(&out, ">", c.is_html ? c.content : HtmlEscape(c.content), "</td>");
    }
    out += "</tr>";
  }
  out += "</tbody></table>";
  return out;
}

HtmlTable::Cell TextCell(std::string text) { return {std::move(text), false, {}, false}; }
HtmlTable::Cell NumberCell(std::string text, std::map<std::string, std::string> data) {
  return {std::move(text), false, std::move(data), true};
}
HtmlTable::Cell HtmlCell(std::string html) { return {std::move(html), true, {}, false}; }

std::string Heading(absl::string_view text) { return absl::StrCat("<h2>", HtmlEscape(text), "</h2>"); }
std::string Note(absl::string_view text) {
  return absl::StrCat("<p class=\"note\">", HtmlEscape(text), "</p>");
}

}  // namespace fleetbench::controller::dashboard
