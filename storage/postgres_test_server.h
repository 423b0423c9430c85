// storage/postgres_test_server.h — a real PostgreSQL server for tests.
//
// Start() runs initdb in a fresh folder and starts the server with pg_ctl,
// listening on a Unix socket in that folder only (no TCP port), with one
// role, kUser, whose password is in password_file(): every connection
// authenticates (scram-sha-256), as a production one does. PostgreSQL refuses to run as root, so
// when the tests run as root the server runs as `nobody`, owning the
// folder. The destructor stops it (immediate) and removes the folder.
//
// Where the programs are: $FLEETBENCH_PG_BINDIR, else the newest
// /usr/lib/postgresql/N/bin (Debian's postgresql package), else PATH.
// Start() answers NOT_FOUND when PostgreSQL is not installed.
#ifndef FLEETBENCH_STORAGE_POSTGRES_TEST_SERVER_H_
#define FLEETBENCH_STORAGE_POSTGRES_TEST_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fleetbench::storage {

class PostgresTestServer {
 public:
  static absl::StatusOr<std::unique_ptr<PostgresTestServer>> Start();
  ~PostgresTestServer();
  PostgresTestServer(const PostgresTestServer&) = delete;
  PostgresTestServer& operator=(const PostgresTestServer&) = delete;

  // The role every URL connects as.
  static constexpr char kUser[] = "fleetbench";
  // A URL for `database` on this server (over its socket), and the file
  // with kUser's password.
  std::string Url(const std::string& database) const;
  std::string password_file() const { return dir_ + "/password"; }
  // Creates `database` (lower-case letters, digits and _ only).
  absl::Status CreateDatabase(const std::string& database);
  // Stops the server at once (every connection is cut), and starts it
  // again on the same data.
  absl::Status Stop();
  absl::Status Restart();
  const std::string& dir() const { return dir_; }

 private:
  PostgresTestServer(std::string bin_dir, std::string dir);
  // Runs bin_dir/`program` with `args` as the server's user; its output
  // goes to dir/`program`.log. The error names the log.
  absl::Status Run(const std::string& program, const std::vector<std::string>& args) const;

  const std::string bin_dir_;
  const std::string dir_;  // data/, the socket, the logs
  bool running_ = false;
};

}  // namespace fleetbench::storage

#endif  // FLEETBENCH_STORAGE_POSTGRES_TEST_SERVER_H_
