// The SQLite store's day summaries (docs/storage.md, Day summaries): per
// (metric, UTC day, node) a ValueSketch of the values, kept in step with the
// ranking points. A point leaves recent_points for a chunk and enters its
// day's summary in the same transaction (FoldRecentPointsLocked), so the
// summaries always hold exactly the folded points; a read adds the points
// still in recent_points. Retention removes samples and their points but
// never a summary.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "common/value_sketch.h"
#include "storage/ranking_points.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/store.h"

namespace fleetbench::storage {
namespace {

constexpr char kPendingSetting[] = "day_summaries";

absl::StatusOr<ValueSketch> DecodeStored(absl::string_view bytes, int64_t metric_id,
                                         int64_t day, int64_t node_id) {
  absl::StatusOr<ValueSketch> sketch = ValueSketch::Decode(bytes);
  if (!sketch.ok()) {
    return absl::DataLossError(absl::StrCat("day summary of metric ", metric_id, ", day ", day,
                                            ", node ", node_id, ": ", sketch.status().message(),
                                            "; the database is damaged"));
  }
  return sketch;
}

}  // namespace

void SqliteStore::AddToDays(const RankingPoint& point, DayAggregates& days) {
  DayAggregate& d = days[DayKey{point.metric_id, UtcDayOf(point.time_ms), point.node_id}];
  d.values.Add(point.value);
  d.first_ms = std::min(d.first_ms, point.time_ms);
  d.last_ms = std::max(d.last_ms, point.time_ms);
}

absl::Status SqliteStore::MergeDaySummariesLocked(const DayAggregates& days) {
  if (days.empty() || !has_day_summaries_) return absl::OkStatus();
  // In key order: a fold's rows are then neighbours in the table's B-tree.
  std::vector<const DayAggregates::value_type*> ordered;
  ordered.reserve(days.size());
  for (const auto& entry : days) ordered.push_back(&entry);
  std::sort(ordered.begin(), ordered.end(), [](const auto* a, const auto* b) {
    return std::tie(a->first.metric_id, a->first.day, a->first.node_id) <
           std::tie(b->first.metric_id, b->first.day, b->first.node_id);
  });
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement read, Prepare("SELECT first_ms, last_ms, sketch FROM metric_day_summaries "
                              "WHERE metric_id = ?1 AND day = ?2 AND node_id = ?3"));
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement write,
      Prepare("INSERT OR REPLACE INTO metric_day_summaries"
              "(metric_id, day, node_id, first_ms, last_ms, sketch) "
              "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  std::string bytes;
  for (const auto* entry : ordered) {
    const DayKey& key = entry->first;
    DayAggregate merged = entry->second;
    read.BindAll(key.metric_id, key.day, key.node_id);
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, read.Step("reading a day summary"));
    if (row) {
      FLEETBENCH_ASSIGN_OR_RETURN(
          ValueSketch stored, DecodeStored(read.Blob(2), key.metric_id, key.day, key.node_id));
      merged.values.Merge(stored);
      merged.first_ms = std::min(merged.first_ms, read.Int(0));
      merged.last_ms = std::max(merged.last_ms, read.Int(1));
    }
    read.Reset();
    bytes = merged.values.Encode();
    write.BindAll(key.metric_id, key.day, key.node_id, merged.first_ms, merged.last_ms,
                  SqlBlob{bytes});
    FLEETBENCH_RETURN_IF_ERROR(write.Run("storing a day summary"));
    write.Reset();
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::BuildPendingDaySummaries() {
  absl::MutexLock lock(&mu_);
  bool pending = false;
  FLEETBENCH_RETURN_IF_ERROR(InTransaction(TxnKind::kRead, [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement s, Prepare("SELECT count(*) FROM sqlite_schema "
                             "WHERE name = 'metric_day_summaries'"));
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("looking for the day summaries"));
    has_day_summaries_ = row && s.Int(0) > 0;
    s.Reset();
    if (!has_day_summaries_) return absl::OkStatus();
    FLEETBENCH_ASSIGN_OR_RETURN(Statement setting,
                                Prepare("SELECT 1 FROM settings WHERE key = ?1"));
    setting.Bind(1, absl::string_view(kPendingSetting));
    FLEETBENCH_ASSIGN_OR_RETURN(pending, setting.Step("reading the day summaries' state"));
    setting.Reset();
    return absl::OkStatus();
  }));
  if (!pending) return absl::OkStatus();
  std::vector<int64_t> metrics;
  FLEETBENCH_RETURN_IF_ERROR(InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    // A build cut short by a crash starts over.
    FLEETBENCH_RETURN_IF_ERROR(
        RunCached("DELETE FROM metric_day_summaries", "clearing the day summaries"));
    FLEETBENCH_ASSIGN_OR_RETURN(Statement s,
                                Prepare("SELECT DISTINCT metric_id FROM metric_points "
                                        "INDEXED BY metric_points_by_metric"));
    while (true) {
      FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("listing metrics with points"));
      if (!row) break;
      metrics.push_back(s.Int(0));
    }
    return absl::OkStatus();
  }));
  // One transaction per metric: memory and the WAL stay bounded by one
  // metric's summaries, whatever the history's size.
  for (int64_t metric_id : metrics) {
    FLEETBENCH_RETURN_IF_ERROR(InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
      DayAggregates days;
      FLEETBENCH_ASSIGN_OR_RETURN(Statement s,
                                  Prepare("SELECT points FROM metric_points "
                                          "INDEXED BY metric_points_by_metric "
                                          "WHERE metric_id = ?1"));
      s.Bind(1, metric_id);
      while (true) {
        FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("reading a ranking chunk"));
        if (!row) break;
        const absl::string_view packed = s.Blob(0);
        FLEETBENCH_RETURN_IF_ERROR(CheckPacked(packed));
        for (size_t i = 0; i < packed.size() / kPointBytes; ++i) {
          AddToDays(PointAt(packed, i), days);
        }
      }
      s.Reset();
      return MergeDaySummariesLocked(days);
    }));
  }
  return InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    return RunCached("DELETE FROM settings WHERE key = ?1", "marking the day summaries built",
                     absl::string_view(kPendingSetting));
  });
}

