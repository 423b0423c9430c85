#include "tests/fleet_fixture.h"

#include <signal.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/pem_files.h"
#include "common/transport.h"
#include "fleetbench/v1/node.pb.h"
#include "fleetbench/v1/run.pb.h"
#include "google/protobuf/util/json_util.h"

namespace fleetbench::testing {

void FleetTest::SetUp() {
  dir_ = MakeTempDir("fleet");
  db_path_ = dir_ + "/history.db";
  address_ = absl::StrCat("127.0.0.1:", PickFreePort());
  env_ = {{"FLEETBENCH_TOKEN", "test-token-" + dir_.substr(dir_.size() - 8)},
          // The CA the controller makes beside its database on first start:
          // every CLI call and agent checks the controller with it (TLS by
          // default).
          {"FLEETBENCH_CA", CaPath()}};
  enroll_file_ = dir_ + "/enroll.token";
  absl::Status written = WriteFileAtomically(enroll_file_, env_.at("FLEETBENCH_TOKEN"), 0600);
  ASSERT_TRUE(written.ok()) << written;
}

void FleetTest::TearDown() {
  for (auto& [name, agent] : agents_) agent->Signal(SIGKILL);
  agents_.clear();
  if (controller_) controller_->Signal(SIGKILL);
  controller_.reset();
}

void FleetTest::StartController(const std::vector<std::string>& extra_flags) {
  if (!extra_flags.empty()) controller_flags_ = extra_flags;
  // A test may have moved the database (onto a small filesystem, say): the
  // CA lies beside it wherever it is.
  if (env_.contains("FLEETBENCH_CA")) env_["FLEETBENCH_CA"] = CaPath();
  std::vector<std::string> argv = exec_prefix_;
  for (const char* a : {FLEETBENCH_BINARY, "controller", "--listen"}) argv.push_back(a);
  argv.push_back(address_);
  argv.push_back("--db");
  argv.push_back(db_path_);
  argv.insert(argv.end(), controller_flags_.begin(), controller_flags_.end());
  controller_ = std::make_unique<Process>(argv, env_, dir_ + "/controller.log");
  const std::string line = controller_->ReadLineStartingWith("listening", absl::Seconds(30));
  ASSERT_FALSE(line.empty()) << "controller did not start; see " << dir_ << "/controller.log";
}

void FleetTest::KillController(int sig) {
  controller_->Signal(sig);
  controller_->Wait();
  controller_.reset();
}

Process* FleetTest::StartAgent(const std::string& name, const std::vector<std::string>& labels) {
  auto prefix = agent_prefix_.find(name);
  std::vector<std::string> argv = prefix != agent_prefix_.end() ? prefix->second : exec_prefix_;
  for (const std::string& a : {std::string(FLEETBENCH_BINARY), std::string("agent"),
                               std::string("--controller"),
                               agent_controller_.empty() ? address_ : agent_controller_,
                               std::string("--name"), name,
                               std::string("--state-dir"), dir_ + "/agent-" + name}) {
    argv.push_back(a);
  }
  argv.insert(argv.end(), agent_flags_.begin(), agent_flags_.end());
  if (enroll_agents_) {
    argv.push_back("--enroll-token-file");
    argv.push_back(enroll_file_);
  }
  for (const std::string& l : labels) {
    argv.push_back("--label");
    argv.push_back(l);
  }
  auto p = std::make_unique<Process>(argv, env_, dir_ + "/agent-" + name + ".log");
  Process* raw = p.get();
  agents_[name] = std::move(p);
  return raw;
}

CommandResult FleetTest::Cli(std::vector<std::string> args) {
  args.insert(args.begin(), FLEETBENCH_BINARY);
  args.insert(args.begin(), exec_prefix_.begin(), exec_prefix_.end());
  args.push_back("--controller");
  args.push_back(address_);
  return RunCommand(args, env_);
}

std::unique_ptr<Process> FleetTest::StartCli(std::vector<std::string> args,
                                             const std::string& stderr_path) {
  args.insert(args.begin(), FLEETBENCH_BINARY);
  args.insert(args.begin(), exec_prefix_.begin(), exec_prefix_.end());
  args.push_back("--controller");
  args.push_back(address_);
  return std::make_unique<Process>(args, env_, stderr_path);
}

bool FleetTest::CliJson(std::vector<std::string> args, google::protobuf::Message* message,
                        int* exit_code) {
  args.push_back("--json");
  CommandResult r = Cli(args);
  if (exit_code) *exit_code = r.exit_code;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  auto status = google::protobuf::util::JsonStringToMessage(r.out, message, options);
  if (!status.ok()) {
    ADD_FAILURE() << "bad JSON from `" << args[0] << "` (exit " << r.exit_code << "): " << r.out
                  << "\nstderr: " << r.err;
    return false;
  }
  return true;
}

std::shared_ptr<grpc::ChannelCredentials> FleetTest::Credentials() const {
  absl::StatusOr<std::string> ca = ReadSmallFile(CaPath());
  EXPECT_TRUE(ca.ok()) << ca.status();
  ClientTls tls;
  tls.ca_pem = ca.value_or("");
  return ChannelCredentialsFor(address_, tls);
}

bool FleetTest::WaitForOnlineNodes(int count, absl::Duration timeout) {
  std::string last;
  const bool ok = WaitFor(
      [&] {
        CommandResult r = Cli({"nodes", "--json"});
        v1::ListNodesResponse nodes;
        google::protobuf::util::JsonParseOptions options;
        options.ignore_unknown_fields = true;
        auto parsed = google::protobuf::util::JsonStringToMessage(r.out, &nodes, options);
        if (r.exit_code != 0 || !parsed.ok()) {
          last = absl::StrCat("exit ", r.exit_code, ": ", r.err, parsed.ToString());
          return false;
        }
        int online = 0;
        for (const auto& n : nodes.nodes()) online += n.status() == v1::NODE_STATUS_ONLINE;
        last = absl::StrCat(online, " of ", nodes.nodes_size(), " nodes online");
        return online >= count;
      },
      timeout);
  if (!ok) ADD_FAILURE() << "waiting for " << count << " online nodes: " << last;
  return ok;
}

std::string FleetTest::AgentLog(const std::string& name) const {
  std::ifstream in(dir_ + "/agent-" + name + ".log", std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int FleetTest::CountInAgentLog(const std::string& name, const std::string& text) const {
  const std::string log = AgentLog(name);
  int count = 0;
  for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++count;
  return count;
}

}  // namespace fleetbench::testing
