// agent/benchmarks/disk_common/disk_math.h — the arithmetic of the io_uring disk
// benchmark ("disk").
//
// Pure functions and value types, no I/O and no clock: the workload table,
// how a file is split between jobs, where each I/O goes, MB/s and IOPS from
// counts, the latency histogram and its percentiles, the filesystem that
// holds a path (from /proc/self/mounts text), and the fio command line that
// measures the same thing.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_DISK_COMMON_DISK_MATH_H_
#define FLEETBENCH_AGENT_BENCHMARKS_DISK_COMMON_DISK_MATH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace fleetbench::agent {

// fio's --rw patterns the plugin can run.
enum class DiskRw { kRead, kWrite, kRandRead, kRandWrite, kRandRw };

// fio's name for `rw` ("randread"); the names ParseDiskRw takes.
const char* FioRwName(DiskRw rw);
// false for a name that is not one of read, write, randread, randwrite,
// randrw.
bool ParseDiskRw(absl::string_view name, DiskRw* rw);

// One workload, in fio's terms. Names are permanent: they are part of metric
// names ("seq_read" for a preset, "custom" for one given by parameters).
struct DiskWorkload {
  std::string name;
  DiskRw rw = DiskRw::kRead;
  int64_t block_bytes = 0;  // fio's bs
  int iodepth = 1;          // fio's iodepth, per job
  int rwmixread = 50;       // fio's rwmixread: % of I/Os that read (randrw)
  int64_t fsync = 0;        // fio's fsync=N: an fsync after every N writes

  bool random() const { return rw != DiskRw::kRead && rw != DiskRw::kWrite; }
  bool mixed() const { return rw == DiskRw::kRandRw; }
  // Percent of I/Os that read: 100 for read/randread, 0 for write/randwrite.
  int ReadPercent() const;
  bool writes() const { return ReadPercent() < 100; }
};

// The presets: seq_read, seq_write (1 MiB, iodepth 8), rand_read_4k,
// rand_write_4k (4 KiB, iodepth 32), in the order they run.
const std::vector<DiskWorkload>& AllDiskWorkloads();
// nullptr for an unknown name.
const DiskWorkload* FindDiskWorkload(absl::string_view name);

// fio's size syntax for a byte count: "64k", "1M", or bytes.
std::string FioBytes(int64_t bytes);

// The part of the file one job works in.
struct FileRegion {
  int64_t offset = 0;
  int64_t bytes = 0;
};
// Job `job` of `jobs` gets the job-th of `jobs` equal regions, each a whole
// number of `align` bytes (what is left at the end of the file is unused,
// as with fio's --size=<region> --offset_increment=<region>).
FileRegion JobRegion(int64_t file_bytes, int jobs, int job, int64_t align);

// Offset of the k-th sequential I/O of a job, wrapping at the region's end
// as fio does in a time-based run.
int64_t SequentialOffset(const FileRegion& region, int64_t block_bytes,
                         int64_t k);
// A block-aligned offset, uniform over the region's blocks, from 64 random
// bits (Lemire's multiply-shift: no modulo bias worth naming).
int64_t RandomOffset(const FileRegion& region, int64_t block_bytes,
                     uint64_t random_bits);

// 10^6 bytes per second; 0 when seconds is not positive.
double MegabytesPerSecond(double bytes, double seconds);
// I/Os per second; 0 when seconds is not positive.
double IopsFromCount(double ios, double seconds);

// Completion latencies in nanoseconds, log-linear buckets: exact below
// 256 ns, then 128 buckets per power of two, so a reported value (the
// bucket's midpoint) is within 0.4% of the true one. Memory is fixed
// (about 60 KB) however many I/Os are recorded.
class LatencyHistogram {
 public:
  LatencyHistogram();

  void Add(uint64_t nanos);
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  double mean_nanos() const;
  uint64_t max_nanos() const { return max_; }
  // fio's rule: the first bucket at which the running count reaches
  // q × count (q in [0,1]); 0 when empty.
  double PercentileNanos(double q) const;

  static size_t BucketOf(uint64_t nanos);
  // Smallest value in a bucket, and the value reported for it.
  static uint64_t BucketLow(size_t bucket);
  static double BucketValue(size_t bucket);

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  double sum_ = 0;
  uint64_t max_ = 0;
};

// fio's time syntax for a duration: "10" for whole seconds, else "250ms".
std::string FioSeconds(double seconds);

// The fio command that measures what one workload measures (without
// --filename, which the caller adds).
struct FioSettings {
  int64_t file_bytes = 0;
  int jobs = 1;
  int64_t rate_bytes = 0;  // per job; 0: no cap
  double ramp_seconds = 0;
  double runtime_seconds = 0;
  bool direct = true;
};
std::string FioEquivalentCommand(const DiskWorkload& workload,
                                 const FioSettings& settings);

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_DISK_COMMON_DISK_MATH_H_
