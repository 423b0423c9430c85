// The SQLite store's ingest path (CommitReports, about 220k samples/s): new
// samples and their ranking points, staged per commit in recent_points and
// folded into per-metric chunks in metric_points.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "storage/ranking_points.h"
#include "storage/sample_params.h"
#include "storage/sqlite_sample_ids.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/store.h"

namespace fleetbench::storage {
namespace {

constexpr char kInsertSample[] =
    "INSERT OR IGNORE INTO samples(run_key, node_id, metric_id, time_ms, id, kind, value, "
    "measured) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
// Schema 1-10's layout, written only into files a test made with an older
// migration list (storage/migrations_test.cc makes its old files this way).
constexpr char kInsertSampleBefore11[] =
    "INSERT OR IGNORE INTO samples(id, run_key, node_id, metric_id, benchmark, "
    "value, unit, params, time_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";

// recent_points is folded into per-metric chunks when it holds this many
// points or rows: it bounds what every ranking query scans on top of the
// metric's own chunks (about 2.5 MiB), while a typical commit only appends one
// row to it.
constexpr int64_t kFoldPoints = 65536;
constexpr int64_t kFoldRows = 256;
// Chunks grow by merging up to this many points (2.5 MiB).
constexpr int64_t kMaxChunkPoints = 65536;
// Sample kinds cached in memory (each key holds its params: up to a few
// hundred bytes, so a few MiB at most).
constexpr size_t kMaxCachedKinds = 8192;

}  // namespace

void SqliteStore::PendingPoints::Add(absl::string_view point, int64_t time_ms) {
  if (count == 0) {
    min_time_ms = max_time_ms = time_ms;
  } else {
    min_time_ms = std::min(min_time_ms, time_ms);
    max_time_ms = std::max(max_time_ms, time_ms);
  }
  ++count;
  packed.append(point.data(), point.size());
}

absl::Status SqliteStore::InsertSampleLocked(Statement& insert,
                                             const v1::Sample& sample,
                                             SplitParams& params,
                                             PendingPoints& points,
                                             int& inserted) {
  if (sample.id().empty()) {
    return absl::InvalidArgumentError("a sample has no id");
  }
  if (sample.metric().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sample ", sample.id(), " has no metric"));
  }
  absl::StatusOr<int64_t> run_key = RunKeyLocked(sample.run_id());
  if (!run_key.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sample ", sample.id(), " names run \"", sample.run_id(),
        "\", which does not exist: ", run_key.status().message()));
  }
  absl::StatusOr<int64_t> node_id = NodeIdLocked(sample.node());
  if (!node_id.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sample ", sample.id(), " names node \"", sample.node(),
        "\", which does not exist: ", node_id.status().message()));
  }
  FLEETBENCH_ASSIGN_OR_RETURN(int64_t metric_id,
                              MetricIdLocked(sample.metric(), true));
  if (compact_samples_) {
    // The numbers among the params stay with the sample (sample_params.h).
    SplitSampleParams(sample.params(), params);
    FLEETBENCH_ASSIGN_OR_RETURN(
        const SampleKind* kind,
        SampleKindLocked(sample.benchmark(), sample.unit(), params.kind_params,
                         params.measured_keys, params.measured_values));
    const StoredSampleId id(sample.id());
    insert.BindAll(*run_key, *node_id, metric_id, sample.time_unix_ms());
    id.BindTo(insert, 5);
    insert.Bind(6, kind->id);
    insert.Bind(7, sample.value());
    // Only what differs from the kind's default (sample_params.h).
    measured_ = MeasuredDifference(params.measured_values, kind->measured_default);
    std::optional<absl::string_view> measured;
    if (!measured_.empty()) measured = measured_;
    insert.Bind(8, measured);
  } else {
    // No params were stored as NULL, not as an empty blob.
    SerializeParams(sample.params(), params.kind_params);
    std::optional<SqlBlob> blob;
    if (!params.kind_params.empty()) blob = SqlBlob{params.kind_params};
    insert.BindAll(sample.id(), *run_key, *node_id, metric_id, sample.benchmark(),
                   sample.value(), sample.unit(), blob, sample.time_unix_ms());
  }
  FLEETBENCH_RETURN_IF_ERROR(insert.Run("storing sample"));
  const int changed = insert.Changes();
  insert.Reset();
  if (changed == 0) return absl::OkStatus();  // stored before
  ++inserted;
  char packed[kPointBytes];
  PackPoint({metric_id, *node_id, *run_key, sample.value(),
             sample.time_unix_ms()},
            packed);
  points.Add(absl::string_view(packed, kPointBytes), sample.time_unix_ms());
  return absl::OkStatus();
}

