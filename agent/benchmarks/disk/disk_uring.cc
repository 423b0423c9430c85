#include "agent/benchmarks/disk/disk_uring.h"

#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <latch>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/benchmarks/disk/disk_io_engine.h"
#include "agent/benchmarks/disk/disk_settle.h"
#include "agent/benchmarks/disk_common/scratch_path.h"
#include "agent/benchmarks/param_reader.h"
#include "agent/facts/facts.h"
#include "common/units.h"

namespace fleetbench::agent {
namespace {

using disk::Clock;
using disk::FreeDeleter;
using disk::IoPlan;
using disk::IoTally;
using disk::Phase;
using disk::RunPhase;

constexpr absl::string_view kAllowedKeys[] = {
    "workloads", "file_mib",  "iodepth", "jobs",    "numjobs",
    "ramp_seconds", "ramp_time", "runtime_seconds", "runtime", "direct",
    "rw",        "bs",        "rwmixread", "fsync",  "size",    "rate"};
// Keys that describe the one workload given by `rw`.
constexpr absl::string_view kCustomOnlyKeys[] = {"bs", "rwmixread", "fsync"};
constexpr int64_t kMaxFileMib = int64_t{16} << 20;  // 16 TiB
// Buffers are depth × block per job; past this the plugin would be a memory
// benchmark with extra steps.
constexpr int64_t kMaxBufferBytes = int64_t{4} << 30;
constexpr int64_t kMaxBlockBytes = int64_t{64} << 20;  // 64 MiB
constexpr int64_t kMaxRateBytes = int64_t{1} << 40;   // 1 TiB/s per job
// The fill writes like seq_write with fio's default depth for it.
constexpr int kFillIodepth = 8;
constexpr size_t kDefaultAlignment = 4096;
constexpr char kEngine[] = "io_uring via liburing";

// The storage under the test file, found from the file's st_dev; "unknown"
// where the mount cannot be found (the samples always carry both keys).
StorageFacts DescribeStorage(const std::string& dir, int fd) {
  struct stat st;
  unsigned device_major = 0, device_minor = 0;
  if (fstat(fd, &st) == 0) {
    device_major = major(st.st_dev);
    device_minor = minor(st.st_dev);
  }
  StorageFacts storage =
      ReadStorageFacts("/", dir, device_major, device_minor);
  if (storage.filesystem.empty()) storage.filesystem = "unknown";
  if (storage.mount_source.empty()) storage.mount_source = "unknown";
  return storage;
}

}  // namespace

namespace {

// `fio_name` is fio's name for what `ours` names (numjobs for jobs); a user
// may give either, not both.
absl::StatusOr<std::string> OneOf(const ParamReader& reader,
                                  const std::string& ours,
                                  const std::string& fio_name) {
  if (reader.Has(ours) && reader.Has(fio_name)) {
    return reader.Error(fio_name, absl::StrCat("give ", ours, " or ", fio_name,
                                               " (the same setting), not both"));
  }
  return reader.Has(fio_name) ? fio_name : ours;
}

}  // namespace

absl::StatusOr<DiskConfig> ParseDiskParams(const Params& params) {
  ParamReader reader("disk", params);
  if (absl::Status s = reader.CheckKeys(kAllowedKeys); !s.ok()) return s;
  DiskConfig config;

  // Either presets by name, or one workload described by fio's options.
  if (reader.Has("rw")) {
    if (reader.Has("workloads")) {
      return reader.Error("rw", "give workloads (presets) or rw (one workload "
                                "described by fio's options), not both");
    }
    DiskWorkload custom;
    custom.name = "custom";
    if (!ParseDiskRw(reader.Get("rw", ""), &custom.rw)) {
      return reader.Error(
          "rw", absl::StrCat("'", reader.Get("rw", "").substr(0, 32),
                             "' is not one of read, write, randread, "
                             "randwrite, randrw"));
    }
    absl::StatusOr<int64_t> bs = reader.Bytes("bs", 4096, 4096, kMaxBlockBytes);
    if (!bs.ok()) return bs.status();
    if (*bs % 4096 != 0) {
      return reader.Error("bs", absl::StrCat(reader.Get("bs", ""),
                                             " is not a multiple of 4096 "
                                             "bytes (4k)"));
    }
    custom.block_bytes = *bs;
    custom.iodepth = custom.random() ? 32 : 8;
    if (reader.Has("rwmixread") && !custom.mixed()) {
      return reader.Error("rwmixread", "applies to rw=randrw only");
    }
    absl::StatusOr<int64_t> mix = reader.Int("rwmixread", 50, 0, 100);
    if (!mix.ok()) return mix.status();
    custom.rwmixread = static_cast<int>(*mix);
    if (reader.Has("fsync") && !custom.writes()) {
      return reader.Error("fsync", absl::StrCat("rw=", FioRwName(custom.rw),
                                                " does not write"));
    }
    absl::StatusOr<int64_t> fsync = reader.Int("fsync", 0, 0, 1 << 20);
    if (!fsync.ok()) return fsync.status();
    custom.fsync = *fsync;
    config.workloads.push_back(custom);
  } else {
    for (absl::string_view key : kCustomOnlyKeys) {
      if (reader.Has(std::string(key))) {
        return reader.Error(key, "describes a workload given by rw=...; the "
                                 "presets in workloads are fixed");
      }
    }
    std::vector<absl::string_view> names;
    std::vector<std::string> all_names;
    for (const DiskWorkload& w : AllDiskWorkloads()) {
      names.push_back(w.name);
      all_names.push_back(w.name);
    }
    absl::StatusOr<std::vector<std::string>> workloads =
        reader.List("workloads", absl::StrJoin(all_names, ","), names);
    if (!workloads.ok()) return workloads.status();
    for (const std::string& name : *workloads) {
      config.workloads.push_back(*FindDiskWorkload(name));
    }
  }

  if (reader.Has("iodepth")) {
    absl::StatusOr<int64_t> iodepth = reader.Int("iodepth", 0, 1, 1024);
    if (!iodepth.ok()) return iodepth.status();
    for (DiskWorkload& w : config.workloads) {
      w.iodepth = static_cast<int>(*iodepth);
    }
  }

  absl::StatusOr<std::string> jobs_key = OneOf(reader, "jobs", "numjobs");
  if (!jobs_key.ok()) return jobs_key.status();
  absl::StatusOr<int64_t> jobs = reader.Int(*jobs_key, config.jobs, 1, 64);
  if (!jobs.ok()) return jobs.status();
  config.jobs = static_cast<int>(*jobs);

  // fio's size is each job's share; file_mib is the whole file.
  if (reader.Has("size")) {
    if (reader.Has("file_mib")) {
      return reader.Error("size", "give file_mib (the whole file) or size "
                                  "(fio's: each job's region), not both");
    }
    absl::StatusOr<int64_t> size = reader.Bytes(
        "size", kMiB, kMiB, kMaxFileMib * kMiB / config.jobs / kMiB * kMiB);
    if (!size.ok()) return size.status();
    if (*size % kMiB != 0) {
      return reader.Error("size", absl::StrCat(reader.Get("size", ""),
                                               " is not a whole number of "
                                               "MiB (e.g. 256M, 1G)"));
    }
    config.file_mib = *size / kMiB * config.jobs;
  } else {
    absl::StatusOr<int64_t> file_mib =
        reader.Int("file_mib", config.file_mib, 1, kMaxFileMib);
    if (!file_mib.ok()) return file_mib.status();
    config.file_mib = *file_mib;
  }

  absl::StatusOr<std::string> ramp_key =
      OneOf(reader, "ramp_seconds", "ramp_time");
  if (!ramp_key.ok()) return ramp_key.status();
  absl::StatusOr<double> ramp =
      reader.Double(*ramp_key, config.ramp_seconds, 0, 600);
  if (!ramp.ok()) return ramp.status();
  config.ramp_seconds = *ramp;

  absl::StatusOr<std::string> runtime_key =
      OneOf(reader, "runtime_seconds", "runtime");
  if (!runtime_key.ok()) return runtime_key.status();
  absl::StatusOr<double> runtime =
      reader.Double(*runtime_key, config.runtime_seconds, 0.01, 3600);
  if (!runtime.ok()) return runtime.status();
  config.runtime_seconds = *runtime;

  absl::StatusOr<bool> direct = reader.Bool("direct", config.direct);
  if (!direct.ok()) return direct.status();
  config.direct = *direct;

  if (reader.Has("rate")) {
    absl::StatusOr<int64_t> rate =
        reader.Bytes("rate", 0, 4096, kMaxRateBytes);
    if (!rate.ok()) return rate.status();
    for (const DiskWorkload& w : config.workloads) {
      if (w.mixed()) {
        // fio caps reads and writes separately; one cap on both would not be
        // fio's meaning.
        return reader.Error("rate", "not with rw=randrw (fio caps each "
                                    "direction on its own)");
      }
    }
    config.rate_bytes = *rate;
  }

  // Every job needs at least one block of the largest size in its region.
  if (config.file_mib < config.jobs) {
    return reader.Error(
        "file_mib",
        absl::StrCat(config.file_mib, " MiB cannot be split into ", config.jobs,
                     " job regions of at least 1 MiB; raise "
                     "file_mib or lower jobs"));
  }
  for (const DiskWorkload& w : config.workloads) {
    if (w.block_bytes > config.file_mib / config.jobs * kMiB) {
      return reader.Error(
          "bs", absl::StrCat(FioBytes(w.block_bytes),
                             " blocks do not fit in a job's region of ",
                             config.file_mib / config.jobs,
                             " MiB; lower bs or raise size"));
    }
    const int64_t buffers = static_cast<int64_t>(config.jobs) * w.iodepth *
                            w.block_bytes;
    if (buffers > kMaxBufferBytes) {
      return reader.Error(
          "iodepth",
          absl::StrCat(w.name, " would need ", buffers >> 20,
                       " MiB of buffers (jobs × iodepth × block); at most ",
                       kMaxBufferBytes >> 20, " MiB; lower iodepth or jobs"));
    }
  }
  return config;
}

std::vector<MetricInfo> DiskUringBenchmark::metrics() const {
  // io_uring, O_DIRECT, in the agent's scratch folder. Every workload has
  // throughput, IOPS and latency percentiles; the one given by rw=... is
  // "custom" (its parameters are in each sample's params), with reads and
  // writes apart for randrw and the fsyncs' own latency for fsync=N.
  return {
      {"disk.seq_read.MBps", "MBps", kHigherIsBetter,
       "sequential read, 1 MiB blocks"},
      {"disk.seq_read.iops", "iops", kHigherIsBetter,
       "sequential read I/Os per second, 1 MiB blocks"},
      {"disk.seq_read.p50_us", "us", kLowerIsBetter,
       "sequential read completion latency, median"},
      {"disk.seq_read.p99_us", "us", kLowerIsBetter,
       "sequential read completion latency, p99"},
      {"disk.seq_read.p999_us", "us", kLowerIsBetter,
       "sequential read completion latency, p99.9"},
      {"disk.seq_write.MBps", "MBps", kHigherIsBetter,
       "sequential write, 1 MiB blocks"},
      {"disk.seq_write.iops", "iops", kHigherIsBetter,
       "sequential write I/Os per second, 1 MiB blocks"},
      {"disk.seq_write.p50_us", "us", kLowerIsBetter,
       "sequential write completion latency, median"},
      {"disk.seq_write.p99_us", "us", kLowerIsBetter,
       "sequential write completion latency, p99"},
      {"disk.seq_write.p999_us", "us", kLowerIsBetter,
       "sequential write completion latency, p99.9"},
      {"disk.rand_read_4k.MBps", "MBps", kHigherIsBetter,
       "random read throughput, 4 KiB blocks"},
      {"disk.rand_read_4k.iops", "iops", kHigherIsBetter,
       "random read, 4 KiB blocks"},
      {"disk.rand_read_4k.p50_us", "us", kLowerIsBetter,
       "random read completion latency, median"},
      {"disk.rand_read_4k.p99_us", "us", kLowerIsBetter,
       "random read completion latency, p99"},
      {"disk.rand_read_4k.p999_us", "us", kLowerIsBetter,
       "random read completion latency, p99.9"},
      {"disk.rand_write_4k.MBps", "MBps", kHigherIsBetter,
       "random write throughput, 4 KiB blocks"},
      {"disk.rand_write_4k.iops", "iops", kHigherIsBetter,
       "random write, 4 KiB blocks"},
      {"disk.rand_write_4k.p50_us", "us", kLowerIsBetter,
       "random write completion latency, median"},
      {"disk.rand_write_4k.p99_us", "us", kLowerIsBetter,
       "random write completion latency, p99"},
      {"disk.rand_write_4k.p999_us", "us", kLowerIsBetter,
       "random write completion latency, p99.9"},
      {"disk.custom.MBps", "MBps", kHigherIsBetter,
       "the workload given by rw/bs/iodepth..., throughput (reads + writes)"},
      {"disk.custom.iops", "iops", kHigherIsBetter,
       "the workload given by rw/bs/iodepth..., I/Os per second (reads + writes)"},
      {"disk.custom.p50_us", "us", kLowerIsBetter,
       "the rw=... workload's (one direction) completion latency, median"},
      {"disk.custom.p99_us", "us", kLowerIsBetter,
       "the rw=... workload's (one direction) completion latency, p99"},
      {"disk.custom.p999_us", "us", kLowerIsBetter,
       "the rw=... workload's (one direction) completion latency, p99.9"},
      {"disk.custom.read_MBps", "MBps", kHigherIsBetter,
       "rw=randrw: read throughput"},
      {"disk.custom.read_iops", "iops", kHigherIsBetter,
       "rw=randrw: reads per second"},
      {"disk.custom.read_p50_us", "us", kLowerIsBetter,
       "rw=randrw: read completion latency, median"},
      {"disk.custom.read_p99_us", "us", kLowerIsBetter,
       "rw=randrw: read completion latency, p99"},
      {"disk.custom.read_p999_us", "us", kLowerIsBetter,
       "rw=randrw: read completion latency, p99.9"},
      {"disk.custom.write_MBps", "MBps", kHigherIsBetter,
       "rw=randrw: write throughput"},
      {"disk.custom.write_iops", "iops", kHigherIsBetter,
       "rw=randrw: writes per second"},
      {"disk.custom.write_p50_us", "us", kLowerIsBetter,
       "rw=randrw: write completion latency, median"},
      {"disk.custom.write_p99_us", "us", kLowerIsBetter,
       "rw=randrw: write completion latency, p99"},
      {"disk.custom.write_p999_us", "us", kLowerIsBetter,
       "rw=randrw: write completion latency, p99.9"},
      {"disk.custom.fsync_p50_us", "us", kLowerIsBetter,
       "fsync=N: fsync completion latency, median"},
      {"disk.custom.fsync_p99_us", "us", kLowerIsBetter,
       "fsync=N: fsync completion latency, p99"},
      {"disk.custom.fsync_p999_us", "us", kLowerIsBetter,
       "fsync=N: fsync completion latency, p99.9"},
  };
}

absl::Status DiskUringBenchmark::Probe() const {
  io_uring ring;
  const int ret = io_uring_queue_init(2, &ring, 0);
  if (ret < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "disk: io_uring is not available here (", std::strerror(-ret),
        "); check the kernel version, sysctl kernel.io_uring_disabled and "
        "seccomp filters"));
  }
  io_uring_queue_exit(&ring);
  return absl::OkStatus();
}

