// agent/benchmarks/decode/decode_benchmark.h — "decode": how many JPEG
// pictures per second this node's CPU decodes and resizes, on one core and
// on every core the agent may use: the data loader's CPU side, next to the
// disk's small-file rate and the GPU's step rate.
//
// What it measures: for each picture size, `images` distinct synthetic
// photos (synthetic_image.h) are encoded once with libjpeg-turbo (baseline,
// 4:2:0, `quality`); then each thread, with its own TurboJPEG handle,
// decodes them round robin to RGB (accurate integer DCT, tjDecompress2 at
// full size) and area-resizes each to `resize` (our AreaResize, the box
// filter of OpenCV's INTER_AREA; not TurboJPEG's DCT scaling, which only
// does 1/2, 1/4, 1/8 and is not what torchvision or PIL do by default).
// `resize=none` times the decode alone (the reference comparison with
// libjpeg-turbo's own tjbench, bench/decode_vs_tjbench.sh).
// A repetition runs for `seconds`: the threads start together, each stops
// before starting a new picture once the time is up, and the rate is the
// pictures finished over the time until the last thread stopped. The value
// is the median over `repetitions`; the spread is in the params.
//
// Modes: one_core (1 thread) and all_cores (`threads`, default the usable
// cores: the allowed-CPU list, capped by a cgroup CPU limit rounded up —
// a container's --cpus=2.5 gets 3 threads that the quota then holds to
// 2.5 cores' worth; UsableCores below). Threads are not pinned, so a quota
// throttles them as it would a data loader's workers.
//
// Metrics: decode.jpeg.<mode>.images_per_s and decode.jpeg.<mode>.input_MBps
// (compressed bytes consumed, 10^6 B/s); size etc. in params.
//
// Parameters (all strings; ValidateParams explains any bad one):
//   sizes        comma list of WxH, each side 16..8192   default 512x512,1920x1080
//   quality      JPEG quality 1..100                     default 90
//   resize       WxH (each side 1..4096) or none          default 224x224
//   modes        comma list of one_core, all_cores        default both
//   threads      all_cores threads, 1..4096               default usable cores
//   images       distinct pictures per size, 1..64        default 4
//   repetitions  1..1000                                  default 5
//   seconds      per repetition, 0.05..600                default 0.4
//
// Thread safety: one Run() at a time. Cancellation is checked every 50 ms
// during a repetition. Errors: INVALID_ARGUMENT for bad parameters,
// RESOURCE_EXHAUSTED when the threads' decode buffers would not fit in half
// of physical memory, INTERNAL when a decoded picture is not the one that
// was encoded (its PSNR against the original not 0.5 dB above its PSNR
// against another picture of the set, or a spare one for a set of one).
#ifndef FLEETBENCH_AGENT_BENCHMARKS_DECODE_DECODE_BENCHMARK_H_
#define FLEETBENCH_AGENT_BENCHMARKS_DECODE_DECODE_BENCHMARK_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "fleetbench/v1/facts.pb.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench::agent {

struct PictureSize {
  int width = 0;
  int height = 0;
};

// The parsed, range-checked form of the "decode" parameters.
struct DecodeConfig {
  std::vector<PictureSize> sizes;
  int quality = 90;
  PictureSize resize{224, 224};  // {0, 0}: no resize
  std::vector<std::string> modes;  // "one_core", "all_cores"
  int threads = 0;                 // 0: the usable cores, found at Run()
  int images = 4;
  int repetitions = 5;
  double seconds = 0.4;
};

// Fills defaults for absent keys; INVALID_ARGUMENT naming the parameter and
// the offending text for anything else, unknown keys included. Reads only
// the parameters, never the machine.
absl::StatusOr<DecodeConfig> ParseDecodeParams(const Params& params);

// How many threads "all cores" means for the agent: the allowed CPUs
// (logical cores when unknown), fewer when a cgroup limit is lower (rounded
// up); at least 1. `why` says which fact decided.
int UsableCores(const v1::CpuFacts& cpu, std::string* why);

class DecodeBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "decode"; }
  // OK when TurboJPEG starts (it is linked, so always, barring memory).
  absl::Status Probe() const override;
  std::vector<MetricInfo> metrics() const override;
  absl::Status ValidateParams(const Params& params) const override;
  // Two samples (images_per_s, input_MBps) per (size, mode), sizes outer.
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const Params& params, const RunContext& context) override;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_DECODE_DECODE_BENCHMARK_H_
