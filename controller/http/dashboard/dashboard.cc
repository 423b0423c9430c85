#include "controller/http/dashboard/dashboard.h"

namespace fleetbench::controller::dashboard {

void AddDashboardRoutes(FleetCore* core, const DashboardOptions& options,
                        std::map<std::string, HttpHandler>* routes,
                        std::set<std::string>* page_paths) {
  using Page = HttpReply (*)(FleetCore&, const DashboardOptions&, const HttpRequest&);
  const std::pair<const char*, Page> pages[] = {{"/", &FleetPage},
                                                 {"/rank", &RankPage},
                                                 {"/node", &NodePage},
                                                 {"/run", &RunPage},
                                                 {"/timeofday", &TimeOfDayPage},
                                                 {"/reliability", &ReliabilityPage}};
  for (const auto& [path, page] : pages) {
    (*routes)[path] = [core, options, page = page](const HttpRequest& request) {
      return page(*core, options, request);
    };
    page_paths->insert(path);
  }
}

}  // namespace fleetbench::controller::dashboard