absl::StatusOr<const SqliteStore::SampleKind*> SqliteStore::SampleKindLocked(
    const std::string& benchmark, const std::string& unit, const std::string& params,
    const std::string& measured_keys, const std::string& measured_values) {
  // Lengths first, so no two tuples join to the same key.
  kind_key_.clear();
  absl::StrAppend(&kind_key_, benchmark.size(), ":", unit.size(), ":", params.size(), ":",
                  benchmark, unit, params, measured_keys);
  if (auto it = sample_kinds_.find(kind_key_); it != sample_kinds_.end()) return &it->second;
  const SqlBlob params_blob{params};
  const SqlBlob keys_blob{measured_keys};
  SampleKind kind;
  {
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement s, Prepare("SELECT id, measured_default FROM sample_kinds WHERE "
                             "benchmark = ?1 AND unit = ?2 AND params = ?3 AND "
                             "measured_keys = ?4"));
    s.BindAll(benchmark, unit, params_blob, keys_blob);
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("looking up a sample kind"));
    if (row) kind = {s.Int(0), s.Text(1)};
    s.Reset();
  }
  if (kind.id == 0) {
    // A new kind's default is its first sample's measured values.
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement s, Prepare("INSERT INTO sample_kinds(benchmark, unit, params, "
                             "measured_keys, measured_default) VALUES (?1, ?2, ?3, ?4, ?5) "
                             "RETURNING id"));
    s.BindAll(benchmark, unit, params_blob, keys_blob, absl::string_view(measured_values));
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("adding a sample kind"));
    if (!row) return absl::InternalError("adding a sample kind returned no id");
    kind = {s.Int(0), measured_values};
  }
  // Bounded: a plugin whose text params change with every sample makes a
  // kind per sample; the cache keeps the recent ones.
  if (sample_kinds_.size() >= kMaxCachedKinds) sample_kinds_.clear();
  return &sample_kinds_.emplace(kind_key_, std::move(kind)).first->second;
}

absl::Status SqliteStore::StagePointsLocked(const PendingPoints& points) {
  if (points.count == 0) return absl::OkStatus();
  if (recent_points_ < 0) {
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement s, Prepare("SELECT count(*), coalesce(sum(n_points), 0) "
                             "FROM recent_points"));
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("sizing recent points"));
    recent_rows_ = row ? s.Int(0) : 0;
    recent_points_ = row ? s.Int(1) : 0;
  }
  FLEETBENCH_RETURN_IF_ERROR(RunCached(
      "INSERT INTO recent_points(n_points, points) VALUES (?1, ?2)",
      "storing ranking points", points.count, SqlBlob{points.packed}));
  recent_points_ += points.count;
  ++recent_rows_;
  if (recent_points_ < kFoldPoints && recent_rows_ < kFoldRows) {
    return absl::OkStatus();
  }
  return FoldRecentPointsLocked();
}

absl::Status SqliteStore::FoldRecentPointsLocked() {
  absl::flat_hash_map<int64_t, PendingPoints> by_metric;
  // The folded points join the day summaries in the same transaction:
  // summaries hold exactly the points that left recent_points.
  DayAggregates days;
  {
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement s, Prepare("SELECT points FROM recent_points ORDER BY id"));
    while (true) {
      FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("reading recent points"));
      if (!row) break;
      const absl::string_view packed = s.Blob(0);
      FLEETBENCH_RETURN_IF_ERROR(CheckPacked(packed));
      for (size_t i = 0; i < packed.size() / kPointBytes; ++i) {
        const RankingPoint p = PointAt(packed, i);
        by_metric[p.metric_id].Add(packed.substr(i * kPointBytes, kPointBytes),
                                   p.time_ms);
        AddToDays(p, days);
      }
    }
  }
  FLEETBENCH_RETURN_IF_ERROR(
      RunCached("DELETE FROM recent_points", "DELETE FROM recent_points"));
  recent_points_ = 0;
  recent_rows_ = 0;
  for (auto& [metric_id, points] : by_metric) {
    FLEETBENCH_RETURN_IF_ERROR(WriteChunkLocked(metric_id, std::move(points)));
  }
  return MergeDaySummariesLocked(days);
}

