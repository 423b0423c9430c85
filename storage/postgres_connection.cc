#include "storage/postgres_connection.h"

#include <libpq-fe.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace fleetbench::storage {
namespace {

// libpq's keyword/value options for `url`, with `password` added: the URL
// is expanded by libpq (expand_dbname), so every libpq URL form works.
pg_conn* ConnectTo(const std::string& url, const std::string& password) {
  // Short timeouts (a connect in 2 s, keepalives, unacknowledged data in
  // 2 s): a server that vanished from the network (no FIN) is found within
  // seconds, not the kernel's two hours, which the leader lease's timing
  // counts on (storage/postgres_store.h). libpq ignores the TCP ones on a
  // Unix socket.
  std::vector<const char*> keys = {"dbname",          "connect_timeout",    "application_name",
                                   "keepalives_idle", "keepalives_interval", "keepalives_count",
                                   "tcp_user_timeout"};
  std::vector<const char*> values = {url.c_str(), "2", "fleetbench", "5", "1", "2", "2000"};
  if (!password.empty()) {
    keys.push_back("password");
    values.push_back(password.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  pg_conn* conn = PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/1);
  // The server's notices ("relation ... already exists, skipping") are
  // not errors; libpq would print them on stderr.
  if (conn != nullptr) PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
  return conn;
}

absl::Status ConnectionStatus(pg_conn* conn, absl::string_view url) {
  if (conn == nullptr) return absl::ResourceExhaustedError("libpq: out of memory");
  if (PQstatus(conn) == CONNECTION_OK) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("connecting to PostgreSQL at ", url, ": ",
                                             absl::StripAsciiWhitespace(PQerrorMessage(conn))));
}

}  // namespace

PgParam PgText(absl::string_view text) {
  // PostgreSQL's text holds no NUL byte, and libpq would cut the text at
  // one: a NUL (in a benchmark's output, say) is stored as U+FFFD.
  if (text.find('\0') == absl::string_view::npos) return std::string(text);
  return absl::StrReplaceAll(text, {{absl::string_view("\0", 1), "\xEF\xBF\xBD"}});
}
PgParam PgInt(int64_t value) { return absl::StrCat(value); }

std::string PgArrayLiteral(const std::vector<std::optional<std::string>>& elements) {
  std::string out = "{";
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) out += ',';
    if (!elements[i].has_value()) {
      out += "NULL";
      continue;
    }
    out += '"';
    for (char c : *elements[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}
PgParam PgDouble(double value) {
  if (std::isnan(value)) return std::nullopt;
  // Shortest text that reads back as the same double.
  char buffer[32];
  const int n = std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return std::string(buffer, n);
}

absl::StatusCode PgStatusCodeOf(absl::string_view sqlstate) {
  if (sqlstate == "23505") return absl::StatusCode::kAlreadyExists;  // unique_violation
  if (absl::StartsWith(sqlstate, "53")) {
    // disk_full, out_of_memory, too_many_connections...: the server is out
    // of something; too many connections is a wait, the others a lack.
    return sqlstate == "53300" ? absl::StatusCode::kUnavailable
                               : absl::StatusCode::kResourceExhausted;
  }
  if (absl::StartsWith(sqlstate, "08") ||  // connection exception
      absl::StartsWith(sqlstate, "57P") ||  // admin shutdown, crash shutdown, cannot connect now
      absl::StartsWith(sqlstate, "40") ||   // serialization failure, deadlock
      sqlstate == "55P03") {                // lock not available
    return absl::StatusCode::kUnavailable;
  }
  if (absl::StartsWith(sqlstate, "XX00")) {
    // data_corrupted (XX001), index_corrupted (XX002); XX000 is internal.
    return sqlstate == "XX000" ? absl::StatusCode::kInternal : absl::StatusCode::kDataLoss;
  }
  if (absl::StartsWith(sqlstate, "22") || absl::StartsWith(sqlstate, "23")) {
    return absl::StatusCode::kInvalidArgument;  // data exception, other constraints
  }
  return absl::StatusCode::kInternal;
}

absl::Status PgStatus(pg_conn* conn, pg_result* result, absl::string_view what) {
  if (result != nullptr) {
    const ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return absl::OkStatus();
  }
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    return absl::UnavailableError(
        absl::StrCat(what, ": connection to PostgreSQL lost: ",
                     absl::StripAsciiWhitespace(conn ? PQerrorMessage(conn) : "no connection")));
  }
  if (result == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, ": ", absl::StripAsciiWhitespace(PQerrorMessage(conn))));
  }
  const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
  const std::string sqlstate = state != nullptr ? state : "";
  if (sqlstate.empty()) {
    // libpq's own error, not the server's: the connection failed under the
    // call ("server closed the connection unexpectedly").
    return absl::UnavailableError(
        absl::StrCat(what, ": connection to PostgreSQL lost: ",
                     absl::StripAsciiWhitespace(PQresultErrorMessage(result))));
  }
  return absl::Status(PgStatusCodeOf(sqlstate),
                      absl::StrCat(what, ": ",
                                   absl::StripAsciiWhitespace(PQresultErrorMessage(result)),
                                   " (SQLSTATE ", sqlstate, ")"));
}

