// Edges end to end (docs/reliability.md): bad input refused at the door
// (sizes, addresses, flags), large reads paged, the scratch folder and the
// spool checked at agent start. A real controller process on a real SQLite
// file, real agent processes, the CLI; where the input under test is one no
// honest agent or CLI would send (a 3 MB hello, a 5 MB StartRun), this test
// process sends it over real gRPC as a hostile peer would.
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/token.h"
#include "common/ulid.h"
#include "common/wire_limits.h"
#include "fleetbench/v1/agent_service.grpc.pb.h"
#include "fleetbench/v1/fleet_service.grpc.pb.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "storage/sqlite_store.h"
#include "storage/store.h"
#include "tests/fleet_fixture.h"

namespace fleetbench::testing {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

class EdgesTest : public FleetTest {
 protected:
  std::string Token() { return env_.at("FLEETBENCH_TOKEN"); }
  // A channel that may send what the test's hostile peer sends.
  std::shared_ptr<grpc::Channel> Channel() {
    grpc::ChannelArguments args;
    args.SetMaxSendMessageSize(64 << 20);
    args.SetMaxReceiveMessageSize(64 << 20);
    return grpc::CreateCustomChannel(address_, Credentials(), args);
  }
  std::set<std::string> NodeNames() {
    v1::ListNodesResponse nodes;
    int code = -1;
    EXPECT_TRUE(CliJson({"nodes"}, &nodes, &code));
    EXPECT_EQ(code, 0);
    std::set<std::string> names;
    for (const v1::Node& n : nodes.nodes()) names.insert(n.name());
    return names;
  }
};

// Regression: a run with megabytes of parameters was stored, sent an agent into
// a reconnect loop (its RunTask was over the agent's 4 MiB) and broke
// `fleetbench runs` for everyone. It is refused at `run`, for its size, with
// exit 2 and an error that does not echo the value; the fleet goes on.
TEST_F(EdgesTest, HugeParametersAreRefusedAtTheDoorAndEveryoneKeepsWorking) {
  StartController();
  StartAgent("steady", {});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));

  // From the CLI (one argument is at most 128 KiB on Linux).
  CommandResult cli = Cli({"run", "--bench", "gemm", "--param",
                           "gemm.sizes=" + std::string(100 << 10, '7')});
  EXPECT_EQ(cli.exit_code, 2) << cli.err.substr(0, 500);
  EXPECT_NE(cli.err.find("gemm.sizes"), std::string::npos) << cli.err.substr(0, 500);
  EXPECT_NE(cli.err.find("at most 1024"), std::string::npos) << cli.err.substr(0, 500);
  EXPECT_LT(cli.err.size(), 400u) << "the error echoes the input back";

  // Straight to the API, as a script would: 5 MB in one value.
  auto stub = v1::Fleet::NewStub(Channel());
  v1::StartRunRequest request;
  v1::BenchmarkSpec* spec = request.add_benchmarks();
  spec->set_name("gemm");
  (*spec->mutable_params())["sizes"] = std::string(5 << 20, '7');
  grpc::ClientContext context;
  context.AddMetadata(kAuthMetadataKey, "Bearer " + Token());
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::StartRunResponse started;
  const grpc::Status refused = stub->StartRun(&context, request, &started);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("at most 1024"), std::string::npos)
      << refused.error_message().substr(0, 500);
  EXPECT_LT(refused.error_message().size(), 400u);

  v1::ListRunsResponse runs;
  int code = -1;
  ASSERT_TRUE(CliJson({"runs"}, &runs, &code));
  EXPECT_EQ(code, 0);
  EXPECT_EQ(runs.runs_size(), 0);  // nothing stored
  EXPECT_EQ(NodeNames(), std::set<std::string>{"steady"});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(5)));
}

// Regression: a node with 3 MB of facts was stored, and `fleetbench nodes`
// failed for everyone from then on. The hello is refused with the reason;
// the real node and `nodes` are untouched.
TEST_F(EdgesTest, OversizedFactsAreRefusedAtHelloAndNodesKeepsWorking) {
  StartController();
  StartAgent("real", {});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));

  auto stub = v1::AgentGateway::NewStub(Channel());
  grpc::ClientContext context;
  context.AddMetadata(kAuthMetadataKey, "Bearer " + Token());
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto stream = stub->Connect(&context);
  v1::AgentMessage hello;
  hello.mutable_hello()->set_name("fat");
  hello.mutable_hello()->mutable_facts()->mutable_cpu()->set_model(std::string(3 << 20, 'x'));
  ASSERT_TRUE(stream->Write(hello));
  v1::ControllerMessage answer;
  EXPECT_FALSE(stream->Read(&answer)) << "the controller welcomed a 3 MB hello";
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("node facts are"), std::string::npos)
      << status.error_message().substr(0, 500);

  EXPECT_EQ(NodeNames(), std::set<std::string>{"real"});
}

