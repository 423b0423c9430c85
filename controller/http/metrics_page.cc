#include "controller/http/metrics_page.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
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

void MetricsPage::RefreshHistory(int64_t commits, History* history) {
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + options_.call_timeout;
  History fresh;
  // How long each part took, logged when the whole is slow.
  std::string took;
  absl::Time part_start = start;
  auto lap = [&](const char* part) {
    const absl::Time now = absl::Now();
    absl::StrAppend(&took, took.empty() ? "" : ", ", part, " ",
                    absl::FormatDuration(now - part_start));
    part_start = now;
  };
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
  lap("latest samples");
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
  lap("ranks");
  auto findings = core_->ListFindings(v1::ListFindingsRequest(), deadline);
  if (findings.ok()) {
    fresh.findings.assign(findings->findings().begin(), findings->findings().end());
  } else {
    note("findings", findings.status());
  }
  lap("findings");
  v1::ReliabilityRequest by_node;
  by_node.set_by(v1::RANK_GROUPING_NODE);
  auto reliability = core_->Reliability(by_node, deadline);
  if (reliability.ok()) {
    fresh.reliability = std::move(*reliability);
  } else {
    note("reliability", reliability.status());
  }
  lap("reliability");
  fresh.read = absl::Now();
  fresh.commits = commits;
  if (fresh.read - start > absl::Seconds(1)) {
    LOG(WARNING) << "/metrics: reading the history took " << absl::FormatDuration(fresh.read - start)
                 << " (" << took << ")";
  }
  *history = std::move(fresh);
}

std::string MetricsPage::Render() {
  absl::MutexLock lock(&mu_);
  FleetSnapshot snapshot;
  // Read before the history, so a commit made while it is read brings
  // another read at the next scrape past the TTL.
  snapshot.stats = core_->GetStats();
  const absl::Time now = absl::Now();
  const absl::Duration age = now - history_.read;
  if (age >= options_.max_age ||
      (age >= options_.cache_ttl && snapshot.stats.commits != history_.commits)) {
    RefreshHistory(snapshot.stats.commits, &history_);
  }
  if (now - runs_read_ >= options_.cache_ttl) {
    auto runs = core_->CountRunsByState(now + options_.call_timeout);
    runs_ok_ = runs.ok();
    if (runs.ok()) {
      runs_by_state_ = std::move(*runs);
    } else {
      LOG(WARNING) << "/metrics: runs: " << runs.status();
    }
    runs_read_ = absl::Now();
  }
  snapshot.latest = history_.latest;
  snapshot.ranks = history_.ranks;
  snapshot.findings = history_.findings;
  snapshot.reliability = history_.reliability;
  snapshot.runs_by_state = runs_by_state_;
  snapshot.errors = history_.errors;
  if (!runs_ok_) snapshot.errors.push_back("runs");
  auto nodes = core_->ListNodes(absl::Now() + options_.call_timeout);
  if (nodes.ok()) {
    snapshot.nodes = std::move(*nodes);
  } else {
    snapshot.errors.push_back("nodes");
  }
  for (const auto& [key, count] : snapshot.stats.schedule_firings) {
    snapshot.schedule_firings.push_back({{{"schedule", key.first}, {"outcome", key.second}}, count});
  }
  snapshot.store_bytes = StoreFileBytes(options_.db_path);
  prometheus::Exposition exposition;
  AddFleetFamilies(snapshot, &exposition);
  AddHealthFamilies(snapshot, &exposition);
  return exposition.Render();
}

}  // namespace fleetbench::controller
