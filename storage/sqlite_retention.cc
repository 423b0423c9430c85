// Retention (Store::PruneSamplesBefore): old samples go with their ranking
// points, so that ranking and CheckIntegrity's one-point-per-sample rule
// stay true after every call. A call works on one place that holds points:
// a recent_points row, else the metric_points chunk with the oldest point
// (both at most 65,536 points). It takes that place's points dated before
// the cutoff, oldest first, up to the call's limit; deletes one sample per
// point (the sample with the point's run, node, metric, time and value, by
// the samples table's key; samples that tie on all five are
// interchangeable for everything the points feed) and rewrites the place
// without those points.
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "storage/ranking_points.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"

namespace fleetbench::storage {
namespace {

// The oldest `limit` points before `cutoff_ms` of `packed` (by index), and
// what is left once they are gone.
struct Split {
  std::vector<RankingPoint> removed;
  std::string kept;
  int64_t kept_count = 0;
  int64_t kept_min_ms = INT64_MAX;
  int64_t kept_max_ms = INT64_MIN;
};

Split SplitOldest(absl::string_view packed, int64_t cutoff_ms, int limit) {
  const size_t n = packed.size() / kPointBytes;
  std::vector<size_t> old;
  for (size_t i = 0; i < n; ++i) {
    if (PointAt(packed, i).time_ms < cutoff_ms) old.push_back(i);
  }
  std::stable_sort(old.begin(), old.end(), [&](size_t a, size_t b) {
    return PointAt(packed, a).time_ms < PointAt(packed, b).time_ms;
  });
  if (old.size() > static_cast<size_t>(limit)) old.resize(static_cast<size_t>(limit));
  std::vector<bool> drop(n, false);
  for (size_t i : old) drop[i] = true;
  Split split;
  split.kept.reserve(packed.size() - old.size() * kPointBytes);
  for (size_t i = 0; i < n; ++i) {
    const RankingPoint p = PointAt(packed, i);
    if (drop[i]) {
      split.removed.push_back(p);
      continue;
    }
    split.kept.append(packed.data() + i * kPointBytes, kPointBytes);
    ++split.kept_count;
    split.kept_min_ms = std::min(split.kept_min_ms, p.time_ms);
    split.kept_max_ms = std::max(split.kept_max_ms, p.time_ms);
  }
  return split;
}

}  // namespace

absl::StatusOr<int64_t> SqliteStore::PruneSamplesBefore(absl::Time before, int max_samples) {
  if (max_samples <= 0) return absl::InvalidArgumentError("a prune needs a limit > 0");
  const int64_t cutoff_ms = ToMillis(before);
  absl::MutexLock lock(&mu_);
  int64_t removed = 0;
  absl::Status status = InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    // Where the oldest old points are: a recent_points row first (few, and
    // any metric), else the chunk whose oldest point is the oldest.
    bool recent = false;
    int64_t place_id = 0;
    std::string packed;
    {
      FLEETBENCH_ASSIGN_OR_RETURN(Statement s,
                                  Prepare("SELECT id, points FROM recent_points ORDER BY id"));
      while (true) {
        FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("reading recent points for retention"));
        if (!row) break;
        const absl::string_view points = s.Blob(1);
        FLEETBENCH_RETURN_IF_ERROR(CheckPacked(points));
        for (size_t i = 0; i < points.size() / kPointBytes; ++i) {
          if (PointAt(points, i).time_ms < cutoff_ms) {
            recent = true;
            break;
          }
        }
        if (recent) {
          place_id = s.Int(0);
          packed.assign(points.data(), points.size());
          break;
        }
      }
      s.Reset();
    }
    if (!recent) {
      FLEETBENCH_ASSIGN_OR_RETURN(
          Statement s, Prepare("SELECT id, points FROM metric_points WHERE min_time_ms < ?1 "
                               "ORDER BY min_time_ms LIMIT 1"));
      s.Bind(1, cutoff_ms);
      FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("finding the oldest ranking chunk"));
      if (!row) return absl::OkStatus();  // nothing older than the cutoff
      place_id = s.Int(0);
      const absl::string_view points = s.Blob(1);
      FLEETBENCH_RETURN_IF_ERROR(CheckPacked(points));
      packed.assign(points.data(), points.size());
      s.Reset();
    }
    Split split = SplitOldest(packed, cutoff_ms, max_samples);

    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement by_value,
        Prepare("DELETE FROM samples WHERE run_key = ?1 AND node_id = ?2 AND "
                "metric_id = ?3 AND time_ms = ?4 AND id = (SELECT id FROM samples "
                "WHERE run_key = ?1 AND node_id = ?2 AND metric_id = ?3 AND "
                "time_ms = ?4 AND value = ?5 LIMIT 1)"));
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement by_nan,
        Prepare("DELETE FROM samples WHERE run_key = ?1 AND node_id = ?2 AND "
                "metric_id = ?3 AND time_ms = ?4 AND id = (SELECT id FROM samples "
                "WHERE run_key = ?1 AND node_id = ?2 AND metric_id = ?3 AND "
                "time_ms = ?4 AND value IS NULL LIMIT 1)"));
    for (const RankingPoint& p : split.removed) {
      Statement& s = std::isnan(p.value) ? by_nan : by_value;
      if (std::isnan(p.value)) {
        s.BindAll(p.run_key, p.node_id, p.metric_id, p.time_ms);
      } else {
        s.BindAll(p.run_key, p.node_id, p.metric_id, p.time_ms, p.value);
      }
      // A point whose sample is missing goes too: that restores the rule.
      FLEETBENCH_RETURN_IF_ERROR(s.Run("deleting an old sample"));
      s.Reset();
    }

    // Points not yet folded are in no day summary: they enter it now, as
    // they leave, so the summaries keep every value ever stored.
    if (recent) {
      DayAggregates days;
      for (const RankingPoint& p : split.removed) AddToDays(p, days);
      FLEETBENCH_RETURN_IF_ERROR(MergeDaySummariesLocked(days));
    }
    const char* table = recent ? "recent_points" : "metric_points";
    if (split.kept_count == 0) {
      FLEETBENCH_RETURN_IF_ERROR(RunCached(absl::StrCat("DELETE FROM ", table, " WHERE id = ?1"),
                                           "dropping an emptied ranking chunk", place_id));
    } else if (recent) {
      FLEETBENCH_RETURN_IF_ERROR(
          RunCached("UPDATE recent_points SET points = ?2, n_points = ?3 WHERE id = ?1",
                    "rewriting recent points", place_id, SqlBlob{split.kept}, split.kept_count));
    } else {
      FLEETBENCH_RETURN_IF_ERROR(RunCached(
          "UPDATE metric_points SET points = ?2, n_points = ?3, min_time_ms = ?4, "
          "max_time_ms = ?5 WHERE id = ?1",
          "rewriting a ranking chunk", place_id, SqlBlob{split.kept}, split.kept_count,
          split.kept_min_ms, split.kept_max_ms));
    }
    if (recent) {
      recent_points_ = -1;  // re-read on next use
      recent_rows_ = -1;
    }
    removed = static_cast<int64_t>(split.removed.size());
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return removed;
}

absl::StatusOr<int64_t> SqliteStore::PruneTaskLogsBefore(absl::Time before, int max_logs) {
  if (max_logs <= 0) return absl::InvalidArgumentError("a prune needs a limit > 0");
  absl::MutexLock lock(&mu_);
  int64_t removed = 0;
  absl::Status status = InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(
        removed, RowsChangedBy("DELETE FROM task_logs WHERE task_id IN (SELECT task_id FROM "
                               "task_logs WHERE time_ms < ?1 ORDER BY time_ms LIMIT ?2)",
                               "removing old task logs", ToMillis(before),
                               static_cast<int64_t>(max_logs)));
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return removed;
}

}  // namespace fleetbench::storage
