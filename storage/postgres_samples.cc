// The PostgreSQL store's samples: reports in (CommitReports), the reads of
// a run's samples and a node's history, the ranking points, the day
// summaries kept at ingest, and retention.
//
// A commit sends its samples as arrays in one INSERT ... SELECT unnest(...)
// (one round trip, whatever the number of samples), which returns the ids
// that were new: only those join the day summaries.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "common/value_sketch.h"
#include "storage/postgres_store_impl.h"
#include "storage/stored_messages.h"

namespace fleetbench::storage {
namespace {

std::string NullableTextArray(const std::vector<std::optional<std::string>>& elements) {
  return PgArrayLiteral(elements);
}
std::string TextArray(const std::vector<std::string>& elements) {
  return NullableTextArray(
      std::vector<std::optional<std::string>>(elements.begin(), elements.end()));
}
std::string TextArray(const std::set<std::string>& elements) {
  return TextArray(std::vector<std::string>(elements.begin(), elements.end()));
}

// A sample's params as stored: a Sample holding only them, serialized
// deterministically; empty for none.
std::string StoredParams(const v1::Sample& sample) {
  if (sample.params().empty()) return "";
  v1::Sample only;
  *only.mutable_params() = sample.params();
  return SerializeDeterministic(only);
}

// Columns from `first`: id, benchmark, value, unit, params, time_ms.
absl::Status ReadSampleColumns(const PgRows& rows, int i, int first, v1::Sample& sample) {
  const std::string params = rows.Bytes(i, first + 4);
  if (!params.empty() && !sample.ParseFromString(params)) {
    return absl::DataLossError(
        absl::StrCat("cannot parse stored params of sample ", rows.Text(i, first)));
  }
  sample.set_id(rows.Text(i, first));
  sample.set_benchmark(rows.Text(i, first + 1));
  sample.set_value(rows.Double(i, first + 2));
  sample.set_unit(rows.Text(i, first + 3));
  sample.set_time_unix_ms(rows.Int(i, first + 5));
  return absl::OkStatus();
}

constexpr char kSampleColumns[] = "s.id, s.benchmark, s.value, s.unit, s.params, s.time_ms";

struct DayKey {
  int64_t metric_id;
  int64_t day;
  int64_t node_id;
  bool operator<(const DayKey& o) const {
    return std::tie(metric_id, day, node_id) < std::tie(o.metric_id, o.day, o.node_id);
  }
};
struct DayAggregate {
  ValueSketch values;
  int64_t first_ms = std::numeric_limits<int64_t>::max();
  int64_t last_ms = std::numeric_limits<int64_t>::min();
};

}  // namespace

absl::StatusOr<int> PostgresStore::CommitReports(const std::vector<ReportWrite>& reports) {
  // What the samples name, to resolve in one query each.
  std::set<std::string> run_ids, node_names, metric_names;
  size_t total = 0;
  for (const ReportWrite& report : reports) {
    for (const v1::Sample& sample : report.samples) {
      if (sample.id().empty()) return absl::InvalidArgumentError("a sample has no id");
      if (sample.metric().empty()) {
        return absl::InvalidArgumentError(absl::StrCat("sample ", sample.id(), " has no metric"));
      }
      run_ids.insert(sample.run_id());
      node_names.insert(sample.node());
      metric_names.insert(sample.metric());
      ++total;
    }
  }
  absl::MutexLock lock(&mu_);
  int inserted = 0;
  absl::Status status = InTransaction("committing reports", [&]() -> absl::Status {
    std::map<std::string, int64_t> run_keys, node_ids, metric_ids;
    if (total > 0) {
      FLEETBENCH_ASSIGN_OR_RETURN(
          PgRows runs, Exec("SELECT run_id, key FROM runs WHERE run_id = ANY($1::TEXT[])",
                            {PgText(TextArray(run_ids))},
                            "resolving the samples' runs"));
      for (int i = 0; i < runs.size(); ++i) run_keys[runs.Text(i, 0)] = runs.Int(i, 1);
      FLEETBENCH_ASSIGN_OR_RETURN(
          PgRows nodes, Exec("SELECT name, id FROM nodes WHERE name = ANY($1::TEXT[])",
                             {PgText(TextArray(node_names))},
                             "resolving the samples' nodes"));
      for (int i = 0; i < nodes.size(); ++i) node_ids[nodes.Text(i, 0)] = nodes.Int(i, 1);
      const PgParam metrics = PgText(TextArray(metric_names));
      FLEETBENCH_RETURN_IF_ERROR(
          Exec("INSERT INTO metrics(name) SELECT unnest($1::TEXT[]) ON CONFLICT (name) DO NOTHING",
               {metrics}, "adding metrics")
              .status());
      FLEETBENCH_ASSIGN_OR_RETURN(PgRows ids,
                                  Exec("SELECT name, id FROM metrics WHERE name = ANY($1::TEXT[])",
                                       {metrics}, "resolving metrics"));
      for (int i = 0; i < ids.size(); ++i) metric_ids[ids.Text(i, 0)] = ids.Int(i, 1);
    }
    // The columns, in the samples' order (their write order, seq).
    std::vector<std::string> id, run_key, node_id, metric_id, time_ms, benchmark, unit;
    std::vector<std::string> params;
    std::vector<std::optional<std::string>> value;
    std::map<std::string, const v1::Sample*> by_id;
    for (const ReportWrite& report : reports) {
      for (const v1::Sample& sample : report.samples) {
        auto run = run_keys.find(sample.run_id());
        if (run == run_keys.end()) {
          return absl::InvalidArgumentError(
              absl::StrCat("sample ", sample.id(), " names run \"", sample.run_id(),
                           "\", which does not exist: run ", sample.run_id(), " not found"));
        }
        auto node = node_ids.find(sample.node());
        if (node == node_ids.end()) {
          return absl::InvalidArgumentError(
              absl::StrCat("sample ", sample.id(), " names node \"", sample.node(),
                           "\", which does not exist: node ", sample.node(), " not found"));
        }
        id.push_back(sample.id());
        run_key.push_back(absl::StrCat(run->second));
        node_id.push_back(absl::StrCat(node->second));
        metric_id.push_back(absl::StrCat(metric_ids.at(sample.metric())));
        time_ms.push_back(absl::StrCat(sample.time_unix_ms()));
        const PgParam v = PgDouble(sample.value());
        value.push_back(std::holds_alternative<std::string>(v)
                            ? std::optional<std::string>(std::get<std::string>(v))
                            : std::nullopt);
        benchmark.push_back(sample.benchmark());
        unit.push_back(sample.unit());
        // bytea in an array literal: its hex form, \x...
        params.push_back(absl::StrCat("\\x", absl::BytesToHexString(StoredParams(sample))));
        by_id.try_emplace(sample.id(), &sample);
      }
    }
    std::map<DayKey, DayAggregate> days;
    if (!id.empty()) {
      FLEETBENCH_ASSIGN_OR_RETURN(
          PgRows added,
          Exec("INSERT INTO samples(id, run_key, node_id, metric_id, time_ms, value, benchmark, "
               "unit, params) SELECT * FROM unnest($1::TEXT[], $2::BIGINT[], $3::BIGINT[], "
               "$4::BIGINT[], $5::BIGINT[], $6::DOUBLE PRECISION[], $7::TEXT[], $8::TEXT[], "
               "$9::BYTEA[]) ON CONFLICT (id) DO NOTHING RETURNING id, node_id, metric_id",
               {PgText(TextArray(id)), PgText(TextArray(run_key)), PgText(TextArray(node_id)),
                PgText(TextArray(metric_id)), PgText(TextArray(time_ms)), PgText(NullableTextArray(value)),
                PgText(TextArray(benchmark)), PgText(TextArray(unit)), PgText(TextArray(params))},
               "storing samples"));
      inserted = added.size();
      for (int i = 0; i < added.size(); ++i) {
        const v1::Sample& s = *by_id.at(added.Text(i, 0));
        DayAggregate& d =
            days[DayKey{added.Int(i, 2), UtcDayOf(s.time_unix_ms()), added.Int(i, 1)}];
        d.values.Add(s.value());
        d.first_ms = std::min(d.first_ms, s.time_unix_ms());
        d.last_ms = std::max(d.last_ms, s.time_unix_ms());
      }
    }
    // The new samples join their days' summaries in the same transaction:
    // the stored ones read (and locked) in one query, merged here, all
    // written back in one upsert.
    if (!days.empty()) {
      std::vector<std::string> metric_col, day_col, node_col;
      for (const auto& [key, d] : days) {
        metric_col.push_back(absl::StrCat(key.metric_id));
        day_col.push_back(absl::StrCat(key.day));
        node_col.push_back(absl::StrCat(key.node_id));
      }
      const PgParam metrics = PgText(TextArray(metric_col));
      const PgParam day_keys = PgText(TextArray(day_col));
      const PgParam nodes = PgText(TextArray(node_col));
      FLEETBENCH_ASSIGN_OR_RETURN(
          PgRows old,
          Exec("SELECT s.metric_id, s.day, s.node_id, s.first_ms, s.last_ms, s.sketch "
               "FROM metric_day_summaries s JOIN unnest($1::BIGINT[], $2::BIGINT[], "
               "$3::BIGINT[]) AS k(metric_id, day, node_id) ON s.metric_id = k.metric_id "
               "AND s.day = k.day AND s.node_id = k.node_id FOR UPDATE OF s",
               {metrics, day_keys, nodes}, "reading day summaries"));
      for (int i = 0; i < old.size(); ++i) {
        const DayKey key{old.Int(i, 0), old.Int(i, 1), old.Int(i, 2)};
        absl::StatusOr<ValueSketch> stored = ValueSketch::Decode(old.Bytes(i, 5));
        if (!stored.ok()) {
          return absl::DataLossError(absl::StrCat("day summary of metric ", key.metric_id,
                                                  ", day ", key.day, ", node ", key.node_id, ": ",
                                                  stored.status().message()));
        }
        DayAggregate& d = days.at(key);
        d.values.Merge(*stored);
        d.first_ms = std::min(d.first_ms, old.Int(i, 3));
        d.last_ms = std::max(d.last_ms, old.Int(i, 4));
      }
      std::vector<std::string> first_col, last_col, sketch_col;
      for (const auto& [key, d] : days) {
        first_col.push_back(absl::StrCat(d.first_ms));
        last_col.push_back(absl::StrCat(d.last_ms));
        sketch_col.push_back(absl::StrCat("\\x", absl::BytesToHexString(d.values.Encode())));
      }
      FLEETBENCH_RETURN_IF_ERROR(
          Exec("INSERT INTO metric_day_summaries(metric_id, day, node_id, first_ms, last_ms, "
               "sketch) SELECT * FROM unnest($1::BIGINT[], $2::BIGINT[], $3::BIGINT[], "
               "$4::BIGINT[], $5::BIGINT[], $6::BYTEA[]) ON CONFLICT (metric_id, day, node_id) "
               "DO UPDATE SET first_ms = excluded.first_ms, last_ms = excluded.last_ms, "
               "sketch = excluded.sketch",
               {metrics, day_keys, nodes, PgText(TextArray(first_col)),
                PgText(TextArray(last_col)), PgText(TextArray(sketch_col))},
               "storing day summaries")
              .status());
    }
    for (const ReportWrite& report : reports) {
      if (report.task == nullptr) continue;
      FLEETBENCH_RETURN_IF_ERROR(UpdateTaskLocked(*report.task));
      if (report.task_log.empty()) continue;
      FLEETBENCH_RETURN_IF_ERROR(
          Exec("INSERT INTO task_logs(task_id, time_ms, log) VALUES ($1, $2, $3) "
               "ON CONFLICT (task_id) DO UPDATE SET time_ms = excluded.time_ms, "
               "log = excluded.log",
               {PgText(report.task->task_id), PgInt(PgMillis(report.task->updated)),
                PgText(report.task_log)},
               "storing a task's log")
              .status());
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return inserted;
}

absl::StatusOr<std::vector<v1::Sample>> PostgresStore::ListSamplesForRun(
    const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(int64_t key, RunKeyLocked(run_id));
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec(absl::StrCat("SELECT n.name, m.name, ", kSampleColumns,
                        " FROM samples s JOIN nodes n ON n.id = s.node_id "
                        "JOIN metrics m ON m.id = s.metric_id WHERE s.run_key = $1 "
                        "ORDER BY s.node_id, s.metric_id, s.time_ms, s.id"),
           {PgInt(key)}, "reading a run's samples"));
  std::vector<v1::Sample> samples(static_cast<size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) {
    v1::Sample& s = samples[static_cast<size_t>(i)];
    FLEETBENCH_RETURN_IF_ERROR(ReadSampleColumns(rows, i, 2, s));
    s.set_run_id(run_id);
    s.set_node(rows.Text(i, 0));
    s.set_metric(rows.Text(i, 1));
  }
  return samples;
}

absl::StatusOr<std::vector<v1::Sample>> PostgresStore::ListSamplesForRunPage(
    const std::string& run_id, int limit, const std::optional<RunSampleCursor>& after,
    std::vector<RunSampleCursor>* cursors) {
  if (limit <= 0) return absl::InvalidArgumentError("a page of samples needs a limit");
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(int64_t key, RunKeyLocked(run_id));
  const RunSampleCursor start =
      after.value_or(RunSampleCursor{std::numeric_limits<int64_t>::min(), 0, 0, ""});
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec(absl::StrCat("SELECT n.name, m.name, ", kSampleColumns,
                        ", s.node_id, s.metric_id FROM samples s "
                        "JOIN nodes n ON n.id = s.node_id JOIN metrics m ON m.id = s.metric_id "
                        "WHERE s.run_key = $1 AND (s.node_id, s.metric_id, s.time_ms, s.id) > "
                        "($2, $3, $4, $5) ORDER BY s.node_id, s.metric_id, s.time_ms, s.id "
                        "LIMIT $6"),
           {PgInt(key), PgInt(start.node_key), PgInt(start.metric_key), PgInt(start.time_ms),
            PgText(start.id), PgInt(limit)},
           "reading a page of a run's samples"));
  cursors->clear();
  std::vector<v1::Sample> samples(static_cast<size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) {
    v1::Sample& s = samples[static_cast<size_t>(i)];
    FLEETBENCH_RETURN_IF_ERROR(ReadSampleColumns(rows, i, 2, s));
    s.set_run_id(run_id);
    s.set_node(rows.Text(i, 0));
    s.set_metric(rows.Text(i, 1));
    cursors->push_back({rows.Int(i, 8), rows.Int(i, 9), s.time_unix_ms(), s.id()});
  }
  return samples;
}

absl::StatusOr<std::vector<v1::Sample>> PostgresStore::History(
    const std::string& node, const std::string& metric, int limit,
    const std::optional<SampleCursor>& after) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows found, Exec("SELECT id FROM nodes WHERE name = $1", {PgText(node)}, "finding node"));
  if (found.size() == 0) return absl::NotFoundError(absl::StrCat("node ", node, " not found"));
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec(absl::StrCat("SELECT r.run_id, ", kSampleColumns,
                        " FROM samples s JOIN runs r ON r.key = s.run_key "
                        "WHERE s.node_id = $1 AND s.metric_id = "
                        "(SELECT id FROM metrics WHERE name = $2) "
                        "AND ($3::BIGINT IS NULL OR (s.time_ms, s.id) < ($3, $4)) "
                        "ORDER BY s.time_ms DESC, s.id DESC LIMIT $5"),
           {PgInt(found.Int(0, 0)), PgText(metric),
            after ? PgInt(after->time_ms) : PgParam(std::nullopt),
            after ? PgText(after->id) : PgParam(std::nullopt),
            limit > 0 ? PgInt(limit) : PgParam(std::nullopt)},
           "reading a node's history"));
  std::vector<v1::Sample> samples(static_cast<size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) {
    v1::Sample& s = samples[static_cast<size_t>(i)];
    FLEETBENCH_RETURN_IF_ERROR(ReadSampleColumns(rows, i, 1, s));
    s.set_run_id(rows.Text(i, 0));
    s.set_node(node);
    s.set_metric(metric);
  }
  return samples;
}

