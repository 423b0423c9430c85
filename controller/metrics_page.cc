#include "controller/metrics_page.h"

#include <sys/stat.h>

#include "absl/time/clock.h"
#include "common/logging.h"

namespace fleetbench::controller {

std::optional<int64_t> StoreFileBytes(const std::string& db_path) {
  if (db_path.empty()) return std::nullopt;
  struct stat st;
  if (stat(db_path.c_str(), &st) != 0) return std::nullopt;
  int64_t bytes = st.st_size;
  const std::string wal = db_path + "-wal";
  if (stat(wal.c_str(), &st) == 0) bytes += st.st_size;
  return bytes;
}

void MetricsPage::RefreshCostly(Costly* costly) {
  const absl::Time deadline = absl::Now() + options_.call_timeout;
  Costly fresh;
  auto note = [&fresh](const std::string& part, const absl::Status& s) {
    LOG(WARNING) << "/metrics: " << part << ": " << s;
    fresh.errors.push_back(part);
  };
  auto latest = core_->LatestSamples(deadline);
  if (latest.ok()) {
    fresh.latest = std::move(*latest);
  } else {
    note("latest_samples", latest.status());
  }
  for (const v1::MetricDescriptor& metric : fresh.latest.metrics) {
    v1::RankRequest request;
    request.set_metric(metric.name());
    request.set_by(v1::RANK_GROUPING_NODE);
    auto rank = core_->Rank(request, deadline);
    if (rank.ok()) {
      fresh.ranks[metric.name()] = std::move(*rank);
    } else if (!absl::IsNotFound(rank.status())) {
      note("rank", rank.status());
      break;
    }
  }
  auto findings = core_->ListFindings(v1::ListFindingsRequest(), deadline);
  if (findings.ok()) {
    fresh.findings.assign(findings->findings().begin(), findings->findings().end());
  } else {
    note("findings", findings.status());
  }
  auto runs = core_->CountRunsByState(deadline);
  if (runs.ok()) {
    fresh.runs_by_state = std::move(*runs);
  } else {
    note("runs", runs.status());
  }
  fresh.read = absl::Now();
  *costly = std::move(fresh);
}

std::string MetricsPage::Render() {
  absl::MutexLock lock(&mu_);
  if (absl::Now() - costly_.read >= options_.cache_ttl) RefreshCostly(&costly_);
  FleetSnapshot snapshot;
  snapshot.latest = costly_.latest;
  snapshot.ranks = costly_.ranks;
  snapshot.findings = costly_.findings;
  snapshot.runs_by_state = costly_.runs_by_state;
  snapshot.errors = costly_.errors;
  auto nodes = core_->ListNodes(absl::Now() + options_.call_timeout);
  if (nodes.ok()) {
    snapshot.nodes = std::move(*nodes);
  } else {
    snapshot.errors.push_back("nodes");
  }
  snapshot.stats = core_->GetStats();
  // Hook for schedules: copy the firing counters from snapshot.stats into
  // snapshot.schedule_firings here once Stats carries them.
  snapshot.store_bytes = StoreFileBytes(options_.db_path);
  prometheus::Exposition exposition;
  AddFleetFamilies(snapshot, &exposition);
  AddHealthFamilies(snapshot, &exposition);
  return exposition.Render();
}

}  // namespace fleetbench::controller
