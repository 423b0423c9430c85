// storage/sqlite_statement.h — prepare, bind, step: how the store talks to
// SQLite.
//
// A Statement is one use of a prepared statement: typed binds (Bind, or
// BindAll for ?1, ?2, ... in order), then Step (rows) or Run (no rows), then
// the current row's columns. A bind that fails is remembered and reported by
// the next Step, so call sites bind without checking each one. A Statement
// from a StatementCache borrows the cached statement: on scope exit (and on
// Reset) it is reset and its bindings cleared, so the cache holds it idle. A
// Statement from PrepareOnce owns its statement and finalizes it.
//
// Text and blob bindings are SQLITE_STATIC: the caller keeps the bytes alive
// until the statement is reset.
//
// Errors: SqliteStatus turns a SQLite result code into a Status carrying what
// was being done and SQLite's message (the code mapping is in
// docs/storage.md, Errors).
//
// Thread safety: none; a connection and its statements are used by one
// thread at a time (the store's mutex).
//
// No sqlite3.h here: only the storage/sqlite_*.cc files include it.
#ifndef FLEETBENCH_STORAGE_SQLITE_STATEMENT_H_
#define FLEETBENCH_STORAGE_SQLITE_STATEMENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3;
struct sqlite3_stmt;

namespace fleetbench::storage {

// `rc` as a Status: what was being done, SQLite's message, the code.
absl::Status SqliteStatus(sqlite3* db, int rc, absl::string_view what);

// Runs SQL without parameters (pragmas, migration scripts of several
// statements) on the connection.
absl::Status Exec(sqlite3* db, const std::string& sql, absl::string_view what);

// Rolls back the connection's transaction if one is still open: some errors,
// a full disk among them, already rolled SQLite back.
void RollBackIfOpen(sqlite3* db);

// Bind(index, SqlBlob{bytes}) binds a BLOB; a string_view binds TEXT.
struct SqlBlob {
  absl::string_view bytes;
};

class Statement {
 public:
  // Prepares `sql` for this one Statement; `what` labels a failure.
  static absl::StatusOr<Statement> PrepareOnce(sqlite3* db, absl::string_view sql,
                                               absl::string_view what);

  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;

  // Integers and enums bind as INTEGER.
  template <typename Integer>
    requires(std::is_integral_v<Integer> || std::is_enum_v<Integer>)
  void Bind(int index, Integer value) {
    BindInt64(index, static_cast<int64_t>(value));
  }
  // NaN binds as NULL (SQLite would store NULL anyway); Double() reads NULL
  // back as NaN.
  void Bind(int index, double value);
  // Text and blobs are bound without a copy (SQLITE_STATIC): the bytes must
  // outlive the Step. A temporary std::string would not (the bound text of
  // runs.group_nodes once read back as a later error message), so binding
  // one does not compile.
  void Bind(int index, absl::string_view text);
  void Bind(int index, std::string&& text) = delete;
  // A zero-length blob, not NULL, for empty bytes.
  void Bind(int index, SqlBlob blob);
  void Bind(int index, std::nullopt_t);
  // NULL when empty.
  template <typename T>
  void Bind(int index, const std::optional<T>& value) {
    if (value.has_value()) {
      Bind(index, *value);
    } else {
      Bind(index, std::nullopt);
    }
  }
  // Binds `args` to ?1, ?2, ... in order.
  template <typename... Args>
  void BindAll(Args&&... args) {
    static_assert(!(std::is_same_v<Args, std::string> || ...),
                  "a temporary std::string would dangle before the Step: bind a named one");
    [[maybe_unused]] int index = 0;
    (Bind(++index, std::as_const(args)), ...);
  }

  // True with a row, false when done. `what` labels a failure.
  absl::StatusOr<bool> Step(absl::string_view what);
  // Steps a statement that returns no rows.
  absl::Status Run(absl::string_view what);
  // Ready to bind and step again: resets and clears the bindings.
  void Reset();
  // Rows changed by the connection's last finished INSERT, UPDATE or DELETE.
  int Changes() const;

  // Columns of the current row.
  int64_t Int(int col) const;
  bool IsNull(int col) const;
  bool IsBlob(int col) const;
  double Double(int col) const;  // NaN for NULL
  std::string Text(int col) const;
  // Valid until the next Step or Reset.
  absl::string_view Blob(int col) const;

 private:
  friend class StatementCache;
  Statement(sqlite3* db, sqlite3_stmt* stmt, bool owned)
      : db_(db), stmt_(stmt), owned_(owned) {}

  void BindInt64(int index, int64_t value);
  void Note(int rc);

  sqlite3* db_;
  sqlite3_stmt* stmt_;  // null once moved from
  bool owned_;
  int bind_rc_ = 0;  // SQLITE_OK
};

// The connection's prepared statements, by SQL text, prepared once
// (SQLITE_PREPARE_PERSISTENT) and kept for the life of the connection.
class StatementCache {
 public:
  explicit StatementCache(sqlite3* db) : db_(db) {}
  ~StatementCache() { Clear(); }
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

  // The statement for `sql`, prepared on first use. The returned Statement
  // borrows it; at most one may be in use at a time.
  absl::StatusOr<Statement> Get(absl::string_view sql);
  // Finalizes every statement; the connection can close after it.
  void Clear();

 private:
  sqlite3* const db_;
  absl::flat_hash_map<std::string, sqlite3_stmt*> statements_;
};

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_SQLITE_STATEMENT_H_
