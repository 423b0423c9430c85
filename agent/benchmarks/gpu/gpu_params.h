// agent/benchmarks/gpu/gpu_params.h — reading the GPU plugins' string
// parameters into numbers and lists, with messages a user can act on
// ("gpu_gemm: sizes: 70000 is outside 256..32768"). Pure; no GPU needed.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_PARAMS_H_
#define FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_PARAMS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/param_reader.h"

namespace fleetbench::gpu {

// agent::ParamReader (the rules every plugin shares) plus what only the GPU
// plugins take: byte counts with suffixes and device lists.
class ParamReader {
 public:
  // `allowed`: every key the plugin knows; CheckKeys() rejects the rest.
  ParamReader(std::string plugin, const agent::Params& params,
              std::vector<std::string> allowed);

  absl::Status CheckKeys() const;
  absl::StatusOr<int64_t> Int(const std::string& key, int64_t fallback,
                              int64_t lo, int64_t hi) const;
  absl::StatusOr<double> Double(const std::string& key, double fallback,
                                double lo, double hi) const;
  // Bytes: an integer with an optional binary suffix K, M, G (KiB, MiB,
  // GiB): "1048576", "1M", "1G".
  absl::StatusOr<int64_t> Bytes(const std::string& key, int64_t fallback,
                                int64_t lo, int64_t hi) const;
  // Comma list, trimmed; no empty entries, no repeats.
  absl::StatusOr<std::vector<std::string>> List(
      const std::string& key, const std::string& fallback) const;
  // "all" (the default) gives an empty list, meaning every device; else a
  // comma list of device indices 0..1023.
  absl::StatusOr<std::vector<int>> Devices(const std::string& key) const;
  bool Has(const std::string& key) const { return reader_.Has(key); }

  absl::Status Bad(const std::string& key, const std::string& what) const;

 private:
  agent::ParamReader reader_;
  std::vector<std::string> allowed_;
};

}  // namespace fleetbench::gpu

#endif  // FLEETBENCH_AGENT_BENCHMARKS_GPU_GPU_PARAMS_H_
