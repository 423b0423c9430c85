// controller/metrics_page.h — the body of GET /metrics: asks FleetCore for
// a FleetSnapshot and renders it (controller/fleet_exposition.h).
//
// Threading: Render() runs on an HTTP worker thread and reads the store only
// through FleetCore's public calls (fleet_core.h, Threading). The costly
// parts (latest samples, ranks, findings, runs by state: queries over the
// history) are kept for `cache_ttl`, so scrapes from several Prometheus
// servers cost one read; the rest (nodes, counters, file size) is read at
// every scrape. One scrape builds at a time; others wait for it.
#ifndef FLEETBENCH_CONTROLLER_METRICS_PAGE_H_
#define FLEETBENCH_CONTROLLER_METRICS_PAGE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "controller/fleet_core.h"
#include "controller/fleet_exposition.h"

namespace fleetbench::controller {

struct MetricsPageOptions {
  // The SQLite file whose size is shown ("" for none).
  std::string db_path;
  absl::Duration cache_ttl = absl::Seconds(10);
  // Each FleetCore call of a scrape gives up after this long.
  absl::Duration call_timeout = absl::Seconds(10);
};

class MetricsPage {
 public:
  // `core` must outlive the page.
  MetricsPage(FleetCore* core, MetricsPageOptions options)
      : core_(core), options_(std::move(options)) {}

  // The exposition text (prometheus::kContentType).
  std::string Render();

 private:
  struct Costly {
    absl::Time read = absl::InfinitePast();
    FleetCore::LatestMeasurements latest;
    std::map<std::string, v1::RankResponse> ranks;
    std::vector<v1::Finding> findings;
    std::map<std::string, int64_t> runs_by_state;
    std::vector<std::string> errors;
  };
  void RefreshCostly(Costly* costly);

  FleetCore* const core_;
  const MetricsPageOptions options_;
  absl::Mutex mu_;
  Costly costly_ ABSL_GUARDED_BY(mu_);
};

// Bytes of `db_path` plus its "-wal" file; nullopt when the file cannot be
// read.
std::optional<int64_t> StoreFileBytes(const std::string& db_path);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_METRICS_PAGE_H_
