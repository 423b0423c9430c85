// The controller's local socket (docs/security.md): a real controller makes DB.sock
// beside its history, owner-only; the CLI on the same host reaches it with
// `--controller unix:PATH`, no CA and no TLS handshake, and still needs a
// token. The socket goes with the controller, a stale one left by a kill is
// replaced at the next start, and a path too long for a socket's name is
// refused at the door. A second controller on the same history is refused
// (controller/history_lock.h) before it can take the first one's socket,
// so is one on another history given a socket that still answers; and the
// CLI sends its token only to a socket of its own user or root.
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/security.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/fleet_fixture.h"
#include "tests/process.h"

namespace fleetbench::testing {
namespace {

class LocalSocketTest : public FleetTest {
 protected:
  std::string SocketPath() const { return db_path_ + ".sock"; }

  // `fleetbench ARGS --controller unix:SOCKET` with the fixture's token and
  // no CA anywhere: the local socket needs none.
  CommandResult Local(std::vector<std::string> args,
                      std::map<std::string, std::string> env_changes = {}) {
    std::map<std::string, std::string> env = env_;
    env.erase("FLEETBENCH_CA");
    for (const auto& [key, value] : env_changes) env[key] = value;
    args.insert(args.begin(), FLEETBENCH_BINARY);
    args.push_back("--controller");
    args.push_back("unix:" + (socket_.empty() ? SocketPath() : socket_));
    return RunCommand(args, env);
  }

  // The socket file's type and permission bits; 0 when there is none.
  mode_t SocketMode(const std::string& path) const {
    struct stat st;
    return stat(path.c_str(), &st) == 0 ? st.st_mode : 0;
  }

  std::string socket_;  // another path than DB.sock, when a test sets one
};

TEST_F(LocalSocketTest, TheCliOnTheControllersHostTalksThroughItsSocketWithAToken) {
  StartController();
  StartAgent("n1", {"pool=local"});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));

  const mode_t mode = SocketMode(SocketPath());
  ASSERT_TRUE(S_ISSOCK(mode)) << SocketPath() << " is not a socket";
  EXPECT_EQ(mode & 0777, 0600u) << "only the controller's user may connect";

  // A read, as over TCP and TLS.
  CommandResult nodes = Local({"nodes", "--json"});
  ASSERT_EQ(nodes.exit_code, 0) << nodes.err;
  v1::ListNodesResponse listed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(nodes.out, &listed).ok()) << nodes.out;
  ASSERT_EQ(listed.nodes_size(), 1);
  EXPECT_EQ(listed.nodes(0).name(), "n1");
  EXPECT_EQ(listed.nodes(0).status(), v1::NODE_STATUS_ONLINE);

  // A write, and its result used through the socket too: the roles hold.
  CommandResult created = Local({"token", "create", "viewer1", "--role", "viewer", "--json"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  v1::CreateTokenResponse token;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(created.out, &token).ok()) << created.out;
  CommandResult viewer_reads = Local({"nodes"}, {{"FLEETBENCH_TOKEN", token.secret()}});
  EXPECT_EQ(viewer_reads.exit_code, 0) << viewer_reads.err;
  CommandResult viewer_runs =
      Local({"run", "--bench", "gemm"}, {{"FLEETBENCH_TOKEN", token.secret()}});
  EXPECT_EQ(viewer_runs.exit_code, 1);
  EXPECT_NE(viewer_runs.err.find("'viewer1' is viewer; this needs operator"), std::string::npos)
      << viewer_runs.err;

  // No TLS is no free pass: a wrong token is refused by the controller.
  CommandResult wrong = Local({"nodes"}, {{"FLEETBENCH_TOKEN", "not-the-token"}});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("wrong token"), std::string::npos) << wrong.err;

  // TLS flags make no sense for a local socket, and say so.
  CommandResult with_ca = Local({"nodes", "--ca", CaPath()});
  EXPECT_EQ(with_ca.exit_code, 2);
  EXPECT_NE(with_ca.err.find("a unix: socket is local, without TLS"), std::string::npos)
      << with_ca.err;
}

