// fleetbench_plugin_cli — runs any registered plugin in this process, no
// agent and no controller, and prints its samples as JSON (protobuf's
// printer), one object per sample; progress and errors go to stderr. For the
// reference comparisons in bench/ (gemm_vs_numpy.sh, mem_vs_stream.sh):
//
//   fleetbench_plugin_cli gemm m=1024 n=3000 k=512 transa=T dtypes=fp32
//   fleetbench_plugin_cli mem_numa --scratch_dir=/var/tmp
//
// Exit status: 0 measured, 1 failed or cancelled, 2 bad usage or
// parameters, 3 skipped (FAILED_PRECONDITION: cannot run here; the reason
// on stderr).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "agent/benchmarks/registry.h"
#include "common/proto_json.h"

namespace {

std::atomic<bool> g_cancelled{false};

void OnSignal(int) { g_cancelled.store(true); }

int Usage() {
  std::cerr << "usage: fleetbench_plugin_cli NAME [--scratch_dir=DIR] "
               "[key=value ...]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const std::string which = argv[1];
  std::unique_ptr<fleetbench::agent::Benchmark> benchmark;
  for (auto& b : fleetbench::agent::MakeAllBenchmarks()) {
    if (b->name() == which) benchmark = std::move(b);
  }
  if (benchmark == nullptr) {
    std::cerr << "no plugin named '" << which << "'\n";
    return Usage();
  }
  std::string scratch_dir = "/var/tmp";
  fleetbench::agent::Params params;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (absl::StartsWith(arg, "--scratch_dir=")) {
      scratch_dir = arg.substr(std::string("--scratch_dir=").size());
      continue;
    }
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) return Usage();
    params[arg.substr(0, eq)] = arg.substr(eq + 1);
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);

  absl::Status status = benchmark->Probe();
  if (status.ok()) status = benchmark->ValidateParams(params);
  if (!status.ok()) {
    std::cerr << which << ": " << status << "\n";
    return absl::IsFailedPrecondition(status) ? 3 : 2;
  }
  fleetbench::agent::RunContext context(
      scratch_dir, &g_cancelled,
      [](double fraction, const std::string& message) {
        std::fprintf(stderr, "[%3.0f%%] %s\n", fraction * 100, message.c_str());
      });
  absl::StatusOr<std::vector<fleetbench::v1::Sample>> samples =
      benchmark->Run(params, context);
  if (!samples.ok()) {
    std::cerr << which << ": " << samples.status() << "\n";
    return absl::IsFailedPrecondition(samples.status()) ? 3 : 1;
  }
  for (fleetbench::v1::Sample& sample : *samples) {
    sample.set_benchmark(benchmark->name());
    std::cout << fleetbench::ToJson(sample) << "\n";
  }
  return 0;
}