absl::Duration DiskUringBenchmark::DefaultTimeout(const Params& params) const {
  const absl::Duration base = Benchmark::DefaultTimeout(params);
  absl::StatusOr<DiskConfig> config = ParseDiskParams(params);
  if (!config.ok()) return base;
  const double measured_s = static_cast<double>(config->workloads.size()) *
                            (config->ramp_seconds + config->runtime_seconds);
  const double fill_s = static_cast<double>(config->file_mib) / 20.0;
  return std::max(base, absl::Seconds(measured_s + fill_s) + absl::Minutes(10));
}

absl::Status DiskUringBenchmark::ValidateParams(const Params& params) const {
  return ParseDiskParams(params).status();
}

absl::StatusOr<std::vector<v1::Sample>> DiskUringBenchmark::Run(
    const Params& params, const RunContext& context) {
  absl::StatusOr<DiskConfig> config = ParseDiskParams(params);
  if (!config.ok()) return config.status();
  const int64_t file_bytes = config->file_mib * kMiB;

  const std::string file_name = RandomDiskFileName();
  // Opened once, checked component by component; from here on the folder
  // is this handle, never its path (a symlink swapped in later is not
  // followed).
  absl::StatusOr<std::unique_ptr<ScratchDir>> scratch =
      ScratchDir::Open(context.scratch_dir());
  if (!scratch.ok()) return scratch.status();
  if (absl::Status s = (*scratch)->CheckNewName(file_name); !s.ok()) return s;
  const std::string canonical_dir = (*scratch)->path();
  // Files of earlier runs that were killed would otherwise fill the disk.
  absl::StatusOr<int> stale = RemoveStaleScratchFiles(**scratch);
  if (!stale.ok()) return stale.status();
  absl::StatusOr<uint64_t> available = AvailableBytes(**scratch);
  if (!available.ok()) return available.status();
  if (absl::Status s = CheckFreeSpace(canonical_dir, *available,
                                      static_cast<uint64_t>(file_bytes));
      !s.ok()) {
    return s;
  }

  // From here on the file exists; `file` removes it on every return path.
  absl::StatusOr<std::unique_ptr<ScratchFile>> file =
      ScratchFile::Create(**scratch, file_name);
  if (!file.ok()) return file.status();
  const StorageFacts storage = DescribeStorage(canonical_dir, (*file)->fd());
  const size_t alignment = std::max<size_t>(
      kDefaultAlignment, static_cast<size_t>(storage.logical_block_bytes));
  for (const DiskWorkload& w : config->workloads) {
    if (w.block_bytes % static_cast<int64_t>(alignment) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "disk: the device's logical block size is ",
          storage.logical_block_bytes, " bytes; ", w.name, " uses ",
          w.block_bytes, "-byte blocks, which direct I/O cannot do"));
    }
  }

  // Direct I/O where the filesystem takes it; otherwise say why not.
  int fd = (*file)->fd();
  bool direct = false;
  std::string direct_fallback;
  if (config->direct) {
    absl::StatusOr<int> direct_fd = (*file)->Reopen(O_DIRECT);
    if (direct_fd.ok()) {
      // Some filesystems accept O_DIRECT at open and refuse the I/O.
      std::unique_ptr<char, FreeDeleter> probe(
          static_cast<char*>(std::aligned_alloc(alignment, alignment)));
      std::memset(probe.get(), 0x5a, alignment);
      const ssize_t n = pwrite(*direct_fd, probe.get(), alignment, 0);
      if (n == static_cast<ssize_t>(alignment)) {
        fd = *direct_fd;
        direct = true;
      } else if (n < 0 && errno == EINVAL) {
        direct_fallback = absl::StrCat("filesystem ", storage.filesystem,
                                       " rejects O_DIRECT writes (EINVAL)");
      } else {
        return absl::ErrnoToStatus(errno, "disk: first direct write");
      }
    } else if (absl::IsInvalidArgument(direct_fd.status())) {
      direct_fallback = absl::StrCat("filesystem ", storage.filesystem,
                                     " rejects O_DIRECT (EINVAL at open)");
    } else {
      return direct_fd.status();
    }
  }

  if (fallocate(fd, 0, 0, file_bytes) != 0 && errno != EOPNOTSUPP) {
    if (errno == ENOSPC) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "disk: no space left for a ", config->file_mib, " MiB test file in ",
          canonical_dir, "; lower file_mib"));
    }
    return absl::ErrnoToStatus(errno, "disk: fallocate");
  }

  const int phases = 1 + static_cast<int>(config->workloads.size());
  // Fill: every block written once with fresh random data, then flushed.
  {
    Phase fill;
    fill.label = absl::StrCat("filling ", config->file_mib, " MiB");
    fill.depth = kFillIodepth;
    fill.block_bytes = kMiB;
    fill.expected_seconds = static_cast<double>(config->file_mib) / 500.0;
    fill.plan = [file_bytes](int, Clock::time_point) {
      IoPlan plan;
      plan.read_percent = 0;
      plan.block_bytes = kMiB;
      plan.region = FileRegion{0, file_bytes};
      plan.max_ios = file_bytes / kMiB;
      plan.fresh_random_data = true;
      return plan;
    };
    absl::StatusOr<IoTally> filled =
        RunPhase(fill, fd, alignment, context, 0, phases);
    if (!filled.ok()) return filled.status();
    if (fsync(fd) != 0) return absl::ErrnoToStatus(errno, "disk: fsync");
    // Buffered fallback: start the reads from the disk, not the cache.
    if (!direct) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  }

  std::vector<v1::Sample> samples;
  int phase_index = 1;
  for (const DiskWorkload& workload : config->workloads) {
    const DiskWorkload* w = &workload;
    if (context.cancelled()) return absl::CancelledError("disk: cancelled");
    // Writeback of what came before (the fill, earlier workloads, other
    // processes on the device) would be timed with this workload.
    const disk::SettleResult settle = disk::SettleDevice(
        fd, storage.device.name().empty() ? "" : "/sys/block/" + storage.device.name(),
        disk::SettleOptions{}, [&context] { return context.cancelled(); });
    const int depth = w->iodepth;
    Phase phase;
    phase.label = w->name;
    phase.jobs = config->jobs;
    phase.depth = depth;
    phase.block_bytes = w->block_bytes;
    phase.ramp_seconds = config->ramp_seconds;
    phase.runtime_seconds = config->runtime_seconds;
    const DiskConfig& c = *config;
    phase.plan = [w, &c, file_bytes](int job, Clock::time_point start) {
      IoPlan plan;
      plan.read_percent = w->ReadPercent();
      plan.random = w->random();
      plan.block_bytes = w->block_bytes;
      plan.fsync_every = w->fsync;
      plan.rate_bytes = c.rate_bytes;
      plan.start = start;
      plan.region = JobRegion(file_bytes, c.jobs, job, kMiB);
      plan.count_from =
          start + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(c.ramp_seconds));
      plan.count_until = plan.count_from +
                         std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(c.runtime_seconds));
      return plan;
    };
    absl::StatusOr<IoTally> tally =
        RunPhase(phase, fd, alignment, context, phase_index++, phases);
    if (!tally.ok()) return tally.status();

    const double seconds = config->runtime_seconds;
    const double total_bytes =
        static_cast<double>(tally->reads.bytes + tally->writes.bytes);
    const double total_ios =
        static_cast<double>(tally->reads.ios + tally->writes.ios);
    const double mbps = MegabytesPerSecond(total_bytes, seconds);
    const double iops = IopsFromCount(total_ios, seconds);
    FioSettings fio;
    fio.file_bytes = file_bytes;
    fio.jobs = config->jobs;
    fio.rate_bytes = config->rate_bytes;
    fio.ramp_seconds = config->ramp_seconds;
    fio.runtime_seconds = config->runtime_seconds;
    fio.direct = direct;
    LatencyHistogram all_latency;
    all_latency.Merge(tally->reads.latency);
    all_latency.Merge(tally->writes.latency);

    auto add = [&](const std::string& suffix, double value,
                   const std::string& unit) {
      v1::Sample& sample = samples.emplace_back();
      sample.set_metric(absl::StrCat("disk.", w->name, ".", suffix));
      sample.set_value(value);
      sample.set_unit(unit);
      auto& p = *sample.mutable_params();
      p["workload"] = w->name;
      p["rw"] = FioRwName(w->rw);
      if (w->mixed()) p["rwmixread"] = absl::StrCat(w->rwmixread);
      if (w->fsync > 0) p["fsync"] = absl::StrCat(w->fsync);
      if (config->rate_bytes > 0) {
        p["rate_bytes"] = absl::StrCat(config->rate_bytes);
      }
      p["block_bytes"] = absl::StrCat(w->block_bytes);
      p["iodepth"] = absl::StrCat(depth);
      p["jobs"] = absl::StrCat(config->jobs);
      p["ramp_seconds"] = FormatNumber(config->ramp_seconds);
      p["runtime_seconds"] = FormatNumber(config->runtime_seconds);
      p["direct"] = direct ? "1" : "0";
      if (!direct_fallback.empty()) p["direct_fallback"] = direct_fallback;
      p["file_mib"] = absl::StrCat(config->file_mib);
      p["settle_ms"] = absl::StrCat(absl::ToInt64Milliseconds(settle.waited));
      p["settled"] = settle.settled ? "1" : "0";
      if (!settle.note.empty()) p["settle_note"] = settle.note;
      p["filesystem"] = storage.filesystem;
      p["mount_source"] = storage.mount_source;
      // The disk under the scratch folder: a fast result on a network
      // volume or a slow one on a rotational disk names its own cause.
      const v1::BlockDeviceFacts& device = storage.device;
      if (!device.name().empty()) {
        p["device"] = device.name();
        if (!device.model().empty()) p["device_model"] = device.model();
        p["rotational"] = device.rotational() ? "1" : "0";
        if (!device.scheduler().empty()) p["scheduler"] = device.scheduler();
        p["virtual_device"] = device.virtual_device() ? "1" : "0";
      }
      p["network_storage"] = storage.network_reason.empty() ? "0" : "1";
      if (!storage.network_reason.empty()) {
        p["network_storage_reason"] = storage.network_reason;
      }
      p["logical_block_bytes"] = absl::StrCat(storage.logical_block_bytes);
      p["ios"] = absl::StrCat(tally->reads.ios + tally->writes.ios);
      if (w->fsync > 0) p["fsyncs"] = absl::StrCat(tally->fsyncs.ios);
      p["MBps"] = FormatNumber(mbps);
      p["iops"] = FormatNumber(iops);
      p["mean_us"] = FormatNumber(all_latency.mean_nanos() / 1e3);
      p["max_us"] =
          FormatNumber(static_cast<double>(all_latency.max_nanos()) / 1e3);
      p["engine"] = kEngine;
      if (*stale > 0) p["stale_files_removed"] = absl::StrCat(*stale);
      p["fio_equivalent"] = FioEquivalentCommand(*w, fio);
    };
    auto add_latency = [&](const std::string& prefix,
                           const LatencyHistogram& latency) {
      add(prefix + "p50_us", latency.PercentileNanos(0.50) / 1e3, "us");
      add(prefix + "p99_us", latency.PercentileNanos(0.99) / 1e3, "us");
      add(prefix + "p999_us", latency.PercentileNanos(0.999) / 1e3, "us");
    };
    add("MBps", mbps, "MBps");
    add("iops", iops, "iops");
    if (w->mixed()) {
      for (const auto& [side, t] :
           {std::pair<std::string, const disk::DirectionTally*>{
                "read_", &tally->reads},
            {"write_", &tally->writes}}) {
        add(side + "MBps",
            MegabytesPerSecond(static_cast<double>(t->bytes), seconds),
            "MBps");
        add(side + "iops",
            IopsFromCount(static_cast<double>(t->ios), seconds), "iops");
        add_latency(side, t->latency);
      }
    } else {
      add_latency("", all_latency);
    }
    if (w->fsync > 0) add_latency("fsync_", tally->fsyncs.latency);
  }
  context.ReportProgress(1, "disk: done");
  return samples;
}

}  // namespace fleetbench::agent
