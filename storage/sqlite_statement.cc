#include "storage/sqlite_statement.h"

#include <sqlite3.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace fleetbench::storage {

// Codes map to gRPC codes on purpose: a full disk is RESOURCE_EXHAUSTED, a
// lock held elsewhere UNAVAILABLE (retry), a damaged file DATA_LOSS, a
// violated constraint the caller's fault.
absl::Status SqliteStatus(sqlite3* db, int rc, absl::string_view what) {
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string message =
      absl::StrCat(what, ": ", detail, " (sqlite error ", rc, ")");
  switch (rc & 0xff) {
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(std::move(message));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(std::move(message));
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(std::move(message));
    case SQLITE_CONSTRAINT:
      if (rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_UNIQUE) {
        return absl::AlreadyExistsError(std::move(message));
      }
      return absl::InvalidArgumentError(std::move(message));
    case SQLITE_TOOBIG:
    case SQLITE_RANGE:
      return absl::InvalidArgumentError(std::move(message));
    default:
      return absl::InternalError(std::move(message));
  }
}

absl::Status Exec(sqlite3* db, const std::string& sql, absl::string_view what) {
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc == SQLITE_OK) return absl::OkStatus();
  return SqliteStatus(db, rc, what);
}

void RollBackIfOpen(sqlite3* db) {
  if (!sqlite3_get_autocommit(db)) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

// ---- Statement ----

absl::StatusOr<Statement> Statement::PrepareOnce(sqlite3* db,
                                                 absl::string_view sql,
                                                 absl::string_view what) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()),
                                    &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(db, rc, what);
  return Statement(db, stmt, /*owned=*/true);
}

Statement::~Statement() {
  if (stmt_ == nullptr) return;
  if (owned_) {
    sqlite3_finalize(stmt_);
  } else {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      owned_(other.owned_),
      bind_rc_(other.bind_rc_) {}

void Statement::Note(int rc) {
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

void Statement::BindInt64(int index, int64_t value) {
  Note(sqlite3_bind_int64(stmt_, index, value));
}

void Statement::Bind(int index, double value) {
  Note(std::isnan(value) ? sqlite3_bind_null(stmt_, index)
                         : sqlite3_bind_double(stmt_, index, value));
}

void Statement::Bind(int index, absl::string_view text) {
  Note(sqlite3_bind_text(stmt_, index, text.data(),
                         static_cast<int>(text.size()), SQLITE_STATIC));
}

void Statement::Bind(int index, SqlBlob blob) {
  const absl::string_view bytes = blob.bytes;
  Note(sqlite3_bind_blob(stmt_, index, bytes.empty() ? "" : bytes.data(),
                         static_cast<int>(bytes.size()), SQLITE_STATIC));
}

void Statement::Bind(int index, std::nullopt_t) {
  Note(sqlite3_bind_null(stmt_, index));
}

absl::StatusOr<bool> Statement::Step(absl::string_view what) {
  if (bind_rc_ != SQLITE_OK) return SqliteStatus(db_, bind_rc_, what);
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteStatus(db_, rc, what);
}

absl::Status Statement::Run(absl::string_view what) {
  absl::StatusOr<bool> row = Step(what);
  if (!row.ok()) return row.status();
  return absl::OkStatus();
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_rc_ = SQLITE_OK;
}

int Statement::Changes() const { return sqlite3_changes(db_); }

int64_t Statement::Int(int col) const { return sqlite3_column_int64(stmt_, col); }

bool Statement::IsNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

bool Statement::IsBlob(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_BLOB;
}

double Statement::Double(int col) const {
  return IsNull(col) ? std::numeric_limits<double>::quiet_NaN()
                     : sqlite3_column_double(stmt_, col);
}

std::string Statement::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

absl::string_view Statement::Blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  if (p == nullptr) return {};
  return {static_cast<const char*>(p),
          static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

// ---- StatementCache ----

absl::StatusOr<Statement> StatementCache::Get(absl::string_view sql) {
  auto it = statements_.find(sql);
  if (it != statements_.end()) return Statement(db_, it->second, /*owned=*/false);
  sqlite3_stmt* stmt = nullptr;
  const int rc =
      sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                         SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    return SqliteStatus(db_, rc, absl::StrCat("preparing \"", sql, "\""));
  }
  statements_.emplace(std::string(sql), stmt);
  return Statement(db_, stmt, /*owned=*/false);
}

void StatementCache::Clear() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  statements_.clear();
}

}  // namespace fleetbench::storage
