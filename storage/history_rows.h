// storage/history_rows.h — a whole history as rows that no backend owns,
// for moving it from one backend to another (`fleetbench store copy`,
// docs/operations.md, "Moving a SQLite history into PostgreSQL").
//
// HistoryTables() lists the tables every backend keeps, in an order where
// a row comes after the rows it refers to, with their columns and the
// kind of value each holds. A backend's export (Store::ExportHistory)
// hands its rows over table by table in that order, in batches, each value
// of the column's kind or null; keys (a node's id, a run's key) are kept
// as they are, so the rows that refer to them need no rewriting. What a
// backend keeps only for itself (SQLite's ranking chunks, its interned
// sample kinds) is not in the list: the export writes samples in the
// list's plain form and the import rebuilds the rest.
#ifndef FLEETBENCH_STORAGE_HISTORY_ROWS_H_
#define FLEETBENCH_STORAGE_HISTORY_ROWS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"

namespace fleetbench::storage {

enum class HistoryColumnKind { kInt, kReal, kText, kBytes, kBool };

struct HistoryColumn {
  const char* name;
  HistoryColumnKind kind;
};

struct HistoryTable {
  const char* name;
  std::vector<HistoryColumn> columns;
  // The column the backend numbers itself (a node's id), or nullptr: the
  // import moves its counter past the copied rows.
  const char* numbered = nullptr;
};

// The tables, parents first.
const std::vector<HistoryTable>& HistoryTables();

// A value: null, or the column's kind (bool and int as int64_t, text and
// bytes as std::string).
struct HistoryNull {};
using HistoryValue = std::variant<HistoryNull, int64_t, double, std::string>;

// Some rows of one table, each with one value per column in the table's
// order.
struct HistoryBatch {
  const HistoryTable* table;
  std::vector<std::vector<HistoryValue>> rows;
};

// Takes a batch; an error stops the export.
using HistorySink = std::function<absl::Status(const HistoryBatch&)>;
// Hands a whole history to a sink (a backend's export).
using HistorySource = std::function<absl::Status(const HistorySink&)>;

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_HISTORY_ROWS_H_