absl::Status SqliteStore::WriteChunkLocked(int64_t metric_id,
                                           PendingPoints points) {
  // Merge like a binary counter: the newest chunk joins the new points while
  // it is no larger than them, so chunk sizes stay roughly geometric and each
  // point is rewritten O(log kMaxChunkPoints) times at most.
  while (true) {
    int64_t newest_id = 0;
    int64_t newest_count = 0;
    {
      FLEETBENCH_ASSIGN_OR_RETURN(
          Statement s,
          Prepare("SELECT id, n_points FROM metric_points "
                  "INDEXED BY metric_points_by_metric WHERE metric_id = ?1 "
                  "ORDER BY id DESC LIMIT 1"));
      s.Bind(1, metric_id);
      FLEETBENCH_ASSIGN_OR_RETURN(bool row,
                                  s.Step("reading newest ranking chunk"));
      if (!row) break;
      newest_id = s.Int(0);
      newest_count = s.Int(1);
    }
    if (newest_count > points.count ||
        newest_count + points.count > kMaxChunkPoints) {
      break;
    }
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement s, Prepare("DELETE FROM metric_points WHERE id = ?1 "
                             "RETURNING min_time_ms, max_time_ms, points"));
    s.Bind(1, newest_id);
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("merging ranking chunks"));
    if (!row) return absl::InternalError("ranking chunk vanished while merging");
    const absl::string_view older = s.Blob(2);
    FLEETBENCH_RETURN_IF_ERROR(CheckPacked(older));
    points.packed.insert(0, older.data(), older.size());
    points.count += static_cast<int64_t>(older.size() / kPointBytes);
    points.min_time_ms = std::min(points.min_time_ms, s.Int(0));
    points.max_time_ms = std::max(points.max_time_ms, s.Int(1));
    // RETURNING rows must be stepped to the end for the delete to finish.
    FLEETBENCH_ASSIGN_OR_RETURN(bool more, s.Step("merging ranking chunks"));
    if (more) return absl::InternalError("ranking chunk id not unique");
  }
  return RunCached(
      "INSERT INTO metric_points(metric_id, min_time_ms, max_time_ms, "
      "n_points, points) VALUES (?1, ?2, ?3, ?4, ?5)",
      "storing ranking chunk", metric_id, points.min_time_ms, points.max_time_ms,
      points.count, SqlBlob{points.packed});
}

absl::StatusOr<int> SqliteStore::CommitReports(
    const std::vector<ReportWrite>& reports) {
  absl::MutexLock lock(&mu_);
  int inserted = 0;
  SplitParams params;
  PendingPoints points;
  absl::Status status = InTransaction(TxnKind::kWrite, [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement insert, Prepare(compact_samples_ ? kInsertSample : kInsertSampleBefore11));
    for (const ReportWrite& report : reports) {
      for (const v1::Sample& sample : report.samples) {
        FLEETBENCH_RETURN_IF_ERROR(InsertSampleLocked(
            insert, sample, params, points, inserted));
      }
      if (report.task != nullptr) {
        FLEETBENCH_RETURN_IF_ERROR(UpdateTaskLocked(*report.task));
        if (!report.task_log.empty()) {
          FLEETBENCH_RETURN_IF_ERROR(RunCached(
              "INSERT OR REPLACE INTO task_logs(task_id, time_ms, log) VALUES (?1, ?2, ?3)",
              "storing a task's log", report.task->task_id, ToMillis(report.task->updated),
              report.task_log));
        }
      }
    }
    return StagePointsLocked(points);
  });
  if (!status.ok()) return status;
  return inserted;
}

}  // namespace fleetbench::storage