PgRows::PgRows(pg_result* result) : result_(result) {}
PgRows::~PgRows() {
  if (result_ != nullptr) PQclear(result_);
}
PgRows::PgRows(PgRows&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}
int PgRows::size() const { return PQntuples(result_); }
int64_t PgRows::affected() const {
  int64_t n = 0;
  return absl::SimpleAtoi(PQcmdTuples(result_), &n) ? n : 0;
}
bool PgRows::IsNull(int row, int column) const {
  return PQgetisnull(result_, row, column) != 0;
}
std::string PgRows::Text(int row, int column) const {
  return std::string(PQgetvalue(result_, row, column), PQgetlength(result_, row, column));
}
int64_t PgRows::Int(int row, int column) const {
  int64_t v = 0;
  return absl::SimpleAtoi(PQgetvalue(result_, row, column), &v) ? v : 0;
}
double PgRows::Double(int row, int column) const {
  if (IsNull(row, column)) return std::numeric_limits<double>::quiet_NaN();
  double v = 0;
  // PostgreSQL writes infinities as "Infinity" and "-Infinity".
  const absl::string_view text = PQgetvalue(result_, row, column);
  if (text == "Infinity") return std::numeric_limits<double>::infinity();
  if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  return absl::SimpleAtod(text, &v) ? v : std::numeric_limits<double>::quiet_NaN();
}
std::string PgRows::Bytes(int row, int column) const {
  if (IsNull(row, column)) return "";
  size_t length = 0;
  unsigned char* bytes = PQunescapeBytea(
      reinterpret_cast<const unsigned char*>(PQgetvalue(result_, row, column)), &length);
  if (bytes == nullptr) return "";
  std::string out(reinterpret_cast<const char*>(bytes), length);
  PQfreemem(bytes);
  return out;
}

absl::StatusOr<std::unique_ptr<PgConnection>> PgConnection::Open(
    const std::string& url, const std::string& password_file) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &error);
  if (options == nullptr) {
    std::string message = error != nullptr ? error : "out of memory";
    if (error != nullptr) PQfreemem(error);
    return absl::InvalidArgumentError(
        absl::StrCat("--db ", url, ": not a PostgreSQL URL: ",
                     absl::StripAsciiWhitespace(message)));
  }
  bool has_password = false;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (std::string_view(o->keyword) == "password" && o->val != nullptr && *o->val != '\0') {
      has_password = true;
    }
  }
  PQconninfoFree(options);
  if (has_password) {
    return absl::InvalidArgumentError(
        "--db: the URL holds a password; put it in a file (--db-password-file) or "
        "PGPASSFILE instead, so it shows in no process list");
  }
  std::string password;
  if (!password_file.empty()) {
    std::ifstream in(password_file);
    if (!in || !std::getline(in, password)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--db-password-file ", password_file, ": cannot read a password"));
    }
    absl::StripTrailingAsciiWhitespace(&password);
  }
  pg_conn* conn = ConnectTo(url, password);
  if (absl::Status s = ConnectionStatus(conn, url); !s.ok()) {
    if (conn != nullptr) PQfinish(conn);
    return s;
  }
  return std::unique_ptr<PgConnection>(new PgConnection(conn, url, std::move(password)));
}

