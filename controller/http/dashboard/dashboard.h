// controller/http/dashboard/dashboard.h — the controller's web dashboard
// (docs/dashboard.md): HTML pages on the HTTP server (controller/
// http_server.h), charts drawn on the server as SVG, no script and nothing
// fetched from outside the controller.
//
// Contract: every page reads the fleet through FleetCore's public calls,
// the ones the CLI's RPCs use, and formats numbers with common/
// number_text.h as the CLI does, so a page shows what the CLI prints. All
// user input (names, labels, params, query values) is escaped on the page.
// Pages are GET only; a bad query parameter is a 400 page saying which, an
// unknown node or run a 404 page. Access is the HTTP server's: a viewer or
// above, by bearer header or login session.
//
// Threading: pages run on HTTP worker threads; each FleetCore call gives up
// after call_timeout.
#ifndef FLEETBENCH_CONTROLLER_HTTP_DASHBOARD_DASHBOARD_H_
#define FLEETBENCH_CONTROLLER_HTTP_DASHBOARD_DASHBOARD_H_

#include <map>
#include <set>
#include <string>

#include "absl/time/time.h"
#include "controller/core/fleet_core.h"
#include "controller/http/http_server.h"

namespace fleetbench::controller::dashboard {

struct DashboardOptions {
  absl::Duration call_timeout = absl::Seconds(10);
  // A run page refreshes itself this often while the run is going.
  int run_refresh_seconds = 3;
};

// Adds "/", "/rank", "/node", "/run", "/timeofday" and "/reliability" to
// `routes` and their
// paths to `page_paths`. `core` must outlive the routes.
void AddDashboardRoutes(FleetCore* core, const DashboardOptions& options,
                        std::map<std::string, HttpHandler>* routes,
                        std::set<std::string>* page_paths);

// The pages, one per file (page_*.cc).
HttpReply FleetPage(FleetCore& core, const DashboardOptions& options, const HttpRequest& request);
HttpReply RankPage(FleetCore& core, const DashboardOptions& options, const HttpRequest& request);
HttpReply NodePage(FleetCore& core, const DashboardOptions& options, const HttpRequest& request);
HttpReply RunPage(FleetCore& core, const DashboardOptions& options, const HttpRequest& request);
HttpReply TimeOfDayPage(FleetCore& core, const DashboardOptions& options,
                        const HttpRequest& request);
HttpReply ReliabilityPage(FleetCore& core, const DashboardOptions& options,
                          const HttpRequest& request);

}  // namespace fleetbench::controller::dashboard

#endif  // FLEETBENCH_CONTROLLER_HTTP_DASHBOARD_DASHBOARD_H_