absl::StatusOr<MetricPointTable> PostgresStore::PointTableLocked(
    const std::string& metric, int64_t since_ms, std::optional<int64_t> until_ms) {
  // Keys, not names, per point; the names of the few distinct keys after.
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec("SELECT s.node_id, s.run_key, s.value, s.time_ms FROM samples s "
           "WHERE s.metric_id = (SELECT id FROM metrics WHERE name = $1) AND s.time_ms >= $2 "
           "AND ($3::BIGINT IS NULL OR s.time_ms < $3)",
           {PgText(metric), PgInt(since_ms),
            until_ms ? PgInt(*until_ms) : PgParam(std::nullopt)},
           "reading ranking points"));
  MetricPointTable table;
  absl::flat_hash_map<int64_t, uint32_t> node_index, run_index;
  std::vector<int64_t> node_keys, run_keys;
  table.points.reserve(static_cast<size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) {
    auto [n, new_node] =
        node_index.try_emplace(rows.Int(i, 0), static_cast<uint32_t>(node_keys.size()));
    if (new_node) node_keys.push_back(rows.Int(i, 0));
    auto [r, new_run] =
        run_index.try_emplace(rows.Int(i, 1), static_cast<uint32_t>(run_keys.size()));
    if (new_run) run_keys.push_back(rows.Int(i, 1));
    table.points.push_back({n->second, r->second, rows.Double(i, 2), PgTime(rows.Int(i, 3))});
  }
  auto names = [&](const char* sql, const std::vector<int64_t>& keys,
                   std::vector<std::string>& out) -> absl::Status {
    if (keys.empty()) return absl::OkStatus();
    std::vector<std::string> text;
    for (int64_t k : keys) text.push_back(absl::StrCat(k));
    FLEETBENCH_ASSIGN_OR_RETURN(PgRows named, Exec(sql, {PgText(TextArray(text))}, "naming keys"));
    std::map<int64_t, std::string> by_key;
    for (int i = 0; i < named.size(); ++i) by_key[named.Int(i, 0)] = named.Text(i, 1);
    out.clear();
    for (int64_t k : keys) {
      auto it = by_key.find(k);
      if (it == by_key.end()) {
        return absl::DataLossError(absl::StrCat("a sample names key ", k,
                                                ", which names nothing; the history is damaged"));
      }
      out.push_back(it->second);
    }
    return absl::OkStatus();
  };
  FLEETBENCH_RETURN_IF_ERROR(
      names("SELECT id, name FROM nodes WHERE id = ANY($1::BIGINT[])", node_keys, table.nodes));
  FLEETBENCH_RETURN_IF_ERROR(
      names("SELECT key, run_id FROM runs WHERE key = ANY($1::BIGINT[])", run_keys,
            table.run_ids));
  return table;
}

