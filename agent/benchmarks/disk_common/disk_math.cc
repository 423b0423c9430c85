#include "agent/benchmarks/disk_common/disk_math.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/units.h"

namespace fleetbench::agent {
namespace {

// Values below 2^kExactBits have a bucket each; above, every power of two
// is split into 2^(kExactBits-1) buckets.
constexpr int kExactBits = 8;
constexpr uint64_t kExact = uint64_t{1} << kExactBits;            // 256
constexpr uint64_t kPerOctave = uint64_t{1} << (kExactBits - 1);  // 128
constexpr size_t kBuckets = kExact + (64 - kExactBits) * kPerOctave;

}  // namespace

const char* FioRwName(DiskRw rw) {
  switch (rw) {
    case DiskRw::kRead: return "read";
    case DiskRw::kWrite: return "write";
    case DiskRw::kRandRead: return "randread";
    case DiskRw::kRandWrite: return "randwrite";
    case DiskRw::kRandRw: return "randrw";
  }
  return "read";
}

bool ParseDiskRw(absl::string_view name, DiskRw* rw) {
  for (DiskRw r : {DiskRw::kRead, DiskRw::kWrite, DiskRw::kRandRead,
                   DiskRw::kRandWrite, DiskRw::kRandRw}) {
    if (name == FioRwName(r)) {
      *rw = r;
      return true;
    }
  }
  return false;
}

int DiskWorkload::ReadPercent() const {
  switch (rw) {
    case DiskRw::kRead:
    case DiskRw::kRandRead: return 100;
    case DiskRw::kWrite:
    case DiskRw::kRandWrite: return 0;
    case DiskRw::kRandRw: return rwmixread;
  }
  return 100;
}

const std::vector<DiskWorkload>& AllDiskWorkloads() {
  static const std::vector<DiskWorkload> kWorkloads = {
      {"seq_read", DiskRw::kRead, kMiB, 8},
      {"seq_write", DiskRw::kWrite, kMiB, 8},
      {"rand_read_4k", DiskRw::kRandRead, 4096, 32},
      {"rand_write_4k", DiskRw::kRandWrite, 4096, 32},
  };
  return kWorkloads;
}

const DiskWorkload* FindDiskWorkload(absl::string_view name) {
  for (const DiskWorkload& w : AllDiskWorkloads()) {
    if (name == w.name) return &w;
  }
  return nullptr;
}

std::string FioBytes(int64_t bytes) {
  if (bytes > 0 && bytes % kGiB == 0) return absl::StrCat(bytes / kGiB, "G");
  if (bytes > 0 && bytes % kMiB == 0) return absl::StrCat(bytes / kMiB, "M");
  if (bytes > 0 && bytes % 1024 == 0) return absl::StrCat(bytes / 1024, "k");
  return absl::StrCat(bytes);
}

FileRegion JobRegion(int64_t file_bytes, int jobs, int job, int64_t align) {
  if (jobs <= 0 || align <= 0) return FileRegion{};
  const int64_t bytes = file_bytes / jobs / align * align;
  return FileRegion{bytes * job, bytes};
}

int64_t SequentialOffset(const FileRegion& region, int64_t block_bytes,
                         int64_t k) {
  const int64_t blocks = region.bytes / block_bytes;
  if (blocks <= 0) return region.offset;
  return region.offset + (k % blocks) * block_bytes;
}

int64_t RandomOffset(const FileRegion& region, int64_t block_bytes,
                     uint64_t random_bits) {
  const uint64_t blocks = static_cast<uint64_t>(region.bytes / block_bytes);
  const uint64_t block = static_cast<uint64_t>(
      (static_cast<unsigned __int128>(random_bits) * blocks) >> 64);
  return region.offset + static_cast<int64_t>(block) * block_bytes;
}

double MegabytesPerSecond(double bytes, double seconds) {
  if (!(seconds > 0)) return 0;
  return bytes / seconds / 1e6;
}

double IopsFromCount(double ios, double seconds) {
  if (!(seconds > 0)) return 0;
  return ios / seconds;
}

LatencyHistogram::LatencyHistogram() : counts_(kBuckets, 0) {}

size_t LatencyHistogram::BucketOf(uint64_t nanos) {
  if (nanos < kExact) return static_cast<size_t>(nanos);
  const int msb = 63 - std::countl_zero(nanos);  // >= kExactBits
  const int shift = msb - (kExactBits - 1);
  const uint64_t sub = (nanos >> shift) - kPerOctave;  // 0..kPerOctave-1
  return static_cast<size_t>(
      kExact + static_cast<uint64_t>(msb - kExactBits) * kPerOctave + sub);
}

uint64_t LatencyHistogram::BucketLow(size_t bucket) {
  if (bucket < kExact) return bucket;
  const uint64_t octave = (bucket - kExact) / kPerOctave;
  const uint64_t sub = (bucket - kExact) % kPerOctave;
  const int shift = static_cast<int>(octave) + 1;
  return (kPerOctave + sub) << shift;
}

double LatencyHistogram::BucketValue(size_t bucket) {
  if (bucket < kExact) return static_cast<double>(bucket);
  const int shift = static_cast<int>((bucket - kExact) / kPerOctave) + 1;
  const double width = std::ldexp(1.0, shift);
  return static_cast<double>(BucketLow(bucket)) + (width - 1) / 2;
}

void LatencyHistogram::Add(uint64_t nanos) {
  ++counts_[BucketOf(nanos)];
  ++count_;
  sum_ += static_cast<double>(nanos);
  max_ = std::max(max_, nanos);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
}

double LatencyHistogram::mean_nanos() const {
  return count_ == 0 ? 0 : sum_ / static_cast<double>(count_);
}

double LatencyHistogram::PercentileNanos(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double threshold = std::max(1.0, q * static_cast<double>(count_));
  uint64_t running = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    running += counts_[i];
    if (static_cast<double>(running) >= threshold) {
      // The top bucket may be wider than what was seen in it.
      return std::min(BucketValue(i), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

std::string FioSeconds(double seconds) {
  const double rounded = std::round(seconds);
  if (std::abs(seconds - rounded) < 1e-9) {
    return absl::StrCat(static_cast<int64_t>(rounded));
  }
  return absl::StrCat(static_cast<int64_t>(std::llround(seconds * 1000)), "ms");
}

std::string FioEquivalentCommand(const DiskWorkload& workload,
                                 const FioSettings& settings) {
  const FileRegion region =
      JobRegion(settings.file_bytes, settings.jobs, 0, kMiB);
  std::string command = absl::StrCat(
      "fio --name=", workload.name,
      " --ioengine=io_uring --direct=", settings.direct ? 1 : 0,
      " --rw=", FioRwName(workload.rw));
  if (workload.mixed()) {
    absl::StrAppend(&command, " --rwmixread=", workload.rwmixread);
  }
  absl::StrAppend(&command, " --bs=", FioBytes(workload.block_bytes),
                  " --iodepth=", workload.iodepth,
                  " --numjobs=", settings.jobs,
                  " --size=", FioBytes(region.bytes));
  if (settings.jobs > 1) {
    absl::StrAppend(&command, " --offset_increment=", FioBytes(region.bytes),
                    " --group_reporting");
  }
  if (workload.fsync > 0 && workload.writes()) {
    absl::StrAppend(&command, " --fsync=", workload.fsync);
  }
  if (settings.rate_bytes > 0) {
    absl::StrAppend(&command, " --rate=", FioBytes(settings.rate_bytes));
  }
  absl::StrAppend(&command, " --time_based --runtime=",
                  FioSeconds(settings.runtime_seconds),
                  " --ramp_time=", FioSeconds(settings.ramp_seconds));
  if (workload.random())
    absl::StrAppend(&command, " --norandommap --randrepeat=0");
  return command;
}

}  // namespace fleetbench::agent