absl::StatusOr<DaySummaryTable> SqliteStore::DaySummariesSince(const std::string& metric,
                                                               int64_t first_day) {
  absl::MutexLock lock(&mu_);
  if (!has_day_summaries_) {
    return absl::FailedPreconditionError("this history's schema has no day summaries");
  }
  DaySummaryTable table;
  absl::Status status = InTransaction(TxnKind::kRead, [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(int64_t metric_id, MetricIdLocked(metric, false));
    if (metric_id == 0) return absl::OkStatus();
    absl::flat_hash_map<int64_t, uint32_t> node_index;
    auto index_of_node = [&](int64_t node_id) -> absl::StatusOr<uint32_t> {
      auto [it, added] = node_index.try_emplace(node_id, static_cast<uint32_t>(table.nodes.size()));
      if (added) {
        FLEETBENCH_ASSIGN_OR_RETURN(const std::string* name, NodeNameLocked(node_id));
        table.nodes.push_back(*name);
      }
      return it->second;
    };
    // (day, node id) -> row of table.days, for the recent points to join.
    absl::flat_hash_map<std::pair<int64_t, int64_t>, size_t> row_of;
    std::vector<std::pair<int64_t, int64_t>> times_ms;  // (first, last) per row
    {
      FLEETBENCH_ASSIGN_OR_RETURN(
          Statement s, Prepare("SELECT day, node_id, first_ms, last_ms, sketch "
                               "FROM metric_day_summaries WHERE metric_id = ?1 AND day >= ?2"));
      s.BindAll(metric_id, first_day);
      while (true) {
        FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("reading day summaries"));
        if (!row) break;
        const int64_t day = s.Int(0);
        const int64_t node_id = s.Int(1);
        FLEETBENCH_ASSIGN_OR_RETURN(uint32_t node, index_of_node(node_id));
        FLEETBENCH_ASSIGN_OR_RETURN(ValueSketch values,
                                    DecodeStored(s.Blob(4), metric_id, day, node_id));
        row_of[{day, node_id}] = table.days.size();
        table.days.push_back({node, day, std::move(values), {}, {}});
        times_ms.emplace_back(s.Int(2), s.Int(3));
      }
    }
    FLEETBENCH_ASSIGN_OR_RETURN(Statement s, Prepare("SELECT points FROM recent_points"));
    while (true) {
      FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("reading recent points"));
      if (!row) break;
      const absl::string_view packed = s.Blob(0);
      FLEETBENCH_RETURN_IF_ERROR(CheckPacked(packed));
      for (size_t i = 0; i < packed.size() / kPointBytes; ++i) {
        const RankingPoint p = PointAt(packed, i);
        if (p.metric_id != metric_id) continue;
        const int64_t day = UtcDayOf(p.time_ms);
        if (day < first_day) continue;
        auto [it, added] = row_of.try_emplace({day, p.node_id}, table.days.size());
        if (added) {
          FLEETBENCH_ASSIGN_OR_RETURN(uint32_t node, index_of_node(p.node_id));
          table.days.push_back({node, day, {}, {}, {}});
          times_ms.emplace_back(std::numeric_limits<int64_t>::max(),
                                std::numeric_limits<int64_t>::min());
        }
        table.days[it->second].values.Add(p.value);
        auto& [first, last] = times_ms[it->second];
        first = std::min(first, p.time_ms);
        last = std::max(last, p.time_ms);
      }
    }
    for (size_t i = 0; i < table.days.size(); ++i) {
      table.days[i].first = FromMillis(times_ms[i].first);
      table.days[i].last = FromMillis(times_ms[i].second);
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return table;
}

}  // namespace fleetbench::storage
