// controller/http/dashboard/page_common.h — what the pages share: replies, query
// parameters, links to nodes and runs, and the cells the CLI prints the same
// way (labels, params, times, the worst finding).
#ifndef FLEETBENCH_CONTROLLER_HTTP_DASHBOARD_PAGE_COMMON_H_
#define FLEETBENCH_CONTROLLER_HTTP_DASHBOARD_PAGE_COMMON_H_

#include <array>
#include <cstdint>
#include <vector>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "controller/http/dashboard/dashboard.h"
#include "controller/http/dashboard/html_page.h"
#include "fleetbench/v1/finding.pb.h"
#include "google/protobuf/map.h"

namespace fleetbench::controller::dashboard {

// The page, with who is logged in.
HttpReply HtmlReply(const HttpRequest& request, std::string title, std::string body_html,
                    int refresh_seconds = 0);
// A page that says what went wrong: 400 for INVALID_ARGUMENT, 404 for
// NOT_FOUND, 503 otherwise (the controller could not answer in time).
HttpReply ErrorReply(const HttpRequest& request, const std::string& title,
                     const absl::Status& status);
// The first value of a query parameter, "" when absent.
std::string Param(const HttpRequest& request, const std::string& key);
absl::Time Deadline(const DashboardOptions& options);
// The `window` parameter as the CLI's --window reads it ("7d", "24h"): 0
// (the controller's default) when absent, INVALID_ARGUMENT when bad.
absl::StatusOr<int64_t> WindowMillis(const HttpRequest& request);
// A <form method=get> of labelled text inputs (name, label, value) and a
// submit button; values escaped.
std::string QueryForm(const std::string& action,
                      const std::vector<std::array<std::string, 3>>& fields);

// <a href="/node?name=..">name</a>, escaped both ways.
std::string NodeLink(const std::string& node);
std::string RunLink(const std::string& run_id);
// "2026-12-01 18:30:00" (UTC), as the CLI prints times.
std::string TimeText(int64_t unix_ms);
// Findings as a table (severity, subject, code, summary, evidence).
std::string FindingsTable(const v1::ListFindingsResponse& findings, const std::string& id);

}  // namespace fleetbench::controller::dashboard

#endif  // FLEETBENCH_CONTROLLER_HTTP_DASHBOARD_PAGE_COMMON_H_
