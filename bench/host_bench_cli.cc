// host_bench_cli — runs one host plugin ("mem" or "disk") outside the agent
// and prints its samples as JSON (protobuf's printer), one object per
// sample; progress and errors go to stderr. For bench/disk_vs_fio.sh and
// for trying parameters by hand:
//
//   host_bench_cli disk --scratch_dir=/var/tmp/fb file_mib=1024 jobs=2
//   host_bench_cli mem threads=4
//   host_bench_cli smallfiles --scratch_dir=/var/tmp/fb files=2000
//   host_bench_cli smallfiles --dataset_root=/data path=/data/train threads=8
//
// --dataset_root plays the agent's --dataset-root: the folders smallfiles
// may read (repeatable).
// Ctrl-C cancels the run the way the agent does (the disk test file is
// removed). Exit status: 0 measured, 1 failed or cancelled, 2 bad usage,
// 3 skipped (FAILED_PRECONDITION: cannot run here).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "agent/benchmarks/disk/disk_uring.h"
#include "agent/benchmarks/mem/mem_stream.h"
#include "agent/benchmarks/smallfiles/smallfiles.h"
#include "common/proto_json.h"

namespace {

std::atomic<bool> g_cancelled{false};

void OnSignal(int) { g_cancelled.store(true); }

int Usage() {
  std::cerr << "usage: host_bench_cli mem|disk|smallfiles [--scratch_dir=DIR] "
               "[--dataset_root=DIR ...] [key=value ...]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using fleetbench::agent::Benchmark;
  if (argc < 2) return Usage();
  const std::string which = argv[1];
  std::unique_ptr<Benchmark> benchmark;
  if (which == "mem") {
    benchmark = std::make_unique<fleetbench::agent::MemStreamBenchmark>();
  } else if (which == "disk") {
    benchmark = std::make_unique<fleetbench::agent::DiskUringBenchmark>();
  } else if (which == "smallfiles") {
    benchmark = std::make_unique<fleetbench::agent::SmallFilesBenchmark>();
  } else {
    return Usage();
  }

  std::string scratch_dir = "/var/tmp";
  std::vector<std::string> dataset_roots;
  fleetbench::agent::Params params;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (absl::StartsWith(arg, "--dataset_root=")) {
      dataset_roots.push_back(arg.substr(std::string("--dataset_root=").size()));
      continue;
    }
    if (absl::StartsWith(arg, "--scratch_dir=")) {
      scratch_dir = arg.substr(std::string("--scratch_dir=").size());
      continue;
    }
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) return Usage();
    params[arg.substr(0, eq)] = arg.substr(eq + 1);
  }

  // A closed pipe must not kill the process before it removes its files.
  std::signal(SIGPIPE, SIG_IGN);
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
  context.set_dataset_roots(dataset_roots);
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