// Regression: a run with 200k samples could not be read by `results` (the answer
// was one message, over every client's limit). GetRun pages the samples and
// the CLI follows the pages: every sample, once.
TEST_F(EdgesTest, ResultsReadsARunOf200kSamples) {
  constexpr int kSamples = 200000;
  const std::string run_id = NewUlid();
  {
    storage::SqliteOptions options;
    options.path = db_path_;
    auto store = storage::OpenSqliteStore(options);
    ASSERT_TRUE(store.ok()) << store.status();
    const absl::Time now = absl::Now();
    storage::NodeRecord node;
    node.name = "big";
    node.agent_version = "test";
    node.first_seen = node.last_seen = now;
    ASSERT_TRUE((*store)->UpsertNode(node).ok());
    storage::RunRecord run;
    run.run_id = run_id;
    run.state = "succeeded";
    run.created = now;
    run.finished = now;
    run.benchmarks.emplace_back().set_name("gemm");
    storage::TaskRecord task;
    task.task_id = NewUlid();
    task.run_id = run_id;
    task.node = "big";
    task.state = v1::TASK_STATE_SUCCEEDED;
    task.updated = now;
    ASSERT_TRUE((*store)->CreateRun(run, {task}).ok());
    for (int chunk = 0; chunk < kSamples / 20000; ++chunk) {
      storage::Store::ReportWrite report;
      for (int i = 0; i < 20000; ++i) {
        v1::Sample& s = report.samples.emplace_back();
        s.set_id(NewUlid());
        s.set_run_id(run_id);
        s.set_node("big");
        s.set_benchmark("gemm");
        s.set_metric(i % 2 ? "gemm.cpu.fp32.tflops" : "gemm.cpu.fp64.tflops");
        s.set_unit("tflops");
        s.set_value(chunk * 20000 + i);
        s.set_time_unix_ms(absl::ToUnixMillis(now) + i);
        (*s.mutable_params())["size"] = "1024";
        (*s.mutable_params())["dtype"] = i % 2 ? "fp32" : "fp64";
        (*s.mutable_params())["threads"] = "1";
      }
      auto stored = (*store)->CommitReports({report});
      ASSERT_TRUE(stored.ok()) << stored.status();
    }
  }
  StartController();
  v1::Run run;
  int code = -1;
  ASSERT_TRUE(CliJson({"results", run_id}, &run, &code));
  EXPECT_EQ(code, 0);
  EXPECT_EQ(run.samples_size(), kSamples);
  std::set<std::string> ids;
  for (const v1::Sample& s : run.samples()) ids.insert(s.id());
  EXPECT_EQ(ids.size(), static_cast<size_t>(kSamples));
  EXPECT_TRUE(run.samples_next_page_token().empty());
  ASSERT_EQ(run.tasks_size(), 1);
  EXPECT_EQ(run.tasks(0).state(), v1::TASK_STATE_SUCCEEDED);
}