TEST_F(LocalSocketTest, TheSocketGoesWithTheControllerAndAStaleOneIsReplacedAtStart) {
  StartController();
  ASSERT_TRUE(S_ISSOCK(SocketMode(SocketPath())));

  // Stopped: the file goes, and the CLI says where it looked.
  KillController(SIGTERM);
  EXPECT_EQ(SocketMode(SocketPath()), 0u) << SocketPath() << " outlived its controller";
  CommandResult gone = Local({"nodes"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.err.find("cannot reach the controller at unix:" + SocketPath()), std::string::npos)
      << gone.err;
  EXPECT_NE(gone.err.find("is the controller running, as you?"), std::string::npos) << gone.err;

  // Killed: the file stays behind, and the next start takes its place.
  StartController();
  KillController(SIGKILL);
  ASSERT_TRUE(S_ISSOCK(SocketMode(SocketPath()))) << "a killed controller cannot remove it";
  StartController();
  CommandResult again = Local({"nodes"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
}

TEST_F(LocalSocketTest, ThePathIsTheUsersToChooseOrTurnOffAndIsCheckedAtTheDoor) {
  socket_ = dir_ + "/elsewhere.sock";
  StartController({"--local-socket", socket_});
  EXPECT_EQ(SocketMode(SocketPath()), 0u);
  EXPECT_TRUE(S_ISSOCK(SocketMode(socket_)));
  CommandResult nodes = Local({"nodes"});
  EXPECT_EQ(nodes.exit_code, 0) << nodes.err;
  KillController(SIGTERM);

  StartController({"--local-socket", "off"});
  EXPECT_EQ(SocketMode(SocketPath()), 0u);
  KillController(SIGTERM);

  // A file that is not a socket is not the controller's to replace.
  std::ofstream(socket_) << "a user's file\n";
  CommandResult taken = RunCommand({FLEETBENCH_BINARY, "controller", "--listen", "127.0.0.1:0",
                                    "--db", db_path_, "--local-socket", socket_},
                                   env_);
  EXPECT_EQ(taken.exit_code, 1);
  EXPECT_NE(taken.err.find("the local socket path " + socket_ +
                           " is a file that is not a socket; it is left alone"),
            std::string::npos)
      << taken.err;
  std::ifstream kept(socket_);
  std::string line;
  EXPECT_TRUE(std::getline(kept, line) && line == "a user's file");

  // Longer than the 107 bytes a socket's name holds.
  const std::string too_long = dir_ + "/" + std::string(120, 's');
  CommandResult refused = RunCommand({FLEETBENCH_BINARY, "controller", "--listen", "127.0.0.1:0",
                                      "--db", db_path_, "--local-socket", too_long},
                                     env_);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find(absl::StrCat("--local-socket: ", too_long.size(),
                                          " bytes is longer than 107")),
            std::string::npos)
      << refused.err;

  // The TCP port is TLS's; agents never dial the socket (it carries no
  // node certificate).
  CommandResult listen_unix = RunCommand(
      {FLEETBENCH_BINARY, "controller", "--listen", "unix:" + dir_ + "/l.sock", "--db", db_path_},
      env_);
  EXPECT_EQ(listen_unix.exit_code, 2);
  EXPECT_NE(listen_unix.err.find("a Unix socket for clients on this host is --local-socket PATH"),
            std::string::npos)
      << listen_unix.err;
  CommandResult agent_unix =
      RunCommand({FLEETBENCH_BINARY, "agent", "--controller", "unix:" + SocketPath(), "--name", "a",
                  "--state-dir", dir_ + "/agent-a"},
                 env_);
  EXPECT_EQ(agent_unix.exit_code, 2);
  EXPECT_NE(agent_unix.err.find("agents dial the controller's TCP port"), std::string::npos)
      << agent_unix.err;
}

TEST_F(LocalSocketTest, ALiveSocketIsNotTakenAndATokenGoesOnlyToASocketOfThisUser) {
  StartController();

  // Another history, the same socket path: refused while the first answers.
  CommandResult other = RunCommand({FLEETBENCH_BINARY, "controller", "--listen", "127.0.0.1:0",
                                    "--db", dir_ + "/other.db", "--local-socket", SocketPath()},
                                   env_);
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.err.find("the local socket " + SocketPath() + " is served by another process"),
            std::string::npos)
      << other.err;
  CommandResult nodes = Local({"nodes"});
  EXPECT_EQ(nodes.exit_code, 0) << nodes.err;

  // A socket another user owns gets no token: whoever listens there is not
  // the controller (its socket is its user's, 0600).
  socket_ = dir_ + "/foreign.sock";
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address = {};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, socket_.data(), socket_.size());
  ASSERT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  if (chown(socket_.c_str(), 65534, 65534) != 0) {
    close(fd);
    GTEST_SKIP() << "giving a socket to another user needs root";
  }
  CommandResult foreign = Local({"nodes"});
  close(fd);
  EXPECT_EQ(foreign.exit_code, 1);
  EXPECT_NE(foreign.err.find(socket_ + " belongs to uid 65534, not to you or root: the token is "
                                       "not sent there"),
            std::string::npos)
      << foreign.err;
}

TEST_F(LocalSocketTest, ASecondControllerOnTheSameHistoryIsRefusedAndTheFirstServesOn) {
  StartController();
  // Started, not run: without the lock it would serve on and never end.
  Process second({FLEETBENCH_BINARY, "controller", "--listen", "127.0.0.1:0", "--db", db_path_},
                 env_, dir_ + "/second.log");
  const std::optional<int> second_code = second.WaitFor(absl::Seconds(30));
  ASSERT_TRUE(second_code.has_value()) << "a second controller on the same history started";
  EXPECT_EQ(*second_code, 1);
  std::ifstream log(dir_ + "/second.log");
  const std::string second_err((std::istreambuf_iterator<char>(log)),
                               std::istreambuf_iterator<char>());
  EXPECT_NE(second_err.find(absl::StrCat("another controller (pid ", controller_->pid(),
                                         ") serves the history ", db_path_)),
            std::string::npos)
      << second_err;
  // Its socket is still the first one's, and the first still answers.
  CommandResult nodes = Local({"nodes"});
  EXPECT_EQ(nodes.exit_code, 0) << nodes.err;

  // A killed holder leaves no lock behind: the kernel drops it.
  KillController(SIGKILL);
  StartController();
  CommandResult after = Local({"nodes"});
  EXPECT_EQ(after.exit_code, 0) << after.err;
}

}  // namespace
}  // namespace fleetbench::testing
