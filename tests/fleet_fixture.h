// tests/fleet_fixture.h — a real fleet on loopback: the fleetbench binary as
// a controller process with its SQLite file and agent processes, driven
// through the CLI exactly as a user would.
#ifndef FLEETBENCH_TESTS_FLEET_FIXTURE_H_
#define FLEETBENCH_TESTS_FLEET_FIXTURE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "google/protobuf/message.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "tests/process.h"

namespace fleetbench::testing {

class FleetTest : public ::testing::Test {
 public:
  void SetUp() override;
  void TearDown() override;

  // Starts (or restarts) the controller on the same port and database.
  void StartController(const std::vector<std::string>& extra_flags = {});
  void KillController(int sig);
  // Starts an agent; labels as key=value.
  Process* StartAgent(const std::string& name, const std::vector<std::string>& labels);
  // Runs `fleetbench ARGS... --controller ADDR`.
  CommandResult Cli(std::vector<std::string> args);
  // Starts `fleetbench ARGS... --controller ADDR` and returns at once, for a
  // command under test while it runs (signalled, say); stderr to `stderr_path`.
  std::unique_ptr<Process> StartCli(std::vector<std::string> args, const std::string& stderr_path);
  // Runs the CLI with --json and parses stdout into `message`.
  bool CliJson(std::vector<std::string> args, google::protobuf::Message* message,
               int* exit_code = nullptr);
  // TLS to the controller as the CLI speaks it (its CA), for tests that
  // speak gRPC themselves.
  std::shared_ptr<grpc::ChannelCredentials> Credentials() const;
  std::string CaPath() const { return (files_prefix_.empty() ? db_path_ : files_prefix_) +
                                      ".tls/ca.pem"; }
  // Waits until `count` nodes are online.
  bool WaitForOnlineNodes(int count, absl::Duration timeout);
  // The agent's log so far, and how often `text` occurs in it.
  std::string AgentLog(const std::string& name) const;
  int CountInAgentLog(const std::string& name, const std::string& text) const;

  std::string dir_;
  // --db: a SQLite file, or a PostgreSQL URL; with a URL, files_prefix_
  // is where the controller's own files are (STATE_DIR/controller).
  std::string db_path_;
  std::string files_prefix_;
  std::string address_;
  // What agents are given as --controller; empty: address_.
  std::string agent_controller_;
  std::map<std::string, std::string> env_;
  std::unique_ptr<Process> controller_;
  std::map<std::string, std::unique_ptr<Process>> agents_;
  std::vector<std::string> controller_flags_;
  // Prepended to every command: e.g. {"ip", "netns", "exec", "hub"} to run
  // the controller and the CLI inside a network namespace.
  std::vector<std::string> exec_prefix_;
  // Per agent, replaces exec_prefix_ (agents live in their own namespaces).
  std::map<std::string, std::vector<std::string>> agent_prefix_;
  std::vector<std::string> agent_flags_;  // extra flags for every agent
  // As users run them (tools/demo.sh): every agent enrolls on its first
  // start with `enroll_file_` (the shared token, an admin's) and from then
  // on connects with its own certificate. Off only in tests about the
  // shared token over TLS or about --insecure.
  bool enroll_agents_ = true;
  std::string enroll_file_;
};

}  // namespace fleetbench::testing

#endif  // FLEETBENCH_TESTS_FLEET_FIXTURE_H_
