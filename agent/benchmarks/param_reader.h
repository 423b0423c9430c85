// agent/benchmarks/param_reader.h — reading a plugin's string parameters
// (gemm, mem, disk, net, rdma, and the GPU plugins through gpu_params.h), so
// that every plugin checks keys, ranges and syntax the same way and says so
// in the same words.
//
// Pure functions. Every error is INVALID_ARGUMENT and starts with
// "<plugin>: <key>: " so that a user knows which parameter to change.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_PARAM_READER_H_
#define FLEETBENCH_AGENT_BENCHMARKS_PARAM_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "agent/benchmarks/benchmark.h"

namespace fleetbench::agent {

class ParamReader {
 public:
  // `params` must outlive the reader.
  ParamReader(absl::string_view plugin, const Params& params)
      : plugin_(plugin), params_(params) {}

  // INVALID_ARGUMENT naming the first key not in `allowed`: a typo must not
  // silently run the defaults.
  absl::Status CheckKeys(absl::Span<const absl::string_view> allowed) const;

  bool Has(const std::string& key) const { return params_.count(key) > 0; }
  // The value, or `fallback` when the key is absent.
  std::string Get(const std::string& key, const std::string& fallback) const;

  // Integer in [lo, hi].
  absl::StatusOr<int64_t> Int(const std::string& key, int64_t fallback,
                              int64_t lo, int64_t hi) const;
  // One entry of a list under `key` (List() then this), same rules.
  absl::StatusOr<int64_t> IntFrom(const std::string& key,
                                  absl::string_view text, int64_t lo,
                                  int64_t hi) const;
  // Byte count in [lo, hi]: an integer with an optional binary suffix K, M,
  // G (KiB, MiB, GiB): "1048576", "1M", "1G".
  absl::StatusOr<int64_t> Bytes(const std::string& key, int64_t fallback,
                                int64_t lo, int64_t hi) const;
  // Finite number in [lo, hi].
  absl::StatusOr<double> Double(const std::string& key, double fallback,
                                double lo, double hi) const;
  // "0"/"1"/"true"/"false", any case, surrounding spaces ignored.
  absl::StatusOr<bool> Bool(const std::string& key, bool fallback) const;
  // Comma list, entries trimmed, each one of `allowed`, none twice, not
  // empty; in the order given.
  absl::StatusOr<std::vector<std::string>> List(
      const std::string& key, const std::string& fallback,
      absl::Span<const absl::string_view> allowed) const;
  // The same with any entries (the caller checks each one).
  absl::StatusOr<std::vector<std::string>> List(
      const std::string& key, const std::string& fallback) const;

  absl::Status Error(absl::string_view key, absl::string_view what) const;

 private:
  absl::StatusOr<std::vector<std::string>> ListOf(
      const std::string& key, const std::string& fallback,
      const absl::Span<const absl::string_view>* allowed) const;

  std::string plugin_;
  const Params& params_;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_PARAM_READER_H_
