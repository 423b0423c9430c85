// The SQLite store's sample reads: a run's samples, a node's history of a
// metric, the sample count.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
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
#include "storage/sqlite_sample_ids.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/store.h"

namespace fleetbench::storage {

// Columns: id, run_id, node, benchmark, metric, value, unit, params, time_ms,
// measured_keys, measured, measured_default (storage/sample_params.h).
absl::StatusOr<std::vector<v1::Sample>> SqliteStore::ReadSamples(Statement& s) {
  return ReadSamples(s, nullptr);
}

absl::StatusOr<std::vector<v1::Sample>> SqliteStore::ReadSamples(
    Statement& s, const std::function<void(Statement&)>& also) {
  std::vector<v1::Sample> samples;
  while (true) {
    FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("reading samples"));
    if (!row) break;
    v1::Sample& sample = samples.emplace_back();
    const absl::string_view params = s.Blob(7);
    if (!params.empty() &&
        !sample.ParseFromArray(params.data(), static_cast<int>(params.size()))) {
      return absl::DataLossError(
          absl::StrCat("cannot parse stored params of sample ", s.Text(0)));
    }
    std::optional<absl::string_view> measured;
    if (!s.IsNull(10)) measured = s.Blob(10);
    if (absl::Status added = AddMeasuredParams(s.Blob(9), s.Blob(11), measured, sample);
        !added.ok()) {
      return absl::DataLossError(
          absl::StrCat("sample ", SampleIdOfColumn(s, 0), ": ", added.message()));
    }
    sample.set_id(SampleIdOfColumn(s, 0));
    sample.set_run_id(s.Text(1));
    sample.set_node(s.Text(2));
    sample.set_benchmark(s.Text(3));
    sample.set_metric(s.Text(4));
    sample.set_value(s.Double(5));
    sample.set_unit(s.Text(6));
    sample.set_time_unix_ms(s.Int(8));
    if (also) also(s);
  }
  return samples;
}

absl::StatusOr<std::vector<v1::Sample>> SqliteStore::ListSamplesForRun(
    const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(int64_t key, RunKeyLocked(run_id));
  // CROSS JOIN fixes the loop order: walk the run's rows (the table is
  // clustered by run), then look up each name and kind by key. Rows come in
  // key order: by node, metric, time.
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s,
      Prepare("SELECT s.id, ?2, n.name, k.benchmark, m.name, s.value, k.unit, "
              "k.params, s.time_ms, k.measured_keys, s.measured, k.measured_default FROM samples s "
              "CROSS JOIN nodes n ON n.id = s.node_id "
              "CROSS JOIN metrics m ON m.id = s.metric_id "
              "CROSS JOIN sample_kinds k ON k.id = s.kind "
              "WHERE s.run_key = ?1"));
  s.BindAll(key, run_id);
  return ReadSamples(s);
}

absl::StatusOr<std::vector<v1::Sample>> SqliteStore::ListSamplesForRunPage(
    const std::string& run_id, int limit, const std::optional<RunSampleCursor>& after,
    std::vector<RunSampleCursor>* cursors) {
  if (limit <= 0) return absl::InvalidArgumentError("a page of samples needs a limit");
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(int64_t key, RunKeyLocked(run_id));
  // The table's key order, the id (in its stored form) breaking ties, so
  // the row-value comparison picks up exactly after the previous page's
  // last row without a sort.
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s,
      Prepare("SELECT s.id, ?2, n.name, k.benchmark, m.name, s.value, k.unit, "
              "k.params, s.time_ms, k.measured_keys, s.measured, k.measured_default, s.node_id, s.metric_id "
              "FROM samples s "
              "CROSS JOIN nodes n ON n.id = s.node_id "
              "CROSS JOIN metrics m ON m.id = s.metric_id "
              "CROSS JOIN sample_kinds k ON k.id = s.kind "
              "WHERE s.run_key = ?1 AND (s.node_id, s.metric_id, s.time_ms, s.id) > (?3, ?4, ?5, ?6) "
              "ORDER BY s.node_id, s.metric_id, s.time_ms, s.id LIMIT ?7"));
  const RunSampleCursor start =
      after.value_or(RunSampleCursor{std::numeric_limits<int64_t>::min(), 0, 0, ""});
  const StoredSampleId start_id(start.id);
  s.BindAll(key, run_id, start.node_key, start.metric_key, start.time_ms);
  start_id.BindTo(s, 6);
  s.Bind(7, limit);
  cursors->clear();
  return ReadSamples(s, [cursors](Statement& row) {
    cursors->push_back({row.Int(12), row.Int(13), row.Int(8), SampleIdOfColumn(row, 0)});
  });
}

