// The SQLite store's ranking scan: every packed point of one metric in a
// window, from recent_points and the metric's chunks in metric_points.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "storage/ranking_points.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/store.h"

namespace fleetbench::storage {
namespace {

// DATA_LOSS unless `packed` is `n_points` whole points, each of `metric_id`
// when that is not 0 (a chunk holds one metric). A point that fails this was
// damaged on disk: answering without it would rank on part of the data.
absl::Status CheckStoredPoints(absl::string_view packed, int64_t n_points,
                               int64_t metric_id, absl::string_view kind,
                               int64_t row_id) {
  FLEETBENCH_RETURN_IF_ERROR(CheckPacked(packed));
  const size_t count = packed.size() / kPointBytes;
  if (n_points < 0 || static_cast<size_t>(n_points) != count) {
    return absl::DataLossError(absl::StrCat(kind, " ", row_id, " says ", n_points,
                                            " points but holds ", count,
                                            "; the database is damaged"));
  }
  if (metric_id == 0) return absl::OkStatus();
  for (size_t i = 0; i < count; ++i) {
    if (PointAt(packed, i).metric_id != metric_id) {
      return absl::DataLossError(absl::StrCat(
          kind, " ", row_id, " of metric ", metric_id, " holds a point of metric ",
          PointAt(packed, i).metric_id, "; the database is damaged"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SqliteStore::ScanPointsLocked(
    int64_t metric_id, int64_t since_ms, int64_t until_ms,
    absl::FunctionRef<absl::Status(absl::string_view packed)> visit,
    absl::FunctionRef<bool(int64_t chunk_max_time_ms)> keep_going) {
  {
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement s, Prepare("SELECT id, points, n_points FROM recent_points ORDER BY id DESC"));
    while (true) {
      FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("reading recent points"));
      if (!row) break;
      const absl::string_view packed = s.Blob(1);
      FLEETBENCH_RETURN_IF_ERROR(
          CheckStoredPoints(packed, s.Int(2), 0, "recent points row", s.Int(0)));
      FLEETBENCH_RETURN_IF_ERROR(visit(packed));
    }
  }
  struct Chunk {
    int64_t id;
    int64_t max_time_ms;
  };
  std::vector<Chunk> chunks;
  {
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement s, Prepare("SELECT id, max_time_ms FROM metric_points "
                             "INDEXED BY metric_points_by_metric "
                             "WHERE metric_id = ?1 AND max_time_ms >= ?2 "
                             "AND min_time_ms < ?3"));
    s.BindAll(metric_id, since_ms, until_ms);
    while (true) {
      FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("listing ranking chunks"));
      if (!row) break;
      chunks.push_back({s.Int(0), s.Int(1)});
    }
  }
  std::sort(chunks.begin(), chunks.end(), [](const Chunk& a, const Chunk& b) {
    return a.max_time_ms > b.max_time_ms;
  });
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s,
      Prepare("SELECT points, n_points FROM metric_points WHERE id = ?1"));
  for (const Chunk& chunk : chunks) {
    if (!keep_going(chunk.max_time_ms)) break;
    s.Bind(1, chunk.id);
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("reading ranking chunk"));
    // The index listed it: a row that is not there is a damaged file, and
    // leaving its points out would rank on part of the data.
    if (!row) {
      return absl::DataLossError(absl::StrCat(
          "ranking chunk ", chunk.id,
          " is listed by its index but missing; the database is damaged"));
    }
    const absl::string_view packed = s.Blob(0);
    FLEETBENCH_RETURN_IF_ERROR(
        CheckStoredPoints(packed, s.Int(1), metric_id, "ranking chunk", chunk.id));
    FLEETBENCH_RETURN_IF_ERROR(visit(packed));
    s.Reset();
  }
  return absl::OkStatus();
}

absl::StatusOr<MetricPointTable> SqliteStore::MetricPointTableSince(
    const std::string& metric, absl::Time since) {
  return MetricPointTableBetween(metric, since, absl::InfiniteFuture());
}

namespace {

// A day: a run's samples are measured within it (a task's deadline is far
// shorter), so points written a day before a run's oldest are not its.
constexpr int64_t kRunSpanMs = 86'400'000;

}  // namespace

absl::StatusOr<MetricPointTable> SqliteStore::MetricPointTableBetween(
    const std::string& metric, absl::Time since, absl::Time until) {
  const int64_t until_ms = until == absl::InfiniteFuture()
                               ? std::numeric_limits<int64_t>::max()
                               : ToMillis(until);
  absl::MutexLock lock(&mu_);
  MetricPointTable table;
  absl::Status status = InTransaction(TxnKind::kRead, [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(int64_t metric_id, MetricIdLocked(metric, false));
    if (metric_id == 0) return absl::OkStatus();
    return PointTableLocked(metric_id, ToMillis(since), until_ms, 0, 0, table);
  });
  if (!status.ok()) return status;
  return table;
}

absl::StatusOr<MetricPointTable> SqliteStore::MetricPointTableOfNewestRuns(
    const std::string& metric, absl::Time since, int max_runs_per_node, size_t fleet_nodes) {
  if (max_runs_per_node < 1) {
    return absl::InvalidArgumentError("a read of the newest runs needs at least 1 run per node");
  }
  absl::MutexLock lock(&mu_);
  MetricPointTable table;
  absl::Status status = InTransaction(TxnKind::kRead, [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(int64_t metric_id, MetricIdLocked(metric, false));
    if (metric_id == 0) return absl::OkStatus();
    return PointTableLocked(metric_id, ToMillis(since), std::numeric_limits<int64_t>::max(),
                            max_runs_per_node, fleet_nodes, table);
  });
  if (!status.ok()) return status;
  return table;
}

absl::Status SqliteStore::PointTableLocked(int64_t metric_id, int64_t since_ms,
                                           int64_t until_ms, int max_runs_per_node,
                                           size_t fleet_nodes, MetricPointTable& table) {
  const bool bounded = max_runs_per_node > 0;
  if (!bounded) {
    // Sized first (an upper bound) so the points never move. Not for a
    // bounded read: the bound is the point of it.
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement s,
        Prepare("SELECT (SELECT coalesce(sum(n_points), 0) FROM metric_points "
                "INDEXED BY metric_points_by_metric "
                "WHERE metric_id = ?1 AND max_time_ms >= ?2 AND min_time_ms < ?3), "
                "(SELECT coalesce(sum(n_points), 0) FROM recent_points)"));
    s.BindAll(metric_id, since_ms, until_ms);
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("sizing metric points"));
    if (row) table.points.reserve(static_cast<size_t>(s.Int(0) + s.Int(1)));
  }
  // Node ids are small and dense (rowids of a table with a row per
  // machine): a plain array maps them to table indexes. Runs change
  // rarely from one point to the next, so a hash map behind a one-entry
  // memo does for them.
  constexpr int64_t kDenseNodeIds = 1 << 20;
  constexpr uint32_t kUnset = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> node_index;
  absl::flat_hash_map<int64_t, uint32_t> sparse_node_index;
  absl::flat_hash_map<int64_t, uint32_t> run_index;
  int64_t last_run = -1;
  uint32_t last_run_index = 0;
  // A bounded read's runs per node (by table index), and the oldest point
  // kept of each node that has all its runs.
  std::vector<absl::flat_hash_set<uint32_t>> runs_of_node;
  size_t full_nodes = 0;
  int64_t oldest_kept_of_full_ms = std::numeric_limits<int64_t>::max();
  auto index_of_node = [&](int64_t node_id) -> absl::StatusOr<uint32_t> {
    uint32_t* slot = nullptr;
    if (node_id >= 0 && node_id < kDenseNodeIds) {
      const auto i = static_cast<size_t>(node_id);
      if (i >= node_index.size()) node_index.resize(i + 1, kUnset);
      slot = &node_index[i];
    } else {
      slot = &sparse_node_index.try_emplace(node_id, kUnset).first->second;
    }
    if (*slot == kUnset) {
      FLEETBENCH_ASSIGN_OR_RETURN(const std::string* name, NodeNameLocked(node_id));
      *slot = static_cast<uint32_t>(table.nodes.size());
      table.nodes.push_back(*name);
      if (bounded) runs_of_node.emplace_back();
    }
    return *slot;
  };
  auto index_of_run = [&](int64_t run_key) -> absl::StatusOr<uint32_t> {
    if (run_key == last_run) return last_run_index;
    auto [it, added] =
        run_index.try_emplace(run_key, static_cast<uint32_t>(table.run_ids.size()));
    if (added) {
      FLEETBENCH_ASSIGN_OR_RETURN(const std::string* run_id, RunIdLocked(run_key));
      table.run_ids.push_back(*run_id);
    }
    last_run = run_key;
    last_run_index = it->second;
    return it->second;
  };
  auto take = [&](const RankingPoint& p) -> absl::Status {
    if (p.metric_id != metric_id || p.time_ms < since_ms || p.time_ms >= until_ms) {
      return absl::OkStatus();
    }
    FLEETBENCH_ASSIGN_OR_RETURN(uint32_t node, index_of_node(p.node_id));
    if (bounded) {
      absl::flat_hash_set<uint32_t>& runs = runs_of_node[node];
      const bool full = runs.size() >= static_cast<size_t>(max_runs_per_node);
      // Only the run index is needed to look it up; an unseen run of a
      // full node is skipped before a run id is copied.
      auto known = run_index.find(p.run_key);
      const bool kept = known != run_index.end() && runs.contains(known->second);
      if (!kept && full) return absl::OkStatus();
      FLEETBENCH_ASSIGN_OR_RETURN(uint32_t run, index_of_run(p.run_key));
      if (!kept) {
        runs.insert(run);
        if (runs.size() == static_cast<size_t>(max_runs_per_node)) ++full_nodes;
      }
      if (runs.size() >= static_cast<size_t>(max_runs_per_node)) {
        oldest_kept_of_full_ms = std::min(oldest_kept_of_full_ms, p.time_ms);
      }
      table.points.push_back({node, run, p.value, FromMillis(p.time_ms)});
      return absl::OkStatus();
    }
    FLEETBENCH_ASSIGN_OR_RETURN(uint32_t run, index_of_run(p.run_key));
    table.points.push_back({node, run, p.value, FromMillis(p.time_ms)});
    return absl::OkStatus();
  };
  return ScanPointsLocked(
      metric_id, since_ms, until_ms,
      [&](absl::string_view packed) -> absl::Status {
        const size_t n = packed.size() / kPointBytes;
        // Newest-written first within a row or chunk too, for a bounded read.
        for (size_t k = 0; k < n; ++k) {
          FLEETBENCH_RETURN_IF_ERROR(take(PointAt(packed, bounded ? n - 1 - k : k)));
        }
        return absl::OkStatus();
      },
      [&](int64_t chunk_max_time_ms) {
        return !(bounded && fleet_nodes > 0 && full_nodes >= fleet_nodes &&
                 chunk_max_time_ms < oldest_kept_of_full_ms - kRunSpanMs);
      });
}

absl::StatusOr<std::vector<MetricPoint>> SqliteStore::MetricPointsSince(
    const std::string& metric, absl::Time since) {
  FLEETBENCH_ASSIGN_OR_RETURN(MetricPointTable table,
                              MetricPointTableSince(metric, since));
  // Nearly all of this call's time for a large window: two string copies
  // per point (MetricPointTableSince skips them).
  std::vector<MetricPoint> points;
  points.reserve(table.points.size());
  for (const MetricPointTable::Point& p : table.points) {
    points.push_back(
        {table.nodes[p.node], table.run_ids[p.run], p.value, p.time});
  }
  return points;
}

}  // namespace fleetbench::storage
