// The PostgreSQL store's import of a whole history handed over as
// backend-neutral rows (storage/history_rows.h), into an empty database,
// in one transaction: a copy that fails, or is stopped, leaves the
// database as empty as it found it. Each batch is one INSERT ... SELECT
// FROM unnest(...) with a column per parameter; keys are stored as they
// come, and the numbering of each numbered column then goes on after the
// highest copied key.
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "storage/history_rows.h"
#include "storage/postgres_store_impl.h"

namespace fleetbench::storage {
namespace {

const char* ArrayTypeOf(HistoryColumnKind kind) {
  switch (kind) {
    case HistoryColumnKind::kInt:
      return "BIGINT[]";
    case HistoryColumnKind::kReal:
      return "DOUBLE PRECISION[]";
    case HistoryColumnKind::kText:
      return "TEXT[]";
    case HistoryColumnKind::kBytes:
      return "BYTEA[]";
    case HistoryColumnKind::kBool:
      return "BOOLEAN[]";
  }
  return "TEXT[]";
}

// One value as an array element's text; nullopt for NULL. A value of the
// wrong kind for its column is INVALID_ARGUMENT.
absl::StatusOr<std::optional<std::string>> ElementOf(const HistoryValue& value,
                                                     HistoryColumnKind kind) {
  if (std::holds_alternative<HistoryNull>(value)) return std::nullopt;
  switch (kind) {
    case HistoryColumnKind::kInt:
      if (const int64_t* v = std::get_if<int64_t>(&value)) return absl::StrCat(*v);
      break;
    case HistoryColumnKind::kBool:
      if (const int64_t* v = std::get_if<int64_t>(&value)) return *v != 0 ? "t" : "f";
      break;
    case HistoryColumnKind::kReal:
      if (const double* v = std::get_if<double>(&value)) {
        const PgParam p = PgDouble(*v);
        if (!std::holds_alternative<std::string>(p)) return std::nullopt;  // NaN
        return std::get<std::string>(p);
      }
      if (const int64_t* v = std::get_if<int64_t>(&value)) return absl::StrCat(*v);
      break;
    case HistoryColumnKind::kText:
      if (const std::string* v = std::get_if<std::string>(&value)) return *v;
      break;
    case HistoryColumnKind::kBytes:
      // bytea in an array literal: its hex form, \x...
      if (const std::string* v = std::get_if<std::string>(&value)) {
        return absl::StrCat("\\x", absl::BytesToHexString(*v));
      }
      break;
  }
  return absl::InvalidArgumentError("a value of the wrong kind for its column");
}

bool IsHistoryTable(const HistoryTable* table) {
  for (const HistoryTable& t : HistoryTables()) {
    if (&t == table) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::map<std::string, int64_t>> PostgresStore::ImportHistory(
    const HistorySource& source) {
  absl::MutexLock lock(&mu_);
  std::map<std::string, int64_t> stored;
  absl::Status status = InTransaction("importing a history", [&]() -> absl::Status {
    for (const HistoryTable& table : HistoryTables()) {
      FLEETBENCH_ASSIGN_OR_RETURN(
          PgRows any, Exec(absl::StrCat("SELECT 1 FROM ", table.name, " LIMIT 1"), {},
                           absl::StrCat("checking that ", table.name, " is empty")));
      if (any.size() > 0) {
        return absl::FailedPreconditionError(
            absl::StrCat("the database already holds a history (", table.name,
                         " has rows): a copy goes into an empty database"));
      }
      stored[table.name] = 0;
    }
    // The tables' secondary indexes go for the copy and are built again at
    // its end, in the same transaction: one sort per index instead of an
    // index insert per row.
    // Only the history's own tables' plain indexes: no primary key, no
    // unique one, none a constraint owns.
    std::vector<std::optional<std::string>> names;
    for (const HistoryTable& table : HistoryTables()) names.emplace_back(table.name);
    FLEETBENCH_ASSIGN_OR_RETURN(
        PgRows indexes,
        Exec("SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index i "
             "JOIN pg_class t ON t.oid = i.indrelid "
             "JOIN pg_namespace n ON n.oid = t.relnamespace "
             "WHERE n.nspname = current_schema() AND t.relname = ANY($1::TEXT[]) "
             "AND NOT i.indisprimary AND NOT i.indisunique "
             "AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid) "
             "ORDER BY 1",
             {PgText(PgArrayLiteral(names))}, "listing the indexes"));
    for (int i = 0; i < indexes.size(); ++i) {
      // The name as regclass prints it: quoted where it needs to be.
      FLEETBENCH_RETURN_IF_ERROR(Exec(absl::StrCat("DROP INDEX ", indexes.Text(i, 0)), {},
                                      absl::StrCat("dropping index ", indexes.Text(i, 0)))
                                     .status());
    }
    FLEETBENCH_RETURN_IF_ERROR(source([&](const HistoryBatch& batch) -> absl::Status {
      if (!IsHistoryTable(batch.table)) {
        return absl::InvalidArgumentError("a batch of a table that is not in HistoryTables()");
      }
      const HistoryTable& table = *batch.table;
      if (batch.rows.empty()) return absl::OkStatus();
      const size_t n = table.columns.size();
      std::vector<std::vector<std::optional<std::string>>> columns(n);
      for (const std::vector<HistoryValue>& row : batch.rows) {
        if (row.size() != n) {
          return absl::InvalidArgumentError(absl::StrCat("a row of ", table.name, " with ",
                                                         row.size(), " values for ", n,
                                                         " columns"));
        }
        for (size_t c = 0; c < n; ++c) {
          absl::StatusOr<std::optional<std::string>> e = ElementOf(row[c], table.columns[c].kind);
          if (!e.ok()) {
            return absl::InvalidArgumentError(
                absl::StrCat(table.name, ".", table.columns[c].name, ": ", e.status().message()));
          }
          columns[c].push_back(*std::move(e));
        }
      }
      std::vector<std::string> names, casts;
      std::vector<PgParam> params;
      for (size_t c = 0; c < n; ++c) {
        names.push_back(table.columns[c].name);
        casts.push_back(absl::StrCat("$", c + 1, "::", ArrayTypeOf(table.columns[c].kind)));
        params.push_back(PgText(PgArrayLiteral(columns[c])));
      }
      FLEETBENCH_ASSIGN_OR_RETURN(
          PgRows done, Exec(absl::StrCat("INSERT INTO ", table.name, "(",
                                         absl::StrJoin(names, ", "), ") SELECT * FROM unnest(",
                                         absl::StrJoin(casts, ", "), ")"),
                            params, absl::StrCat("copying ", table.name)));
      stored[table.name] += done.affected();
      return absl::OkStatus();
    }));
    for (int i = 0; i < indexes.size(); ++i) {
      FLEETBENCH_RETURN_IF_ERROR(Exec(indexes.Text(i, 1), {},
                                      absl::StrCat("building index ", indexes.Text(i, 0)))
                                     .status());
    }
    for (const HistoryTable& table : HistoryTables()) {
      if (table.numbered == nullptr) continue;
      FLEETBENCH_RETURN_IF_ERROR(
          Exec(absl::StrCat("SELECT setval(pg_get_serial_sequence('", table.name, "', '",
                            table.numbered, "'), coalesce(max(", table.numbered,
                            "), 0) + 1, false) FROM ", table.name),
               {}, absl::StrCat("numbering ", table.name, " after the copied rows"))
              .status());
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return stored;
}

absl::Status PostgresStore::ExportHistory(const HistorySink&, int) {
  return absl::UnimplementedError(
      "a PostgreSQL history is copied with the server's own tools (pg_dump)");
}

}  // namespace fleetbench::storage
