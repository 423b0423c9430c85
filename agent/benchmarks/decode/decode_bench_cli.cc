// decode_bench_cli — runs the "decode" plugin outside the agent and prints
// its samples as JSON, one object per sample (progress and errors on
// stderr); or writes one of the plugin's synthetic pictures as a JPEG file,
// so that a reference decoder can time the very same bytes
// (bench/decode_vs_tjbench.sh):
//
//   decode_bench_cli sizes=1920x1080 modes=one_core resize=none
//   decode_bench_cli --write-jpeg=/tmp/p.jpg --size=1920x1080 [--quality=90] [--seed=1]
//
// Exit status: 0 measured (or written), 1 failed or cancelled, 2 bad usage.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "agent/benchmarks/decode/decode_benchmark.h"
#include "agent/benchmarks/decode/synthetic_image.h"
#include "agent/benchmarks/decode/turbo_jpeg.h"
#include "common/proto_json.h"

namespace {

std::atomic<bool> g_cancelled{false};

void OnSignal(int) { g_cancelled.store(true); }

int Usage() {
  std::cerr << "usage: decode_bench_cli [key=value ...]\n"
               "       decode_bench_cli --write-jpeg=PATH --size=WxH "
               "[--quality=1..100] [--seed=N]\n";
  return 2;
}

int WriteJpeg(const std::string& path, const std::string& size, int quality,
              uint64_t seed) {
  const std::vector<std::string> sides = absl::StrSplit(size, 'x');
  int width = 0, height = 0;
  if (sides.size() != 2 || !absl::SimpleAtoi(sides[0], &width) ||
      !absl::SimpleAtoi(sides[1], &height) || width < 16 || height < 16 ||
      width > 8192 || height > 8192 || quality < 1 || quality > 100) {
    return Usage();
  }
  absl::StatusOr<std::vector<uint8_t>> jpeg = fleetbench::agent::EncodeJpeg(
      fleetbench::agent::SyntheticPhoto(width, height, seed), quality);
  if (!jpeg.ok()) {
    std::cerr << jpeg.status() << "\n";
    return 1;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(jpeg->data()),
            static_cast<std::streamsize>(jpeg->size()));
  if (!out) {
    std::cerr << "cannot write " << path << "\n";
    return 1;
  }
  std::cout << jpeg->size() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string write_path, size = "1920x1080";
  int quality = 90;
  uint64_t seed = 1;
  fleetbench::agent::Params params;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (absl::StartsWith(arg, "--write-jpeg=")) {
      write_path = arg.substr(13);
    } else if (absl::StartsWith(arg, "--size=")) {
      size = arg.substr(7);
    } else if (absl::StartsWith(arg, "--quality=")) {
      if (!absl::SimpleAtoi(arg.substr(10), &quality)) return Usage();
    } else if (absl::StartsWith(arg, "--seed=")) {
      if (!absl::SimpleAtoi(arg.substr(7), &seed)) return Usage();
    } else {
      const size_t eq = arg.find('=');
      if (eq == std::string::npos || eq == 0 || absl::StartsWith(arg, "-")) {
        return Usage();
      }
      params[arg.substr(0, eq)] = arg.substr(eq + 1);
    }
  }
  if (!write_path.empty()) return WriteJpeg(write_path, size, quality, seed);

  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  fleetbench::agent::DecodeBenchmark benchmark;
  absl::Status status = benchmark.Probe();
  if (status.ok()) status = benchmark.ValidateParams(params);
  if (!status.ok()) {
    std::cerr << "decode: " << status << "\n";
    return 2;
  }
  fleetbench::agent::RunContext context(
      "/var/tmp", &g_cancelled, [](double fraction, const std::string& message) {
        std::fprintf(stderr, "[%3.0f%%] %s\n", fraction * 100, message.c_str());
      });
  absl::StatusOr<std::vector<fleetbench::v1::Sample>> samples =
      benchmark.Run(params, context);
  if (!samples.ok()) {
    std::cerr << "decode: " << samples.status() << "\n";
    return 1;
  }
  for (fleetbench::v1::Sample& sample : *samples) {
    sample.set_benchmark(benchmark.name());
    std::cout << fleetbench::ToJson(sample) << "\n";
  }
  return 0;
}