absl::StatusOr<std::vector<v1::Sample>> SqliteStore::History(
    const std::string& node, const std::string& metric, int limit,
    const std::optional<SampleCursor>& after) {
  // A page after `after`: samples at its time come after it only when
  // their id is smaller (newest first is time, then id, descending).
  auto in_page = [&after](int64_t time_ms, const std::string& id) {
    if (!after.has_value()) return true;
    return time_ms < after->time_ms || (time_ms == after->time_ms && id < after->id);
  };
  const int64_t newest_ms =
      after.has_value() ? after->time_ms : std::numeric_limits<int64_t>::max();
  absl::MutexLock lock(&mu_);
  std::vector<v1::Sample> samples;
  absl::Status status = InTransaction(TxnKind::kRead, [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(int64_t node_id, NodeIdLocked(node));
    FLEETBENCH_ASSIGN_OR_RETURN(int64_t metric_id,
                                MetricIdLocked(metric, false));
    if (metric_id == 0) return absl::OkStatus();

    // 1. The times and runs of the node's newest `limit` points, from the
    //    ranking points, newest chunks first, stopping at the first chunk
    //    that is all older than the newest `limit` found so far. There is no
    //    node-major sample index: it would cost a page write per node per
    //    commit, the one thing the ingest path cannot afford.
    //    With a cursor, points newer than its time are not candidates, and
    //    those at its time may be on the page before: they are counted on
    //    top of `limit` so that enough of the page's rows are read.
    std::vector<std::pair<int64_t, int64_t>> found;  // (time_ms, run_key)
    const size_t limit_rows = limit > 0 ? static_cast<size_t>(limit) : SIZE_MAX;
    size_t at_cursor = 0;
    auto wanted_now = [&] {
      return limit_rows == SIZE_MAX ? SIZE_MAX : limit_rows + at_cursor;
    };
    FLEETBENCH_RETURN_IF_ERROR(ScanPointsLocked(
        metric_id, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
        [&](absl::string_view packed) {
          for (size_t i = 0; i < packed.size() / kPointBytes; ++i) {
            const RankingPoint p = PointAt(packed, i);
            if (p.metric_id == metric_id && p.node_id == node_id &&
                p.time_ms <= newest_ms) {
              found.emplace_back(p.time_ms, p.run_key);
              if (after.has_value() && p.time_ms == newest_ms) ++at_cursor;
            }
          }
          return absl::OkStatus();
        },
        [&](int64_t chunk_max_time_ms) {
          const size_t wanted = wanted_now();
          if (found.size() < wanted) return true;
          std::nth_element(found.begin(), found.begin() + (wanted - 1),
                           found.end(), std::greater<>());
          return chunk_max_time_ms >= found[wanted - 1].first;
        }));
    if (found.empty()) return absl::OkStatus();
    std::sort(found.begin(), found.end(), std::greater<>());
    // Rows at the boundary time are all read; ties are cut after sorting.
    const int64_t oldest = found[std::min(wanted_now(), found.size()) - 1].first;

    // 2. The full rows, per run, by the table's key (run, node, metric, time).
    absl::flat_hash_map<int64_t, bool> runs;
    for (const auto& [time_ms, run_key] : found) {
      if (time_ms >= oldest) runs[run_key] = true;
    }
    FLEETBENCH_ASSIGN_OR_RETURN(
        Statement s,
        Prepare("SELECT s.id, r.run_id, ?5, k.benchmark, ?6, s.value, k.unit, "
                "k.params, s.time_ms, k.measured_keys, s.measured, k.measured_default FROM samples s "
                "CROSS JOIN runs r ON r.key = s.run_key "
                "CROSS JOIN sample_kinds k ON k.id = s.kind "
                "WHERE s.run_key = ?1 AND s.node_id = ?2 AND s.metric_id = ?3 "
                "AND s.time_ms >= ?4"));
    for (const auto& [run_key, unused] : runs) {
      s.BindAll(run_key, node_id, metric_id, oldest, node, metric);
      FLEETBENCH_ASSIGN_OR_RETURN(std::vector<v1::Sample> rows, ReadSamples(s));
      for (v1::Sample& row : rows) samples.push_back(std::move(row));
      s.Reset();
    }
    std::erase_if(samples, [&](const v1::Sample& row) {
      return !in_page(row.time_unix_ms(), row.id());
    });
    std::sort(samples.begin(), samples.end(),
              [](const v1::Sample& a, const v1::Sample& b) {
                if (a.time_unix_ms() != b.time_unix_ms()) {
                  return a.time_unix_ms() > b.time_unix_ms();
                }
                return a.id() > b.id();
              });
    if (samples.size() > limit_rows) samples.resize(limit_rows);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return samples;
}

absl::Status SqliteStore::ReadSamplesLayout() {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      Statement s,
      Prepare("SELECT (SELECT count(*) FROM sqlite_schema WHERE name = 'sample_kinds'), "
              "(SELECT count(*) FROM pragma_table_info('samples') WHERE name = 'measured')"));
  FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("reading the samples' layout"));
  const bool kinds = row && s.Int(0) > 0;
  const bool measured = row && s.Int(1) > 0;
  if (kinds && !measured) {
    return absl::FailedPreconditionError(
        "the history is at schema 11 exactly, which this build neither reads nor writes; "
        "open it with every migration to move it forward");
  }
  compact_samples_ = kinds;
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SqliteStore::CountSamples() {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(Statement s,
                              Prepare("SELECT count(*) FROM samples"));
  FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("counting samples"));
  return row ? s.Int(0) : 0;
}

}  // namespace fleetbench::storage
