// controller/http/metrics_page.h — the body of GET /metrics: asks FleetCore for
// a FleetSnapshot and renders it (controller/http/fleet_exposition.h).
//
// Threading: Render() runs on an HTTP worker thread and reads the store only
// through FleetCore's public calls (fleet_core.h, Threading). One scrape
// builds at a time; others wait for it.
//
// Cost: what is read from the history (latest samples, ranks, findings) is
// read again only when reports were committed since (FleetCore::Stats::
// commits) and cache_ttl has passed, or when max_age has passed (findings
// also follow facts and time windows). For 1,000 nodes of 100 runs the
// findings take most of that read (docs/operations.md, Cost of a scrape). Runs by state are
// read every cache_ttl; nodes, counters and the file size at every scrape.
#ifndef FLEETBENCH_CONTROLLER_HTTP_METRICS_PAGE_H_
#define FLEETBENCH_CONTROLLER_HTTP_METRICS_PAGE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "controller/core/fleet_core.h"
#include "controller/http/fleet_exposition.h"

namespace fleetbench::controller {

struct MetricsPageOptions {
  // The SQLite file whose size is shown ("" for none).
  std::string db_path;
  absl::Duration cache_ttl = absl::Seconds(15);
  absl::Duration max_age = absl::Minutes(5);
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
  struct History {
    absl::Time read = absl::InfinitePast();
    int64_t commits = -1;  // FleetCore::Stats::commits when read
    FleetCore::LatestMeasurements latest;
    std::map<std::string, v1::RankResponse> ranks;
    std::vector<v1::Finding> findings;
    v1::ReliabilityResponse reliability;
    std::vector<std::string> errors;
  };
  void RefreshHistory(int64_t commits, History* history);

  FleetCore* const core_;
  const MetricsPageOptions options_;
  absl::Mutex mu_;
  History history_ ABSL_GUARDED_BY(mu_);
  absl::Time runs_read_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool runs_ok_ ABSL_GUARDED_BY(mu_) = true;
  std::map<std::string, int64_t> runs_by_state_ ABSL_GUARDED_BY(mu_);
};

// Bytes of `db_path` plus its "-wal" file; nullopt when the file cannot be
// read.
std::optional<int64_t> StoreFileBytes(const std::string& db_path);

}  // namespace fleetbench::controller

#endif  // FLEETBENCH_CONTROLLER_HTTP_METRICS_PAGE_H_
