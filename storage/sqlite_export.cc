// The SQLite store's export of its whole history as backend-neutral rows
// (storage/history_rows.h). Samples leave the compact layout: each row
// with its id as text, its kind's benchmark and unit, and all its params
// (the kind's and the measured ones) in one params message, in the table's
// key order (by run, node, metric, time: runs in the order they were
// created, which a copy's write order then follows). The ranking
// points are not exported; their days are, once the points still staged
// in recent_points have been folded into them.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "storage/history_rows.h"
#include "storage/sample_params.h"
#include "storage/sqlite_sample_ids.h"
#include "storage/sqlite_statement.h"
#include "storage/sqlite_store_impl.h"
#include "storage/stored_messages.h"

namespace fleetbench::storage {
namespace {

// SQLite's own settings, which mean nothing to another backend.
bool IsSqliteSetting(absl::string_view key) { return key == "day_summaries"; }

HistoryValue ValueOf(const Statement& s, int col, HistoryColumnKind kind) {
  if (s.IsNull(col)) return HistoryNull{};
  switch (kind) {
    case HistoryColumnKind::kInt:
    case HistoryColumnKind::kBool:
      return s.Int(col);
    case HistoryColumnKind::kReal:
      return s.Double(col);
    case HistoryColumnKind::kText:
      return s.Text(col);
    case HistoryColumnKind::kBytes:
      return std::string(s.Blob(col));
  }
  return HistoryNull{};
}

// A batch goes to the sink when it has batch_rows rows or about this many
// bytes (a table of task logs, 64 KiB each, stays in bounded batches).
constexpr size_t kBatchBytes = 8 << 20;

size_t SizeOf(const std::vector<HistoryValue>& row) {
  size_t bytes = 0;
  for (const HistoryValue& v : row) {
    const std::string* text = std::get_if<std::string>(&v);
    bytes += text != nullptr ? text->size() : sizeof(int64_t);
  }
  return bytes;
}

// A batch that goes to the sink when full and at the table's end.
class BatchWriter {
 public:
  BatchWriter(const HistoryTable& table, const HistorySink& sink, int batch_rows)
      : sink_(sink), batch_rows_(batch_rows) {
    batch_.table = &table;
  }
  absl::Status Add(std::vector<HistoryValue> row) {
    bytes_ += SizeOf(row);
    batch_.rows.push_back(std::move(row));
    if (static_cast<int>(batch_.rows.size()) < batch_rows_ && bytes_ < kBatchBytes) {
      return absl::OkStatus();
    }
    return Flush();
  }
  absl::Status Flush() {
    if (batch_.rows.empty()) return absl::OkStatus();
    absl::Status s = sink_(batch_);
    batch_.rows.clear();
    bytes_ = 0;
    return s;
  }

 private:
  const HistorySink& sink_;
  const int batch_rows_;
  HistoryBatch batch_;
  size_t bytes_ = 0;
};

}  // namespace

absl::Status SqliteStore::ExportHistory(const HistorySink& sink, int batch_rows) {
  if (batch_rows <= 0) return absl::InvalidArgumentError("an export needs batch_rows > 0");
  absl::MutexLock lock(&mu_);
  // The staged points join their day summaries first, so the summaries
  // hold every sample, as the other backends' do.
  FLEETBENCH_RETURN_IF_ERROR(
      InTransaction(TxnKind::kWrite, [&]() { return FoldRecentPointsLocked(); }));
  return InTransaction(TxnKind::kRead, [&]() -> absl::Status {
    for (const HistoryTable& table : HistoryTables()) {
      BatchWriter out(table, sink, batch_rows);
      const std::string name = table.name;
      if (name == "samples") {
        FLEETBENCH_ASSIGN_OR_RETURN(
            Statement s,
            Prepare("SELECT s.id, s.run_key, s.node_id, s.metric_id, s.time_ms, s.value, "
                    "k.benchmark, k.unit, k.params, k.measured_keys, s.measured, "
                    "k.measured_default FROM samples s CROSS JOIN sample_kinds k ON k.id = s.kind "
                    "ORDER BY s.run_key, s.node_id, s.metric_id, s.time_ms, s.id"));
        while (true) {
          FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step("exporting samples"));
          if (!row) break;
          const std::string id = SampleIdOfColumn(s, 0);
          v1::Sample params;
          const absl::string_view kind_params = s.Blob(8);
          if (!kind_params.empty() &&
              !params.ParseFromArray(kind_params.data(), static_cast<int>(kind_params.size()))) {
            return absl::DataLossError(absl::StrCat("cannot parse stored params of sample ", id));
          }
          std::optional<absl::string_view> measured;
          if (!s.IsNull(10)) measured = s.Blob(10);
          if (absl::Status added = AddMeasuredParams(s.Blob(9), s.Blob(11), measured, params);
              !added.ok()) {
            return absl::DataLossError(absl::StrCat("sample ", id, ": ", added.message()));
          }
          std::vector<HistoryValue> values;
          values.reserve(9);
          values.emplace_back(id);
          for (int col = 1; col <= 4; ++col) values.emplace_back(s.Int(col));
          values.push_back(s.IsNull(5) ? HistoryValue(HistoryNull{}) : HistoryValue(s.Double(5)));
          values.push_back(s.Text(6));
          values.push_back(s.Text(7));
          values.push_back(params.params().empty() ? std::string()
                                                   : SerializeDeterministic(params));
          FLEETBENCH_RETURN_IF_ERROR(out.Add(std::move(values)));
        }
        FLEETBENCH_RETURN_IF_ERROR(out.Flush());
        continue;
      }
      std::vector<std::string> columns;
      for (const HistoryColumn& c : table.columns) columns.push_back(c.name);
      FLEETBENCH_ASSIGN_OR_RETURN(
          Statement s, Prepare(absl::StrCat("SELECT ", absl::StrJoin(columns, ", "), " FROM ",
                                            name)));
      while (true) {
        FLEETBENCH_ASSIGN_OR_RETURN(bool row, s.Step(absl::StrCat("exporting ", name)));
        if (!row) break;
        if (name == "settings" && IsSqliteSetting(s.Text(0))) continue;
        std::vector<HistoryValue> values;
        values.reserve(table.columns.size());
        for (size_t i = 0; i < table.columns.size(); ++i) {
          values.push_back(ValueOf(s, static_cast<int>(i), table.columns[i].kind));
        }
        FLEETBENCH_RETURN_IF_ERROR(out.Add(std::move(values)));
      }
      FLEETBENCH_RETURN_IF_ERROR(out.Flush());
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::map<std::string, int64_t>> SqliteStore::ImportHistory(const HistorySource&) {
  return absl::UnimplementedError(
      "a copy goes from a SQLite history into PostgreSQL, not into SQLite");
}

}  // namespace fleetbench::storage
