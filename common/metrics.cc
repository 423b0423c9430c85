#include "common/metrics.h"

namespace fleetbench {

const std::vector<MetricInfo>& AllMetrics() {
  static const std::vector<MetricInfo> kMetrics = {
      {"gemm.cpu.fp32.tflops", "tflops", true,
       "CPU single-precision GEMM (OpenBLAS sgemm), median over repetitions"},
      {"gemm.cpu.fp64.tflops", "tflops", true,
       "CPU double-precision GEMM (OpenBLAS dgemm), median over repetitions"},
      // Host memory (STREAM kernels, best of N).
      {"mem.copy.GBps", "GBps", true, "STREAM copy bandwidth, all cores"},
      {"mem.scale.GBps", "GBps", true, "STREAM scale bandwidth, all cores"},
      {"mem.add.GBps", "GBps", true, "STREAM add bandwidth, all cores"},
      {"mem.triad.GBps", "GBps", true, "STREAM triad bandwidth, all cores"},
      // Disk (io_uring, O_DIRECT, in the agent's scratch folder).
      {"disk.seq_read.MBps", "MBps", true, "sequential read, 1 MiB blocks"},
      {"disk.seq_write.MBps", "MBps", true, "sequential write, 1 MiB blocks"},
      {"disk.rand_read_4k.iops", "iops", true, "random read, 4 KiB blocks"},
      {"disk.rand_write_4k.iops", "iops", true, "random write, 4 KiB blocks"},
      {"disk.rand_read_4k.p50_us", "us", false, "random read completion latency, median"},
      {"disk.rand_read_4k.p99_us", "us", false, "random read completion latency, p99"},
      {"disk.rand_read_4k.p999_us", "us", false, "random read completion latency, p99.9"},
      {"disk.rand_write_4k.p50_us", "us", false, "random write completion latency, median"},
      {"disk.rand_write_4k.p99_us", "us", false, "random write completion latency, p99"},
      {"disk.rand_write_4k.p999_us", "us", false, "random write completion latency, p99.9"},
      // Network between two nodes (TCP, receiver-side bytes).
      {"net.tcp.Gbps", "Gbps", true, "TCP throughput, client to listener, P streams"},
      {"net.tcp.reverse.Gbps", "Gbps", true, "TCP throughput, listener to client"},
      {"net.tcp.retransmits.count", "count", false, "TCP retransmits during the forward test"},
      {"net.tcp.rtt_p50_us", "us", false, "TCP small-message round trip, median"},
      {"net.tcp.rtt_p99_us", "us", false, "TCP small-message round trip, p99"},
      // RDMA between two nodes (RC queue pair, RDMA WRITE, like perftest).
      {"rdma.write.Gbps", "Gbps", true, "RDMA WRITE bandwidth, client to listener"},
      {"rdma.write_lat.p50_us", "us", false, "RDMA WRITE one-way latency, median"},
      {"rdma.write_lat.p99_us", "us", false, "RDMA WRITE one-way latency, p99"},
      // GPU (cuBLASLt, CUDA copies); % of the SKU's peak in each sample's params.
      {"gemm.gpu.fp64.tflops", "tflops", true, "GPU fp64 GEMM (cuBLASLt)"},
      {"gemm.gpu.tf32.tflops", "tflops", true, "GPU tf32 GEMM (cuBLASLt)"},
      {"gemm.gpu.fp16.tflops", "tflops", true, "GPU fp16 GEMM, fp32 accumulate (cuBLASLt)"},
      {"gemm.gpu.bf16.tflops", "tflops", true, "GPU bf16 GEMM, fp32 accumulate (cuBLASLt)"},
      {"gemm.gpu.fp8.tflops", "tflops", true, "GPU fp8 e4m3 GEMM (cuBLASLt, sm_89+)"},
      {"pcie.h2d.GBps", "GBps", true, "host to device copy from pinned memory"},
      {"pcie.d2h.GBps", "GBps", true, "device to host copy into pinned memory"},
      {"gpu.mem.GBps", "GBps", true, "device memory bandwidth (device-to-device copy)"},
      // NCCL collectives over all local GPUs (nccl-tests bus bandwidth).
      {"allreduce.nccl.busbw_GBps", "GBps", true, "NCCL all-reduce bus bandwidth, largest size"},
      {"allgather.nccl.busbw_GBps", "GBps", true, "NCCL all-gather bus bandwidth, largest size"},
      {"reducescatter.nccl.busbw_GBps", "GBps", true, "NCCL reduce-scatter bus bandwidth, largest size"},
      {"allreduce.nccl.curve_busbw_GBps", "GBps", true, "NCCL bus bandwidth per size (params op, bytes)"},
      // Sustained GEMM on every GPU ("stress"), NVML telemetry alongside.
      {"stress.gpu.sustained.tflops", "tflops", true, "GEMM throughput, mean of the last half of the run"},
      {"stress.gpu.burst.tflops", "tflops", true, "GEMM throughput, mean of the first 5 s"},
      {"stress.gpu.throttle_fraction.ratio", "ratio", false, "share of the run with a power or thermal clock reason"},
      {"stress.gpu.first_throttle.s", "s", true, "seconds to the first power or thermal clock reason"},
      {"stress.gpu.max_temp.C", "C", false, "hottest GPU temperature during the run"},
      {"stress.gpu.faulty.count", "count", false, "1 when the repeated product's checksum changed"},
  };
  return kMetrics;
}

const MetricInfo* FindMetric(const std::string& name) {
  for (const MetricInfo& m : AllMetrics()) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

std::string UnitOfMetricName(const std::string& name) {
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? std::string() : name.substr(dot + 1);
}

}  // namespace fleetbench
