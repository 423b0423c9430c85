// fleetbench_net_cli — runs the "net" plugin outside the agent, one role per
// process, and prints the client's samples as JSON (protobuf's printer), one
// object per line; progress and errors go to stderr. For
// bench/net_vs_iperf3.sh and for trying parameters by hand:
//
//   fleetbench_net_cli server --port_file=/tmp/port bind=10.77.0.1
//   fleetbench_net_cli client peer=10.77.0.1:PORT streams=4 duration_s=10
//
// The server prints "listening on port N" to stderr and, with --port_file,
// writes N to that file (atomically, via a rename) once it accepts
// connections. Ctrl-C cancels the way the agent does. Exit status: 0
// measured (or served), 1 failed or cancelled, 2 bad usage.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/benchmarks/net/net_benchmark.h"
#include "common/proto_json.h"

namespace {

std::atomic<bool> g_cancelled{false};

void OnSignal(int) { g_cancelled.store(true); }

int Usage() {
  std::cerr << "usage: fleetbench_net_cli server [--port_file=PATH] "
               "[key=value ...]\n"
               "       fleetbench_net_cli client peer=HOST:PORT "
               "[key=value ...]\n";
  return 2;
}

absl::Status WritePortFile(const std::string& path, int port) {
  const std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(tmp);
    out << port << "\n";
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot rename ", tmp, " to ", path));
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const std::string role = argv[1];
  if (role != "server" && role != "client") return Usage();

  std::string port_file;
  fleetbench::agent::Params params;
  params["role"] = role;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (absl::StartsWith(arg, "--port_file=")) {
      port_file = arg.substr(std::string("--port_file=").size());
      continue;
    }
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) return Usage();
    params[arg.substr(0, eq)] = arg.substr(eq + 1);
  }

  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);

  fleetbench::agent::TcpNetBenchmark benchmark;
  if (absl::Status s = benchmark.ValidateParams(params); !s.ok()) {
    std::cerr << "net: " << s << "\n";
    return 2;
  }
  fleetbench::agent::RunContext context(
      "/tmp", &g_cancelled,
      [](double fraction, const std::string& message) {
        std::fprintf(stderr, "[%3.0f%%] %s\n", fraction * 100, message.c_str());
      },
      [&port_file](int port) {
        std::fprintf(stderr, "listening on port %d\n", port);
        if (port_file.empty()) return absl::OkStatus();
        return WritePortFile(port_file, port);
      });
  absl::StatusOr<std::vector<fleetbench::v1::Sample>> samples =
      benchmark.Run(params, context);
  if (!samples.ok()) {
    std::cerr << "net: " << samples.status() << "\n";
    return 1;
  }
  for (fleetbench::v1::Sample& sample : *samples) {
    sample.set_benchmark(benchmark.name());
    std::cout << fleetbench::ToJson(sample) << "\n";
  }
  return 0;
}