absl::StatusOr<std::vector<MetricPoint>> PostgresStore::MetricPointsSince(
    const std::string& metric, absl::Time since) {
  FLEETBENCH_ASSIGN_OR_RETURN(MetricPointTable table, MetricPointTableSince(metric, since));
  std::vector<MetricPoint> points;
  points.reserve(table.points.size());
  for (const MetricPointTable::Point& p : table.points) {
    points.push_back({table.nodes[p.node], table.run_ids[p.run], p.value, p.time});
  }
  return points;
}

absl::StatusOr<MetricPointTable> PostgresStore::MetricPointTableSince(const std::string& metric,
                                                                      absl::Time since) {
  absl::MutexLock lock(&mu_);
  MetricPointTable table;
  absl::Status status = InTransaction("reading ranking points", [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(table, PointTableLocked(metric, PgMillis(since), std::nullopt));
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return table;
}

absl::StatusOr<MetricPointTable> PostgresStore::MetricPointTableBetween(const std::string& metric,
                                                                        absl::Time since,
                                                                        absl::Time until) {
  absl::MutexLock lock(&mu_);
  MetricPointTable table;
  absl::Status status = InTransaction("reading ranking points", [&]() -> absl::Status {
    FLEETBENCH_ASSIGN_OR_RETURN(
        table, PointTableLocked(metric, PgMillis(since),
                                until == absl::InfiniteFuture()
                                    ? std::nullopt
                                    : std::optional<int64_t>(PgMillis(until))));
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return table;
}

absl::StatusOr<MetricPointTable> PostgresStore::MetricPointTableOfNewestRuns(
    const std::string& metric, absl::Time since, int max_runs_per_node, size_t fleet_nodes) {
  (void)fleet_nodes;  // the server picks the runs per node whatever the fleet
  if (max_runs_per_node < 1) {
    return absl::InvalidArgumentError("a read of the newest runs needs at least 1 run per node");
  }
  absl::MutexLock lock(&mu_);
  // Each node's runs ordered by their newest-written point (seq), as
  // SQLite's read meets them newest-written first; every point of a kept
  // run.
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec("WITH p AS (SELECT node_id, run_key, value, time_ms, seq FROM samples "
           "WHERE metric_id = (SELECT id FROM metrics WHERE name = $1) AND time_ms >= $2), "
           "k AS (SELECT node_id, run_key, row_number() OVER "
           "(PARTITION BY node_id ORDER BY max(seq) DESC) AS rn FROM p GROUP BY node_id, run_key) "
           "SELECT n.name, r.run_id, p.value, p.time_ms FROM p "
           "JOIN k ON k.node_id = p.node_id AND k.run_key = p.run_key AND k.rn <= $3 "
           "JOIN nodes n ON n.id = p.node_id JOIN runs r ON r.key = p.run_key "
           "ORDER BY p.seq DESC",
           {PgText(metric), PgInt(PgMillis(since)), PgInt(max_runs_per_node)},
           "reading the newest runs' points"));
  MetricPointTable table;
  std::map<std::string, uint32_t> nodes, runs;
  for (int i = 0; i < rows.size(); ++i) {
    auto [n, new_node] = nodes.try_emplace(rows.Text(i, 0), static_cast<uint32_t>(nodes.size()));
    if (new_node) table.nodes.push_back(n->first);
    auto [r, new_run] = runs.try_emplace(rows.Text(i, 1), static_cast<uint32_t>(runs.size()));
    if (new_run) table.run_ids.push_back(r->first);
    table.points.push_back({n->second, r->second, rows.Double(i, 2), PgTime(rows.Int(i, 3))});
  }
  return table;
}

absl::StatusOr<DaySummaryTable> PostgresStore::DaySummariesSince(const std::string& metric,
                                                                 int64_t first_day) {
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec("SELECT n.name, d.day, d.first_ms, d.last_ms, d.sketch FROM metric_day_summaries d "
           "JOIN nodes n ON n.id = d.node_id WHERE d.metric_id = "
           "(SELECT id FROM metrics WHERE name = $1) AND d.day >= $2",
           {PgText(metric), PgInt(first_day)}, "reading day summaries"));
  DaySummaryTable table;
  std::map<std::string, uint32_t> nodes;
  for (int i = 0; i < rows.size(); ++i) {
    auto [n, added] = nodes.try_emplace(rows.Text(i, 0), static_cast<uint32_t>(nodes.size()));
    if (added) table.nodes.push_back(n->first);
    absl::StatusOr<ValueSketch> values = ValueSketch::Decode(rows.Bytes(i, 4));
    if (!values.ok()) {
      return absl::DataLossError(absl::StrCat("day summary of ", metric, ", day ",
                                              rows.Int(i, 1), ", node ", rows.Text(i, 0), ": ",
                                              values.status().message()));
    }
    table.days.push_back({n->second, rows.Int(i, 1), std::move(*values),
                          PgTime(rows.Int(i, 2)), PgTime(rows.Int(i, 3))});
  }
  return table;
}

absl::StatusOr<int64_t> PostgresStore::PruneSamplesBefore(absl::Time before, int max_samples) {
  if (max_samples <= 0) return absl::InvalidArgumentError("a prune needs a limit > 0");
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec("DELETE FROM samples WHERE id IN (SELECT id FROM samples WHERE time_ms < $1 "
           "ORDER BY time_ms, id LIMIT $2)",
           {PgInt(PgMillis(before)), PgInt(max_samples)}, "removing old samples"));
  return rows.affected();
}

absl::StatusOr<int64_t> PostgresStore::PruneTaskLogsBefore(absl::Time before, int max_logs) {
  if (max_logs <= 0) return absl::InvalidArgumentError("a prune needs a limit > 0");
  absl::MutexLock lock(&mu_);
  FLEETBENCH_ASSIGN_OR_RETURN(
      PgRows rows,
      Exec("DELETE FROM task_logs WHERE task_id IN (SELECT task_id FROM task_logs "
           "WHERE time_ms < $1 ORDER BY time_ms LIMIT $2)",
           {PgInt(PgMillis(before)), PgInt(max_logs)}, "removing old task logs"));
  return rows.affected();
}

}  // namespace fleetbench::storage
