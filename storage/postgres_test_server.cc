#include "storage/postgres_test_server.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "storage/postgres_connection.h"

namespace fleetbench::storage {
namespace {

namespace fs = std::filesystem;

std::string FindBinDir() {
  if (const char* env = std::getenv("FLEETBENCH_PG_BINDIR"); env != nullptr && *env != '\0') {
    return env;
  }
  std::string newest;
  int newest_version = -1;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const int version = std::atoi(e.path().filename().c_str());
    if (version > newest_version && fs::exists(e.path() / "bin" / "initdb", ec)) {
      newest_version = version;
      newest = (e.path() / "bin").string();
    }
  }
  if (!newest.empty()) return newest;
  for (const char* dir : {"/usr/local/bin", "/usr/bin"}) {
    if (fs::exists(fs::path(dir) / "initdb", ec)) return dir;
  }
  return "";
}

// The uid and gid the server runs as: ours, or nobody's when we are root.
struct RunAs {
  uid_t uid;
  gid_t gid;
};
absl::StatusOr<RunAs> ServerUser() {
  if (geteuid() != 0) return RunAs{geteuid(), getegid()};
  const passwd* nobody = getpwnam("nobody");
  if (nobody == nullptr) {
    return absl::FailedPreconditionError(
        "running as root, and there is no user `nobody` to run PostgreSQL as");
  }
  return RunAs{nobody->pw_uid, nobody->pw_gid};
}

std::string Tail(const std::string& path) {
  std::ifstream in(path);
  std::stringstream all;
  all << in.rdbuf();
  std::string text = all.str();
  if (text.size() > 2000) text = text.substr(text.size() - 2000);
  return std::string(absl::StripAsciiWhitespace(text));
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresTestServer>> PostgresTestServer::Start() {
  const std::string bin_dir = FindBinDir();
  if (bin_dir.empty()) {
    return absl::NotFoundError(
        "PostgreSQL is not installed (no initdb in /usr/lib/postgresql/*/bin or "
        "$FLEETBENCH_PG_BINDIR): apt-get install postgresql");
  }
  auto user = ServerUser();
  if (!user.ok()) return user.status();
  std::string pattern = (fs::temp_directory_path() / "fleetbench-pg-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp: ", std::strerror(errno)));
  }
  if (chown(pattern.c_str(), user->uid, user->gid) != 0) {
    return absl::InternalError(absl::StrCat("chown ", pattern, ": ", std::strerror(errno)));
  }
  std::unique_ptr<PostgresTestServer> server(new PostgresTestServer(bin_dir, pattern));
  // The role's password, from a file as a user's would be: every test
  // connection goes through password authentication (scram-sha-256).
  {
    std::ofstream password(server->password_file());
    password << "test-" << getpid() << "-" << pattern.substr(pattern.size() - 6) << "\n";
    if (!password) return absl::InternalError("writing the test server's password file");
  }
  // No fsync: a test's data needs no durability across a machine crash,
  // and fsync is most of initdb's time.
  if (absl::Status s = server->Run("initdb", {"-D", server->dir_ + "/data", "-U", kUser,
                                              "--pwfile", server->password_file(), "-A",
                                              "scram-sha-256", "-E", "UTF8", "--no-sync",
                                              "--no-instructions"});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = server->Restart(); !s.ok()) return s;
  return server;
}

PostgresTestServer::PostgresTestServer(std::string bin_dir, std::string dir)
    : bin_dir_(std::move(bin_dir)), dir_(std::move(dir)) {}

PostgresTestServer::~PostgresTestServer() {
  if (running_) (void)Stop();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

absl::Status PostgresTestServer::Run(const std::string& program,
                                     const std::vector<std::string>& args) const {
  auto user = ServerUser();
  if (!user.ok()) return user.status();
  const std::string log = absl::StrCat(dir_, "/", program, ".log");
  std::vector<std::string> argv = {absl::StrCat(bin_dir_, "/", program)};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c_argv;
  for (std::string& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    // The child: only async-signal-safe calls until exec.
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    if (geteuid() == 0 && (setgroups(0, nullptr) != 0 || setgid(user->gid) != 0 ||
                           setuid(user->uid) != 0)) {
      _exit(126);
    }
    if (chdir(dir_.c_str()) != 0) _exit(126);
    execv(c_argv[0], c_argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(program, " failed (status ", status, "); ", log,
                                          " ends: ", Tail(log)));
}

std::string PostgresTestServer::Url(const std::string& database) const {
  return absl::StrCat("postgresql:///", database, "?host=", dir_, "&user=", kUser);
}

absl::Status PostgresTestServer::CreateDatabase(const std::string& database) {
  for (char c : database) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '_') {
      return absl::InvalidArgumentError(absl::StrCat("database name ", database));
    }
  }
  auto admin = PgConnection::Open(Url("postgres"), password_file());
  if (!admin.ok()) return admin.status();
  // A name cannot be a parameter; it was checked above.
  return (*admin)->ExecScript(absl::StrCat("CREATE DATABASE ", database),
                              absl::StrCat("creating database ", database));
}

absl::Status PostgresTestServer::Stop() {
  running_ = false;
  return Run("pg_ctl", {"-D", dir_ + "/data", "-m", "immediate", "-w", "stop"});
}

absl::Status PostgresTestServer::Restart() {
  // pg_ctl -w returns once the server accepts connections.
  absl::Status s = Run("pg_ctl", {"-D", dir_ + "/data", "-w", "-l", dir_ + "/server.log", "-o",
                                  absl::StrCat("-k ", dir_, " -c listen_addresses='' -c fsync=off "
                                               "-c full_page_writes=off"),
                                  "start"});
  if (!s.ok()) return absl::InternalError(absl::StrCat(s.message(), "; ", dir_,
                                                       "/server.log ends: ",
                                                       Tail(dir_ + "/server.log")));
  running_ = true;
  return absl::OkStatus();
}

}  // namespace fleetbench::storage
