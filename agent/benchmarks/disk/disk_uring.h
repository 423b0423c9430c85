// agent/benchmarks/disk/disk_uring.h — "disk": file I/O throughput, IOPS and
// completion latency through io_uring, measured the way fio measures them.
//
// What it measures: a test file <scratch>/fleetbench-disk-<random>.dat is
// created in the runner's scratch dir (and nowhere else; see
// scratch_path.h), reserved with fallocate, filled once with random data
// (cloud disks compress and deduplicate zeros) by sequential 1 MiB direct
// writes and fsync'ed. Before each workload the device is let go quiet
// (disk_settle.h: syncfs, then up to 5 s until /sys/block/DEV shows no I/O
// in flight; params settle_ms, settled, settle_note). Then each workload
// runs for ramp_seconds (not counted) plus runtime_seconds. A workload is
// data in fio's terms (disk_math.h DiskWorkload): rw (read, write,
// randread, randwrite, randrw with rwmixread), bs, iodepth, fsync; the run's
// numjobs, size, direct, rate, ramp_time and runtime apply to all. Presets:
//   seq_read, seq_write        rw=read/write, bs=1M, iodepth=8
//   rand_read_4k, rand_write_4k rw=randread/randwrite, bs=4k, iodepth=32
// or one workload named "custom" given by rw=... and the options above.
// Sequential I/O walks the job's region in order, wrapping at its end;
// random offsets are uniform and block-aligned (with replacement, fio
// --norandommap); in randrw each I/O reads with probability rwmixread %.
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
// Metrics: disk.<workload>.{MBps,iops,p50_us,p99_us,p999_us} for every
// workload; for randrw also read_* and write_* apart, for fsync=N also
// fsync_{p50,p99,p999}_us (the fsyncs' own latency; fio's "sync" lat).
//
// Parameters (all strings, fio's names where fio has one; ValidateParams
// explains any bad one):
//   workloads        comma list of the presets           default all four
//   rw               read|write|randread|randwrite|randrw: one custom workload
//   bs               4k..64M, multiple of 4k (rw only)    default 4k
//   rwmixread        0..100, randrw only                  default 50
//   fsync            0..2^20: fsync after every N writes  default 0
//   iodepth          I/Os in flight per job, 1..1024    default 8 seq, 32 rand
//   jobs | numjobs   1..64                              default 1
//   file_mib         test file size, 1..16777216        default 1024
//   size             fio's: each job's region (MiB multiple; not with file_mib)
//   rate             per-job byte cap per second, 4k..1T (not with randrw)
//   ramp_seconds | ramp_time     0..600                 default 2
//   runtime_seconds | runtime    0.01..3600             default 10
//   direct           0 or 1                             default 1
// With the defaults the whole benchmark takes about 50 s plus the fill.
//
// Errors: FAILED_PRECONDITION (skipped) when io_uring is unavailable, the
// scratch dir is unusable or has less free space than the file + 10%;
// CANCELLED when cancelled (checked at every reap); the errno of a failed
// I/O otherwise. Thread safety: one Run() at a time.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_DISK_DISK_URING_H_
#define FLEETBENCH_AGENT_BENCHMARKS_DISK_DISK_URING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/disk_common/disk_math.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench::agent {

// The parsed, range-checked form of the "disk" parameters.
struct DiskConfig {
  // In the order given, with iodepth applied: presets, or the one "custom"
  // workload that rw=... describes.
  std::vector<DiskWorkload> workloads;
  int64_t file_mib = 1024;  // the whole file: size × numjobs
  int jobs = 1;
  double ramp_seconds = 2;
  double runtime_seconds = 10;
  bool direct = true;
  int64_t rate_bytes = 0;  // per job per second; 0: no cap
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

#endif  // FLEETBENCH_AGENT_BENCHMARKS_DISK_DISK_URING_H_
