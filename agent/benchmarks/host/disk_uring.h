// agent/benchmarks/host/disk_uring.h — "disk": file I/O throughput, IOPS and
// completion latency through io_uring, measured the way fio measures them.
//
// What it measures: a test file <scratch>/fleetbench-disk-<random>.dat is
// created in the runner's scratch dir (and nowhere else; see
// scratch_path.h), reserved with fallocate, filled once with random data
// (cloud disks compress and deduplicate zeros) by sequential 1 MiB direct
// writes and fsync'ed. Before each workload the device is let go quiet
// (disk_settle.h: syncfs, then up to 5 s until /sys/block/DEV shows no I/O
// in flight; params settle_ms, settled, settle_note). Then each workload
// runs for ramp_seconds (not counted) plus runtime_seconds:
//   seq_read, seq_write        1 MiB blocks, in order, wrapping at the end
//   rand_read_4k, rand_write_4k 4 KiB blocks at uniformly random aligned
//                              offsets (with replacement, fio --norandommap)
// Each of `jobs` jobs has its own thread, its own io_uring ring and its own
// equal region of the file, and keeps `iodepth` I/Os in flight the way
// fio's io_uring engine does with its defaults: an I/O is submitted as soon
// as its slot is free, with its own io_uring_enter (iodepth_batch_submit=1),
// and completions are reaped once every slot is busy, sleeping only until
// at least one is there (iodepth_batch_complete_min=1). The test file is
// removed when Run() returns, whatever the outcome; test files of earlier
// runs that were killed (no live process holds their lock) are removed
// before starting.
//
// Counting, as fio does: an I/O counts when its completion is reaped inside
// [ramp end, ramp end + runtime); throughput is counted bytes / runtime
// (MB = 10^6 B), IOPS counted I/Os / runtime, summed over jobs. Completion
// latency runs from the return of the io_uring_enter that submitted the I/O
// to the reaping of its completion (fio's clat: one clock read per submit
// and one per reap batch), percentiles by fio's rule from a log-linear
// histogram accurate to 0.4%.
//
// Direct I/O: with direct=1 (the default) the file is opened O_DIRECT and
// buffers are aligned to max(page, logical block size of the device under
// the filesystem, from sysfs; 4096 when unknown). If the filesystem refuses
// O_DIRECT (tmpfs, some FUSE), the run falls back to buffered I/O and says
// so: direct=0 and direct_fallback=<reason> in every sample's params; such
// numbers measure the page cache, not the disk.
//
// Metrics: disk.seq_read.MBps, disk.seq_write.MBps, disk.rand_read_4k.iops,
// disk.rand_read_4k.{p50,p99,p999}_us, disk.rand_write_4k.iops,
// disk.rand_write_4k.{p50,p99,p999}_us.
//
// Parameters (all strings; ValidateParams explains any bad one):
//   workloads        comma list of the four above      default all four
//   file_mib         test file size, 1..16777216        default 1024
//   iodepth          I/Os in flight per job, 1..1024    default 8 seq, 32 rand
//   jobs             1..64                              default 1
//   ramp_seconds     0..600                             default 2
//   runtime_seconds  0.01..3600                         default 10
//   direct           0 or 1                             default 1
// With the defaults the whole benchmark takes about 50 s plus the fill.
//
// Errors: FAILED_PRECONDITION (skipped) when io_uring is unavailable, the
// scratch dir is unusable or has less free space than the file + 10%;
// CANCELLED when cancelled (checked at every reap); the errno of a failed
// I/O otherwise. Thread safety: one Run() at a time.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_HOST_DISK_URING_H_
#define FLEETBENCH_AGENT_BENCHMARKS_HOST_DISK_URING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/host/disk_math.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench::agent {

// The parsed, range-checked form of the "disk" parameters.
struct DiskConfig {
  std::vector<const DiskWorkload*> workloads;  // in the order given
  int64_t file_mib = 1024;
  int iodepth = 0;  // 0: each workload's default
  int jobs = 1;
  double ramp_seconds = 2;
  double runtime_seconds = 10;
  bool direct = true;

  int IodepthFor(const DiskWorkload& workload) const {
    return iodepth > 0 ? iodepth : workload.default_iodepth;
  }
};

// Fills defaults for absent keys; INVALID_ARGUMENT naming the parameter and
// the offending text for anything else, unknown keys included.
absl::StatusOr<DiskConfig> ParseDiskParams(const Params& params);

class DiskUringBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "disk"; }
  // FAILED_PRECONDITION when the kernel refuses to set up an io_uring
  // (too old, kernel.io_uring_disabled, a seccomp filter).
  absl::Status Probe() const override;
  std::vector<MetricInfo> metrics() const override;
  absl::Status ValidateParams(const Params& params) const override;
  // Ramp and runtime of every workload, the fill at a pessimistic 20 MiB/s
  // (a network or shared disk), and ten minutes; never below the base.
  absl::Duration DefaultTimeout(const Params& params) const override;
  // Samples per workload, in the order given: MBps for seq_*, iops then
  // p50/p99/p999 latency for rand_*.
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const Params& params, const RunContext& context) override;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_HOST_DISK_URING_H_