// The CLI's edges. Each is refused at once, exit 2, with one line
// and a hint instead of the whole flag list; nothing echoes a huge input.
TEST_F(EdgesTest, CliEdgesAreRefusedWithOneLineAndExit2) {
  // A port out of range bound a random port (and served on it).
  {
    Process listen({FLEETBENCH_BINARY, "controller", "--listen", "127.0.0.1:99999", "--db",
                    db_path_},
                   env_, dir_ + "/listen.log");
    const std::optional<int> listen_exit = listen.WaitFor(absl::Seconds(20));
    ASSERT_TRUE(listen_exit.has_value()) << "the controller is serving on a random port";
    EXPECT_EQ(*listen_exit, 2);
    const std::string err = ReadFile(dir_ + "/listen.log");
    EXPECT_NE(err.find("65535"), std::string::npos) << err;
    EXPECT_EQ(Lines(err), 2) << err;  // the error and the hint
    EXPECT_NE(err.find("fleetbench controller --help"), std::string::npos) << err;
    EXPECT_EQ(err.find("--heartbeat-timeout"), std::string::npos) << "flag list printed";
  }

  // An address that cannot be dialled was redialled forever.
  Process agent({FLEETBENCH_BINARY, "agent", "--controller", "::::", "--name", "lost",
                 "--state-dir", dir_ + "/lost"},
                env_, dir_ + "/lost.log");
  const std::optional<int> agent_exit = agent.WaitFor(absl::Seconds(20));
  ASSERT_TRUE(agent_exit.has_value()) << "agent --controller :::: is still retrying";
  EXPECT_EQ(*agent_exit, 2);
  EXPECT_NE(ReadFile(dir_ + "/lost.log").find("::::"), std::string::npos);

  // A window in days that overflowed.
  StartController();
  CommandResult window = Cli({"rank", "--metric", "gemm.cpu.fp32.tflops", "--window",
                              "9223372036854775807d"});
  EXPECT_EQ(window.exit_code, 2) << window.err;
  EXPECT_NE(window.err.find("--window"), std::string::npos) << window.err;
  CommandResult hours = Cli({"rank", "--metric", "gemm.cpu.fp32.tflops", "--window",
                             "99999999999h"});
  EXPECT_EQ(hours.exit_code, 2) << hours.err;

  // A label past its bound is the agent's usage error, refused before it
  // dials (the controller would refuse the hello).
  Process labelled({FLEETBENCH_BINARY, "agent", "--controller", address_, "--name", "labelled",
                    "--state-dir", dir_ + "/labelled", "--label",
                    "region=" + std::string(300, 'r')},
                   env_, dir_ + "/labelled.log");
  const std::optional<int> labelled_exit = labelled.WaitFor(absl::Seconds(20));
  ASSERT_TRUE(labelled_exit.has_value());
  EXPECT_EQ(*labelled_exit, 2) << ReadFile(dir_ + "/labelled.log");
  EXPECT_NE(ReadFile(dir_ + "/labelled.log").find("at most 256"), std::string::npos);

  // Usage errors the controller finds: one exit code, 2, like local ones.
  StartAgent("solo", {});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  CommandResult ghost = Cli({"run", "--bench", "gemm", "--nodes", "ghost"});
  EXPECT_EQ(ghost.exit_code, 2) << ghost.err;
  EXPECT_NE(ghost.err.find("unknown node 'ghost'"), std::string::npos) << ghost.err;
  CommandResult warp = Cli({"run", "--bench", "warp-drive"});
  EXPECT_EQ(warp.exit_code, 2) << warp.err;
  CommandResult missing = Cli({"results", NewUlid()});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  CommandResult metric = Cli({"rank", "--metric", "warp.drive.tflops"});
  EXPECT_EQ(metric.exit_code, 2) << metric.err;

  // Huge input is clipped where it is echoed.
  const std::string huge(100 << 10, 'q');
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{"runs", "--" + huge},
        std::vector<std::string>{"run", "--bench", huge},
        std::vector<std::string>{"run", "--bench", "gemm", "--nodes", huge},
        std::vector<std::string>{"results", huge},
        std::vector<std::string>{"run", "--bench", "gemm", "--param", huge}}) {
    CommandResult r = Cli(argv);
    const std::string command = absl::StrCat(argv[0], " ", argv[1].substr(0, 20));
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.err.substr(0, 300);
    EXPECT_LT(r.err.size(), 400u) << command << " echoes its input: " << r.err.substr(0, 300);
  }

  // Asked for, the flags are the answer: stdout, exit 0.
  CommandResult help = Cli({"runs", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--page-token"), std::string::npos) << help.out;
  EXPECT_TRUE(help.err.empty()) << help.err;
}

// Regression: agent start-up created the scratch folder through a symlinked
// parent. It refuses to start instead, and creates nothing outside.
TEST_F(EdgesTest, AgentRefusesAScratchFolderBehindASymlink) {
  StartController();
  const std::string elsewhere = dir_ + "/elsewhere";
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(elsewhere, dir_ + "/link");
  agent_flags_ = {"--scratch", dir_ + "/link/sub/scratch"};
  Process* agent = StartAgent("linked", {});
  const std::optional<int> code = agent->WaitFor(absl::Seconds(20));
  ASSERT_TRUE(code.has_value()) << "the agent started with a scratch folder behind a symlink";
  EXPECT_EQ(*code, 1);
  const std::string log = ReadFile(dir_ + "/agent-linked.log");
  EXPECT_NE(log.find("symlink at '" + dir_ + "/link'"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(elsewhere + "/sub"));
}

// Regression: a spool the agent cannot write to was accepted at start, and
// unreadable reports were skipped (or resent and refused) forever.
TEST_F(EdgesTest, AgentRefusesAReadOnlySpoolAndQuarantinesBadReports) {
  StartController();
  // Read-only: a read-only mount for root (who writes through permission
  // bits), the permission bits otherwise.
  const std::string ro_state = dir_ + "/agent-readonly";
  fs::create_directories(ro_state + "/spool");
  bool mounted = false;
  if (geteuid() == 0) {
    ASSERT_EQ(mount("tmpfs", ro_state.c_str(), "tmpfs", 0, "size=256k"), 0) << strerror(errno);
    mounted = true;
    fs::create_directories(ro_state + "/spool");
    fs::create_directories(ro_state + "/scratch");
    ASSERT_EQ(mount(nullptr, ro_state.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr), 0)
        << strerror(errno);
  } else {
    fs::create_directories(ro_state + "/scratch");
    fs::permissions(ro_state + "/spool", fs::perms::owner_read | fs::perms::owner_exec);
  }
  Process* readonly = StartAgent("readonly", {});
  const std::optional<int> code = readonly->WaitFor(absl::Seconds(20));
  if (mounted) umount2(ro_state.c_str(), MNT_DETACH);
  ASSERT_TRUE(code.has_value()) << "the agent started with a read-only spool";
  EXPECT_EQ(*code, 1);
  const std::string ro_log = ReadFile(dir_ + "/agent-readonly.log");
  EXPECT_NE(ro_log.find("not writable"), std::string::npos) << ro_log;

  // Bad files in a spool: each quarantined once, with a line; the agent runs.
  const std::string spool = dir_ + "/agent-spooled/spool";
  fs::create_directories(spool);
  const std::string garbage = NewUlid() + ".report";
  const std::string empty = NewUlid() + ".report";
  std::ofstream(spool + "/" + garbage) << "\xff\xff\xff not a report";
  std::ofstream(spool + "/" + empty).flush();
  std::ofstream(spool + "/stray.txt") << "misnamed";
  StartAgent("spooled", {});
  ASSERT_TRUE(WaitForOnlineNodes(1, absl::Seconds(30)));
  ASSERT_TRUE(WaitFor(
      [&] {
        return fs::exists(spool + "/quarantine/" + garbage) &&
               fs::exists(spool + "/quarantine/" + empty) &&
               fs::exists(spool + "/quarantine/stray.txt");
      },
      absl::Seconds(10)))
      << ReadFile(dir_ + "/agent-spooled.log");
  EXPECT_FALSE(fs::exists(spool + "/" + garbage));
  const std::string log = ReadFile(dir_ + "/agent-spooled.log");
  int lines = 0;
  for (absl::string_view line : absl::StrSplit(log, '\n')) lines += absl::StrContains(line, "quarantined");
  EXPECT_EQ(lines, 3) << log;
}

// `fleetbench` is the lean client; controller, agent and probe run in
// fleetbenchd, which it execs from its own folder (cli/dispatch.h). The
// controller keeps the process id it was started with (what systemd's
// MAINPID and a Kubernetes container's PID 1 rely on), and a client
// installed without fleetbenchd says in one line where it looked instead
// of half-running a daemon.
TEST_F(EdgesTest, TheDaemonCommandsRunInFleetbenchdBesideTheClientInTheSameProcess) {
  StartController();
  char exe[4096];
  const ssize_t n =
      readlink(absl::StrCat("/proc/", controller_->pid(), "/exe").c_str(), exe, sizeof(exe) - 1);
  ASSERT_GT(n, 0) << std::strerror(errno);
  EXPECT_TRUE(absl::EndsWith(std::string(exe, static_cast<size_t>(n)), "/fleetbenchd"))
      << std::string(exe, static_cast<size_t>(n));
  EXPECT_EQ(Cli({"nodes"}).exit_code, 0) << "the controller serves after the exec";

  const std::string lone = dir_ + "/client-alone";
  fs::create_directories(lone);
  fs::copy_file(FLEETBENCH_BINARY, lone + "/fleetbench");
  fs::permissions(lone + "/fleetbench", fs::perms::owner_all);
  for (const char* command : {"controller", "agent", "probe"}) {
    CommandResult r = RunCommand({lone + "/fleetbench", command, "--help"}, env_);
    EXPECT_EQ(r.exit_code, 127) << command << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(lone + "/fleetbenchd"), std::string::npos) << r.err;
  }
  // Its own commands need nothing beside it.
  CommandResult nodes = RunCommand({lone + "/fleetbench", "nodes", "--controller", address_}, env_);
  EXPECT_EQ(nodes.exit_code, 0) << nodes.err;
  // And beside it, the daemon's own flags.
  CommandResult help = RunCommand({FLEETBENCH_BINARY, "controller", "--help"}, env_);
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("--db"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace fleetbench::testing
