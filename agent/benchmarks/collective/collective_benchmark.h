// agent/benchmarks/collective/collective_benchmark.h — "allreduce": the
// collective plugin, with two backends behind one name.
//
//   backend=gloo  CPU collectives over gloo's TCP transport between the
//                 members of a group (gloo_engine.h); alone, a group of one.
//   backend=nccl  NCCL (the injected backend, gpu::AllreduceBenchmark;
//                 gpu/gpu_allreduce.h): alone, over every GPU of this node;
//                 in a group, one rank per member node, meeting through the
//                 group's rendezvous.
//   backend=auto  (default) nccl where the NCCL backend probes OK (in a
//                 group: on rank 0), else gloo. In a group rank 0 decides
//                 and publishes its choice under "allreduce/backend" in the
//                 rendezvous (agent/benchmarks/group_key.h), and every
//                 member uses it (or fails with rank 0's reason), so a group
//                 never mixes backends.
// The other parameters are the shared sweep (agent/benchmarks/
// collective_sweep.h): ops, min_bytes, max_bytes, iters, warmup.
//
// gloo samples (rank 0 only; other ranks return none): `<op>.gloo.busbw_GBps`
// at the LARGEST size and one `allreduce.gloo.curve_busbw_GBps` per (op,
// size), with params op, bytes, algbw_GBps, busbw_factor, time_us (the
// slowest rank's time per operation), slowest_rank, ranks, backend, nodes
// (comma list in rank order), iters, warmup. algbw = bytes / time (GB =
// 10^9 B), busbw = algbw · nccl-tests' factor (common/bus_bandwidth.h). A
// wrong result fails the run with DATA_LOSS naming the first bad element.
// NCCL samples are the NCCL backend's, plus backend=nccl.
//
// Probe: OK (gloo is linked in, so a CPU-only node runs it).
// Thread safety: as every plugin, one Run() at a time.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_COLLECTIVE_BENCHMARK_H_
#define FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_COLLECTIVE_BENCHMARK_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/collective/gloo_engine.h"

namespace fleetbench::collective {

inline constexpr char kBackendKey[] = "allreduce/backend";

// What `requested` (auto, gloo, nccl) means here: "gloo" or "nccl", or
// FAILED_PRECONDITION with the reason. `nccl_probe`: the NCCL backend's
// Probe() (FAILED_PRECONDITION when there is none), rank 0's in a group.
absl::StatusOr<std::string> ResolveBackend(const std::string& requested,
                                           const absl::Status& nccl_probe);

// Rank 0's samples of one op's sweep (see above). DATA_LOSS when a point
// has mismatches, INTERNAL when one has no time.
absl::StatusOr<std::vector<v1::Sample>> GlooSamples(
    const std::string& op, int ranks, const std::vector<std::string>& nodes,
    const std::vector<GlooPoint>& points);

// The address part of "host", "host:port", "[v6]" or "[v6]:port" (the
// controller gives the first or third), without a gRPC "ipv4:" prefix.
std::string HostOfAddress(const std::string& address);

class CollectiveBenchmark final : public agent::Benchmark {
 public:
  // `nccl` may be null (no NCCL backend in this build).
  explicit CollectiveBenchmark(std::unique_ptr<agent::Benchmark> nccl);

  std::string name() const override { return "allreduce"; }
  absl::Status Probe() const override { return absl::OkStatus(); }
  absl::Status ValidateParams(const agent::Params& params) const override;
  std::vector<agent::MetricInfo> metrics() const override;
  bool collective() const override { return true; }
  // The sweep's CollectiveSweepTimeout (collective_sweep.h); the base
  // default for parameters that do not parse.
  absl::Duration DefaultTimeout(const agent::Params& params) const override;
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const agent::Params& params, const agent::RunContext& context) override;

 private:
  absl::Status NcclProbe() const;
  // The backend every member uses (rank 0 decides in a group).
  absl::StatusOr<std::string> AgreeOnBackend(const std::string& requested,
                                             const agent::RunContext& context);
  absl::StatusOr<std::vector<v1::Sample>> RunGloo(
      const agent::Params& params, const agent::RunContext& context);
  absl::StatusOr<std::vector<v1::Sample>> RunNccl(
      const agent::Params& params, const agent::RunContext& context);

  std::unique_ptr<agent::Benchmark> nccl_;
};

}  // namespace fleetbench::collective

#endif  // FLEETBENCH_AGENT_BENCHMARKS_COLLECTIVE_COLLECTIVE_BENCHMARK_H_
