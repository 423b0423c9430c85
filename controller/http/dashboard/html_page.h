// controller/http/dashboard/html_page.h — the dashboard's HTML: escaping, the
// page frame (title, navigation, inline CSS, an optional refresh) and a
// table builder. Every piece of user input (node names, labels, params,
// query values) goes through HtmlEscape on its way onto a page; the
// functions here escape what they are given as text, and take markup only
// where the parameter says so. No script, no outside resource: pages read
// without any network past the controller.
#ifndef FLEETBENCH_CONTROLLER_HTTP_DASHBOARD_HTML_PAGE_H_
#define FLEETBENCH_CONTROLLER_HTTP_DASHBOARD_HTML_PAGE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fleetbench::controller::dashboard {

// & < > " ' as entities: safe in text and in quoted attribute values.
std::string HtmlEscape(absl::string_view text);
// A query value, percent-encoded (for links built from user input).
std::string UrlEncode(absl::string_view text);
// "/node?name=n%201" from a path and its parameters (in map order).
std::string Link(absl::string_view path, const std::map<std::string, std::string>& params);

struct PageFrame {
  std::string title;          // text
  std::string body_html;      // markup
  int refresh_seconds = 0;    // > 0: <meta http-equiv=refresh> (a run in progress)
  std::string principal;      // text: who is logged in, shown beside "log out"
};
// The whole document.
std::string RenderPage(const PageFrame& frame);

// The login form; `error` (text) shown above it when not empty; `next`
// (text) is where a successful login goes.
std::string RenderLoginPage(absl::string_view error, absl::string_view next);

// A table: header cells and rows of cells, each cell text unless marked.
class HtmlTable {
 public:
  struct Cell {
    std::string content;
    bool is_html = false;
    // data-* attributes (name without "data-"): what the browser test reads.
    std::map<std::string, std::string> data;
    bool numeric = false;  // right-aligned
  };
  explicit HtmlTable(std::vector<std::string> header, std::string id = "")
      : header_(std::move(header)), id_(std::move(id)) {}
  void AddRow(std::vector<Cell> row) { rows_.push_back(std::move(row)); }
  size_t size() const { return rows_.size(); }
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::string id_;
  std::vector<std::vector<Cell>> rows_;
};

HtmlTable::Cell TextCell(std::string text);
HtmlTable::Cell NumberCell(std::string text, std::map<std::string, std::string> data = {});
HtmlTable::Cell HtmlCell(std::string html);

// <h2>, <p class=note> and friends with the text escaped.
std::string Heading(absl::string_view text);
std::string Note(absl::string_view text);

}  // namespace fleetbench::controller::dashboard

#endif  // FLEETBENCH_CONTROLLER_HTTP_DASHBOARD_HTML_PAGE_H_