PgConnection::PgConnection(pg_conn* conn, std::string url, std::string password)
    : conn_(conn), url_(std::move(url)), password_(std::move(password)) {}

PgConnection::~PgConnection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

absl::Status PgConnection::Reconnect() {
  if (!refused_.ok()) return refused_;
  if (conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK && !broken_) return absl::OkStatus();
  if (in_transaction_) {
    return absl::UnavailableError("connection to PostgreSQL lost inside a transaction");
  }
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = ConnectTo(url_, password_);
  absl::Status s = ConnectionStatus(conn_, url_);
  broken_ = !s.ok();
  if (s.ok() && on_reconnect_) {
    if (absl::Status hook = on_reconnect_(*this); !hook.ok()) {
      // A refusal (FAILED_PRECONDITION) is for good; anything else (the
      // new connection failed too) is tried again by the next call.
      if (absl::IsFailedPrecondition(hook)) refused_ = hook;
      PQfinish(conn_);
      conn_ = nullptr;
      broken_ = true;
      return hook;
    }
  }
  return s;
}

absl::StatusOr<PgRows> PgConnection::Exec(absl::string_view sql,
                                          const std::vector<PgParam>& params,
                                          absl::string_view what) {
  // A connection lost since the last call is opened again first; one lost
  // during this call fails it (a write may or may not have happened: the
  // caller's retry decides).
  if (absl::Status s = Reconnect(); !s.ok()) return s;
  std::vector<const char*> values(params.size(), nullptr);
  std::vector<int> lengths(params.size(), 0);
  std::vector<int> formats(params.size(), 0);
  for (size_t i = 0; i < params.size(); ++i) {
    if (const auto* text = std::get_if<std::string>(&params[i])) {
      values[i] = text->c_str();
    } else if (const auto* bytes = std::get_if<PgBytes>(&params[i])) {
      values[i] = bytes->bytes.data();
      lengths[i] = static_cast<int>(bytes->bytes.size());
      formats[i] = 1;
    }
  }
  const std::string statement(sql);
  pg_result* result =
      PQexecParams(conn_, statement.c_str(), static_cast<int>(params.size()), nullptr,
                   values.data(), lengths.data(), formats.data(), /*resultFormat=*/0);
  if (absl::Status s = PgStatus(conn_, result, what); !s.ok()) {
    if (result != nullptr) PQclear(result);
    broken_ |= absl::IsUnavailable(s) && PQtransactionStatus(conn_) == PQTRANS_UNKNOWN;
    return s;
  }
  return PgRows(result);
}

absl::Status PgConnection::ExecScript(absl::string_view sql, absl::string_view what) {
  if (absl::Status s = Reconnect(); !s.ok()) return s;
  const std::string script(sql);
  pg_result* result = PQexec(conn_, script.c_str());
  absl::Status s = PgStatus(conn_, result, what);
  if (result != nullptr) PQclear(result);
  broken_ |= absl::IsUnavailable(s) && PQtransactionStatus(conn_) == PQTRANS_UNKNOWN;
  return s;
}

absl::Status PgConnection::Begin(absl::string_view what) {
  absl::Status s = ExecScript("BEGIN", what);
  // A connection the server ended since the last call (a restart, a
  // failover, an idle timeout) is found by the first statement sent on it.
  // BEGIN changes nothing, so it is safe to send once more on a new one.
  if (absl::IsUnavailable(s)) s = ExecScript("BEGIN", what);
  if (!s.ok()) return s;
  in_transaction_ = true;
  return absl::OkStatus();
}

absl::Status PgConnection::Commit(absl::string_view what) {
  absl::Status s = ExecScript("COMMIT", what);
  in_transaction_ = false;
  return s;
}

void PgConnection::Rollback() {
  if (conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK &&
      PQtransactionStatus(conn_) != PQTRANS_IDLE) {
    pg_result* result = PQexec(conn_, "ROLLBACK");
    if (result != nullptr) PQclear(result);
  }
  in_transaction_ = false;
}

void PgConnection::SetOnReconnect(std::function<absl::Status(PgConnection&)> on_reconnect) {
  on_reconnect_ = std::move(on_reconnect);
}

int PgConnection::BackendPid() const { return PQbackendPID(conn_); }

}  // namespace fleetbench::storage
