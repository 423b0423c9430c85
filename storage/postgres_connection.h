// storage/postgres_connection.h — how the PostgreSQL store talks to its
// server: a thin layer over libpq (docs/dependencies.md says why not a
// wrapper library).
//
// A PgConnection is one libpq connection. It is opened from a URL
// (postgresql://USER@HOST[:PORT]/DB, or ?host=/socket/dir for a Unix
// socket) and, when one is named, a password file whose first line is the
// password: a password in the URL is refused, so it never shows in a
// process list or a shell history. Without a file, libpq's own PGPASSFILE
// (~/.pgpass) applies.
//
// Exec sends one statement with $1, $2, ... parameters, never text spliced
// into SQL: text parameters as text, PgBytes as binary (bytea). Rows come
// back as text; Bytes() decodes a bytea column.
//
// Errors: PgStatus maps the server's SQLSTATE onto the store contract's
// codes (storage/store.h; the table is in docs/storage.md, PostgreSQL):
// UNAVAILABLE for a lost or refused connection, a lock or serialization
// wait (retry), RESOURCE_EXHAUSTED for a full disk, ALREADY_EXISTS for a
// unique key, DATA_LOSS for damaged data, INVALID_ARGUMENT for bad data,
// INTERNAL for the rest. After UNAVAILABLE the next Exec outside a
// transaction reconnects once before it fails.
//
// Thread safety: none; one thread at a time (the store's mutex).
//
// No libpq-fe.h here: only storage/postgres_*.cc include it.
#ifndef FLEETBENCH_STORAGE_POSTGRES_CONNECTION_H_
#define FLEETBENCH_STORAGE_POSTGRES_CONNECTION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct pg_conn;
struct pg_result;

namespace fleetbench::storage {

// A bytea parameter: bytes sent as they are.
struct PgBytes {
  std::string bytes;
};
// One parameter: NULL, text (numbers are written as text), or bytes.
using PgParam = std::variant<std::nullopt_t, std::string, PgBytes>;
PgParam PgText(absl::string_view text);
PgParam PgInt(int64_t value);
PgParam PgDouble(double value);  // NaN as NULL
// A PostgreSQL array literal ({"a","b\"c",NULL}) of text elements, each
// quoted; NULL for nullopt. Sent as one text parameter and cast
// ($1::BIGINT[]), it carries a column of many rows in one statement.
std::string PgArrayLiteral(const std::vector<std::optional<std::string>>& elements);

// The rows of one statement's result.
class PgRows {
 public:
  explicit PgRows(pg_result* result);
  ~PgRows();
  PgRows(PgRows&& other) noexcept;
  PgRows(const PgRows&) = delete;
  PgRows& operator=(const PgRows&) = delete;
  PgRows& operator=(PgRows&&) = delete;

  int size() const;
  // Rows changed by an INSERT, UPDATE or DELETE.
  int64_t affected() const;
  bool IsNull(int row, int column) const;
  std::string Text(int row, int column) const;
  int64_t Int(int row, int column) const;    // 0 for NULL
  double Double(int row, int column) const;  // NaN for NULL
  std::string Bytes(int row, int column) const;

 private:
  pg_result* result_;
};

class PgConnection {
 public:
  // Connects to `url`, with the password read from `password_file` when it
  // is not empty. INVALID_ARGUMENT for a URL that does not parse or that
  // holds a password, or an unreadable password file; UNAVAILABLE when the
  // server cannot be reached or refuses.
  static absl::StatusOr<std::unique_ptr<PgConnection>> Open(const std::string& url,
                                                            const std::string& password_file);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // One statement; `what` labels a failure ("storing node n1").
  absl::StatusOr<PgRows> Exec(absl::string_view sql, const std::vector<PgParam>& params,
                              absl::string_view what);
  // Several statements without parameters (a schema script).
  absl::Status ExecScript(absl::string_view sql, absl::string_view what);

  // A transaction: while one is open, a lost connection is not opened
  // again (its statements would run outside it); Rollback ends it whatever
  // happened, and the next call outside reconnects.
  absl::Status Begin(absl::string_view what);
  absl::Status Commit(absl::string_view what);
  void Rollback();

  // The server's process for this connection (pg_backend_pid): tests end
  // it to cut the connection.
  int BackendPid() const;

  // Runs after each reconnect, before any statement is sent on the new
  // connection (the session's state, such as an advisory lock, went with
  // the old one). A failure closes the new connection and is returned by
  // this call and every later one: the connection is refused for good.
  void SetOnReconnect(std::function<absl::Status(PgConnection&)> on_reconnect);

 private:
  PgConnection(pg_conn* conn, std::string url, std::string password);
  absl::Status Reconnect();

  pg_conn* conn_;
  bool in_transaction_ = false;
  std::function<absl::Status(PgConnection&)> on_reconnect_;
  absl::Status refused_;  // set for good by a failed on_reconnect_
  // The last call found the connection gone (libpq may still call it OK).
  bool broken_ = false;
  const std::string url_;
  const std::string password_;
};

// The server's result as a Status (nullptr: out of memory or no
// connection): what was being done, the server's message and SQLSTATE.
absl::Status PgStatus(pg_conn* conn, pg_result* result, absl::string_view what);
// A SQLSTATE's code in the store contract's terms (table above).
absl::StatusCode PgStatusCodeOf(absl::string_view sqlstate);

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_POSTGRES_CONNECTION_H_
