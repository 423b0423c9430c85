// tests/group_test_agent.cc — a real agent process whose only plugin is a
// tiny collective benchmark, for tests/group_e2e_test.cc: a stand-in for a
// collective plugin (gloo, NCCL), not for the relay, which it uses as a
// real plugin would. Test-only: it is registered nowhere else.
//
//   group_test_agent --controller HOST:PORT --name NODE --state-dir DIR
//
// `rendezvous_probe` in a group: rank 0 sets "token" to "from-<its node>";
// every other rank gets it (waiting up to the group's deadline) and reports
// what it got in its sample's params. With param hold=1 every rank then
// waits for a key nobody sets, until its group ends or it is cancelled:
// a collective that hangs until the controller stops it.
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/benchmarks/benchmark.h"
#include "agent/runtime/agent.h"
#include "agent/runtime/spool.h"
#include "agent/runtime/task_runner.h"
#include "common/token.h"
#include "common/transport.h"

namespace fleetbench::agent {
namespace {

class RendezvousProbe : public Benchmark {
 public:
  std::string name() const override { return "rendezvous_probe"; }
  bool collective() const override { return true; }
  absl::Status Probe() const override { return absl::OkStatus(); }
  absl::Status ValidateParams(const Params&) const override { return absl::OkStatus(); }
  std::vector<MetricInfo> metrics() const override {
    return {{"rendezvous_probe.wait_us", "us", kLowerIsBetter, "time to meet rank 0"}};
  }
  absl::Duration DefaultTimeout(const Params&) const override { return absl::Seconds(60); }
  absl::StatusOr<std::vector<v1::Sample>> Run(const Params& params,
                                              const RunContext& context) override {
    const GroupContext* group = context.group();
    if (group == nullptr) return absl::FailedPreconditionError("runs only in a group");
    const absl::Time start = absl::Now();
    std::string got;
    if (group->rank == 0) {
      got = absl::StrCat("from-", group->member_nodes[0]);
      if (absl::Status s = group->rendezvous->Set("token", got); !s.ok()) return s;
    } else {
      absl::StatusOr<std::string> token =
          group->rendezvous->Get("token", group->deadline - absl::Now());
      if (!token.ok()) return token.status();
      got = *token;
    }
    const absl::Duration waited = absl::Now() - start;
    if (params.contains("hold")) {
      // Hangs like a collective whose peer died: only the relay's answer
      // (the group ended, the task was cancelled) gets it out.
      absl::StatusOr<std::string> never =
          group->rendezvous->Get("never", group->deadline - absl::Now());
      return never.ok() ? absl::InternalError("someone set 'never'") : never.status();
    }
    v1::Sample s;
    s.set_metric("rendezvous_probe.wait_us");
    s.set_unit("us");
    s.set_value(absl::ToDoubleMicroseconds(waited));
    (*s.mutable_params())["got"] = got;
    (*s.mutable_params())["rank"] = absl::StrCat(group->rank);
    (*s.mutable_params())["size"] = absl::StrCat(group->size);
    return std::vector<v1::Sample>{s};
  }
};

}  // namespace
}  // namespace fleetbench::agent

int main(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  for (int i = 1; i + 1 < argc; i += 2) flags[argv[i]] = argv[i + 1];
  if (!flags.contains("--controller") || !flags.contains("--name") ||
      !flags.contains("--state-dir")) {
    std::cerr << "usage: group_test_agent --controller HOST:PORT --name NODE --state-dir DIR\n";
    return 2;
  }
  fleetbench::agent::AgentOptions options;
  options.controllers = {flags["--controller"]};
  options.name = flags["--name"];
  options.state_dir = flags["--state-dir"];
  options.scratch_dir = options.state_dir + "/scratch";
  std::filesystem::create_directories(options.scratch_dir);
  auto token = fleetbench::LoadToken("");
  if (!token.ok()) {
    std::cerr << token.status() << "\n";
    return 1;
  }
  options.token = *token;
  // TLS as the real agent speaks it: the CA from $FLEETBENCH_CA.
  auto ca = fleetbench::LoadCaPem("");
  if (!ca.ok()) {
    std::cerr << ca.status() << "\n";
    return 1;
  }
  options.tls.ca_pem = *ca;
  auto spool = fleetbench::agent::Spool::Open(options.state_dir + "/spool");
  if (!spool.ok()) {
    std::cerr << spool.status() << "\n";
    return 1;
  }
  std::vector<std::unique_ptr<fleetbench::agent::Benchmark>> benchmarks;
  benchmarks.push_back(std::make_unique<fleetbench::agent::RendezvousProbe>());
  fleetbench::agent::TaskRunner runner(std::move(benchmarks), options.scratch_dir);
  fleetbench::agent::Agent agent(options, std::move(*spool), &runner);
  absl::Status s = agent.Run();
  if (!s.ok()) std::cerr << s << "\n";
  return s.ok() ? 0 : 1;
}
