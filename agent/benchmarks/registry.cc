#include "agent/benchmarks/registry.h"

#include "agent/benchmarks/collective/collective_benchmark.h"
#include "agent/benchmarks/decode/decode_benchmark.h"
#include "agent/benchmarks/disk/disk_uring.h"
#include "agent/benchmarks/gemm/cpu_gemm.h"
#include "agent/benchmarks/gpu/gpu_allreduce.h"
#include "agent/benchmarks/gpu/gpu_benchmarks.h"
#include "agent/benchmarks/mem/mem_stream.h"
#include "agent/benchmarks/mem_numa/mem_numa.h"
#include "agent/benchmarks/net/net_benchmark.h"
#include "agent/benchmarks/rdma/rdma_benchmark.h"
#include "agent/benchmarks/smallfiles/smallfiles.h"
#include "agent/benchmarks/workload/workload_benchmark.h"

namespace fleetbench::agent {

std::vector<std::unique_ptr<Benchmark>> MakeAllBenchmarks(PluginSetup setup) {
  std::vector<std::unique_ptr<Benchmark>> all;
  // One line per benchmark. Names are permanent keys.
  all.push_back(std::make_unique<CpuGemmBenchmark>());
  all.push_back(std::make_unique<MemStreamBenchmark>());
  all.push_back(std::make_unique<MemNumaBenchmark>());
  all.push_back(std::make_unique<DiskUringBenchmark>());
  all.push_back(std::make_unique<DecodeBenchmark>());
  all.push_back(std::make_unique<SmallFilesBenchmark>());
  all.push_back(std::make_unique<TcpNetBenchmark>());
  all.push_back(std::make_unique<RdmaBenchmark>());
  // gpu_gemm, pcie, hbm: always listed; on a node without a driver they
  // are skipped with the reason.
  gpu::AppendGpuBenchmarks(&all);
  // allreduce: gloo across a group, NCCL (the GPU plugin's engine) over
  // one node's GPUs, one name (collective/collective_benchmark.h).
  all.push_back(std::make_unique<collective::CollectiveBenchmark>(
      std::make_unique<gpu::AllreduceBenchmark>()));
  // A team's own job steps, as this node's operator declared them.
  all.push_back(std::make_unique<WorkloadBenchmark>(std::move(setup.workloads)));
  return all;
}

}  // namespace fleetbench::agent
