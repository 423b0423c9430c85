#include "agent/benchmarks/host/disk_uring.h"

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
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/benchmarks/param_reader.h"
#include "agent/benchmarks/host/scratch_path.h"
#include "agent/facts/facts.h"

namespace fleetbench::agent {
namespace {

using Clock = std::chrono::steady_clock;

constexpr absl::string_view kAllowedKeys[] = {
    "workloads",    "file_mib",        "iodepth", "jobs",
    "ramp_seconds", "runtime_seconds", "direct"};
constexpr int64_t kMaxFileMib = int64_t{16} << 20;  // 16 TiB
// Buffers are depth × block per job; past this the plugin would be a memory
// benchmark with extra steps.
constexpr int64_t kMaxBufferBytes = int64_t{4} << 30;
// The fill writes like seq_write with fio's default depth for it.
constexpr int kFillIodepth = 8;
constexpr size_t kDefaultAlignment = 4096;
constexpr char kEngine[] = "io_uring via liburing";

std::string FormatNumber(double value) {
  return absl::StrFormat("%.6g", value);
}

// splitmix64: fast, and every job gets its own independent sequence.
class Random64 {
 public:
  explicit Random64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  void Fill(char* data, int64_t bytes) {
    for (int64_t i = 0; i + 8 <= bytes; i += 8) {
      const uint64_t word = Next();
      std::memcpy(data + i, &word, sizeof(word));
    }
  }

 private:
  uint64_t state_;
};

uint64_t RandomSeed() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// An io_uring set up as fio sets up its own: COOP_TASKRUN, SINGLE_ISSUER
// and DEFER_TASKRUN where the kernel has them (completions are then only
// processed when this thread asks for them, with no IPIs), fewer flags on
// older kernels. Must be created and used on one thread.
class Ring {
 public:
  static absl::StatusOr<std::unique_ptr<Ring>> Create(unsigned entries) {
    auto ring = std::unique_ptr<Ring>(new Ring);
    unsigned flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER |
                     IORING_SETUP_DEFER_TASKRUN;
    while (true) {
      struct io_uring_params params;
      std::memset(&params, 0, sizeof(params));
      params.flags = flags;
      const int ret =
          io_uring_queue_init_params(entries, &ring->ring_, &params);
      if (ret == 0) break;
      if (ret == -EINVAL && (flags & IORING_SETUP_DEFER_TASKRUN)) {
        flags &= ~(IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER);
        continue;
      }
      if (ret == -EINVAL && (flags & IORING_SETUP_COOP_TASKRUN)) {
        flags &= ~IORING_SETUP_COOP_TASKRUN;
        continue;
      }
      return absl::ErrnoToStatus(-ret, "disk: io_uring_queue_init");
    }
    ring->ready_ = true;
    return ring;
  }
  ~Ring() {
    if (ready_) io_uring_queue_exit(&ring_);
  }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  io_uring* get() { return &ring_; }

 private:
  Ring() = default;
  io_uring ring_;
  bool ready_ = false;
};

// What one job does in one phase.
struct IoPlan {
  bool write = false;
  bool random = false;
  int64_t block_bytes = 0;
  FileRegion region;
  // Fill: stop after this many I/Os and count them all. Measured phases:
  // -1, and completions count only when reaped in [count_from, count_until);
  // nothing new is issued from count_until on.
  int64_t max_ios = -1;
  Clock::time_point count_from;
  Clock::time_point count_until;
  // Fill: fresh random data in every write. Otherwise each write's buffer
  // (random once) gets a random word at the start of every 512-byte sector,
  // as fio's scramble_buffers does, so no two writes carry the same data.
  bool fresh_random_data = false;
};

struct IoTally {
  int64_t ios = 0;
  int64_t bytes = 0;
  LatencyHistogram latency;
};

// One job: a ring, `depth` aligned buffers and the submit/reap loop.
class UringJob {
 public:
  static absl::StatusOr<std::unique_ptr<UringJob>> Create(int fd, int depth,
                                                          int64_t block_bytes,
                                                          size_t alignment,
                                                          uint64_t seed) {
    absl::StatusOr<std::unique_ptr<Ring>> ring =
        Ring::Create(static_cast<unsigned>(depth));
    if (!ring.ok()) return ring.status();
    const size_t bytes =
        static_cast<size_t>(depth) * static_cast<size_t>(block_bytes);
    char* buffers = static_cast<char*>(std::aligned_alloc(alignment, bytes));
    if (buffers == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("disk: cannot allocate ", bytes, " bytes of buffers"));
    }
    auto job = std::unique_ptr<UringJob>(
        new UringJob(fd, depth, block_bytes, *std::move(ring), buffers, seed));
    // Random contents once, and every page faulted in before timing.
    job->random_.Fill(buffers, static_cast<int64_t>(bytes));
    return job;
  }

  // Runs `plan` until it is done, the window closes, `stop` is set or an
  // I/O fails; always waits for every I/O in flight before returning.
  //
  // The loop is fio's with its defaults (iodepth_batch_submit=1,
  // iodepth_batch_complete_min=1 and _max=1): every free slot gets its I/O
  // submitted at once with its own io_uring_enter, which also collects
  // finished completions (GETEVENTS); when no slot is free the job reaps
  // ONE completion, sleeping only if there is none, and refills that slot.
  // Batching the submissions costs ~10% IOPS on virtio disks (the device
  // sees bursts and the queue runs less full). Reaping every completion
  // available at once (16 on average on virtio) and then refilling them one
  // by one kept IOPS but made latencies 12% shorter than fio's at p50: each
  // clock stopped at the batch's reap while later slots of the batch sat
  // empty, uncounted, until their turn to be refilled (Little's law gave 26.6
  // of 32 I/Os in the measured state, fio 31.6). Reaping one at a time, a
  // completion waits in the ring, counted, as in fio (docs/host-benchmarks.md).
  absl::StatusOr<IoTally> Run(const IoPlan& plan,
                              const std::atomic<bool>& stop) {
    io_uring* ring = ring_->get();
    IoTally tally;
    std::vector<Slot> slots(static_cast<size_t>(depth_));
    std::vector<int> free_slots;
    free_slots.reserve(static_cast<size_t>(depth_));
    for (int slot = depth_ - 1; slot >= 0; --slot) free_slots.push_back(slot);
    int64_t issued = 0;
    int inflight = 0;
    bool stopping = stop.load(std::memory_order_relaxed);
    absl::Status failure;
    const bool timed = plan.max_ios < 0;

    // Prepares and submits one I/O on `slot`; false when there is nothing
    // more to issue or the submission failed (then `failure` says why).
    auto issue = [&](int slot) -> bool {
      if (!timed && issued >= plan.max_ios) return false;
      const int64_t offset =
          plan.random
              ? RandomOffset(plan.region, plan.block_bytes, random_.Next())
              : SequentialOffset(plan.region, plan.block_bytes, issued);
      ++issued;
      char* buffer = buffers_.get() + static_cast<int64_t>(slot) * block_bytes_;
      io_uring_sqe* sqe = io_uring_get_sqe(ring);
      if (plan.write) {
        if (plan.fresh_random_data) {
          random_.Fill(buffer, plan.block_bytes);
        } else {
          for (int64_t s = 0; s < plan.block_bytes; s += 512) {
            const uint64_t word = random_.Next();
            std::memcpy(buffer + s, &word, sizeof(word));
          }
        }
        io_uring_prep_write(sqe, fd_, buffer,
                            static_cast<unsigned>(plan.block_bytes),
                            static_cast<uint64_t>(offset));
      } else {
        io_uring_prep_read(sqe, fd_, buffer,
                           static_cast<unsigned>(plan.block_bytes),
                           static_cast<uint64_t>(offset));
      }
      io_uring_sqe_set_data64(sqe, static_cast<uint64_t>(slot));
      int ret;
      do {
        ret = io_uring_submit_and_get_events(ring);
      } while (ret == -EINTR);
      if (ret < 0) {
        if (failure.ok()) {
          failure = absl::ErrnoToStatus(-ret, "disk: io_uring_enter submit");
        }
        return false;
      }
      // Latency starts when io_uring_enter has returned, as fio's clat does.
      slots[static_cast<size_t>(slot)] = Slot{offset, Clock::now()};
      ++inflight;
      return true;
    };

    while (true) {
      while (!stopping && !free_slots.empty()) {
        if (!issue(free_slots.back())) {
          stopping = true;
          break;
        }
        free_slots.pop_back();
      }
      if (inflight == 0) break;

      // One completion per reap (fio's iodepth_batch_complete_max=1): the
      // one at the ring's head if there is one, else the first to arrive.
      io_uring_cqe* cqe = nullptr;
      const int ret = io_uring_wait_cqe(ring, &cqe);
      if (ret == -EINTR) continue;
      if (ret < 0) {
        // Nothing can be reaped any more; the ring's teardown cancels the
        // rest.
        return absl::ErrnoToStatus(-ret, "disk: io_uring_wait_cqe");
      }
      // One clock read per reap, as fio does.
      const Clock::time_point now = Clock::now();
      if ((timed && now >= plan.count_until) ||
          stop.load(std::memory_order_relaxed)) {
        stopping = true;
      }
      const bool counting =
          !timed || (now >= plan.count_from && now < plan.count_until);
      const int slot = static_cast<int>(io_uring_cqe_get_data64(cqe));
      const Slot& s = slots[static_cast<size_t>(slot)];
      --inflight;
      free_slots.push_back(slot);
      if (cqe->res < 0) {
        if (failure.ok()) {
          failure = absl::ErrnoToStatus(
              -cqe->res,
              absl::StrCat("disk: ", plan.write ? "write" : "read", " of ",
                           plan.block_bytes, " bytes at offset ", s.offset));
        }
        stopping = true;
      } else if (cqe->res != plan.block_bytes) {
        if (failure.ok()) {
          failure = absl::DataLossError(absl::StrCat(
              "disk: short ", plan.write ? "write" : "read", ": ", cqe->res,
              " of ", plan.block_bytes, " bytes at offset ", s.offset));
        }
        stopping = true;
      } else if (counting) {
        ++tally.ios;
        tally.bytes += plan.block_bytes;
        tally.latency.Add(static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(now -
                                                                 s.issued)
                .count()));
      }
      io_uring_cqe_seen(ring, cqe);
    }
    if (!failure.ok()) return failure;
    return tally;
  }

 private:
  struct Slot {
    int64_t offset = 0;
    Clock::time_point issued;
  };

  UringJob(int fd, int depth, int64_t block_bytes, std::unique_ptr<Ring> ring,
           char* buffers, uint64_t seed)
      : fd_(fd),
        depth_(depth),
        block_bytes_(block_bytes),
        buffers_(buffers),
        ring_(std::move(ring)),
        random_(seed) {}

  const int fd_;
  const int depth_;
  const int64_t block_bytes_;
  std::unique_ptr<char[], FreeDeleter> buffers_;
  // Declared after buffers_ so that it is torn down first: no I/O can still
  // target the buffers when they are freed.
  std::unique_ptr<Ring> ring_;
  Random64 random_;
};

// Runs one phase on `jobs` threads that start together, watching for
// cancellation and reporting progress from the calling thread.
struct Phase {
  std::string label;
  int jobs = 1;
  int depth = 1;
  int64_t block_bytes = 0;
  double ramp_seconds = 0;     // timed phases only
  double runtime_seconds = 0;  // timed phases only
  // Builds job j's plan once the common start time is known.
  std::function<IoPlan(int job, Clock::time_point start)> plan;
  // For progress of an untimed phase: expected seconds (a guess).
  double expected_seconds = 1;
};

absl::StatusOr<IoTally> RunPhase(const Phase& phase, int fd, size_t alignment,
                                 const RunContext& context, int phase_index,
                                 int phases) {
  std::vector<absl::StatusOr<IoTally>> results(
      static_cast<size_t>(phase.jobs), absl::InternalError("job not run"));
  std::atomic<bool> stop{false};
  std::atomic<int> finished{0};
  std::latch ready(phase.jobs);
  std::latch go(1);
  Clock::time_point start;  // written before go opens, read after
  std::vector<std::thread> threads;

  for (int j = 0; j < phase.jobs; ++j) {
    const uint64_t seed = RandomSeed();
    try {
      threads.emplace_back([&, j, seed] {
        absl::StatusOr<std::unique_ptr<UringJob>> job = UringJob::Create(
            fd, phase.depth, phase.block_bytes, alignment, seed);
        ready.count_down();
        go.wait();
        if (!job.ok()) {
          results[static_cast<size_t>(j)] = job.status();
          stop = true;
        } else {
          results[static_cast<size_t>(j)] =
              (*job)->Run(phase.plan(j, start), stop);
          if (!results[static_cast<size_t>(j)].ok()) stop = true;
        }
        ++finished;
      });
    } catch (const std::system_error& e) {
      for (int k = j; k < phase.jobs; ++k) {
        results[static_cast<size_t>(k)] = absl::ResourceExhaustedError(
            absl::StrCat("disk: cannot start job thread: ", e.what()));
        ready.count_down();
        ++finished;
      }
      stop = true;
      break;
    }
  }
  ready.wait();
  start = Clock::now();
  go.count_down();

  const double planned = phase.runtime_seconds > 0
                             ? phase.ramp_seconds + phase.runtime_seconds
                             : phase.expected_seconds;
  Clock::time_point last_report{};
  while (finished.load() < phase.jobs) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (context.cancelled()) stop = true;
    const Clock::time_point now = Clock::now();
    if (now - last_report >= std::chrono::seconds(1)) {
      last_report = now;
      const double within = std::clamp(
          std::chrono::duration<double>(now - start).count() / planned, 0.0,
          1.0);
      context.ReportProgress((phase_index + within) / phases,
                             absl::StrCat("disk: ", phase.label));
    }
  }
  for (std::thread& t : threads) t.join();

  if (context.cancelled()) return absl::CancelledError("disk: cancelled");
  IoTally total;
  for (absl::StatusOr<IoTally>& r : results) {
    if (!r.ok()) return r.status();
    total.ios += r->ios;
    total.bytes += r->bytes;
    total.latency.Merge(r->latency);
  }
  return total;
}

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

absl::StatusOr<DiskConfig> ParseDiskParams(const Params& params) {
  ParamReader reader("disk", params);
  if (absl::Status s = reader.CheckKeys(kAllowedKeys); !s.ok()) return s;
  DiskConfig config;

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
    config.workloads.push_back(FindDiskWorkload(name));
  }

  absl::StatusOr<int64_t> file_mib =
      reader.Int("file_mib", config.file_mib, 1, kMaxFileMib);
  if (!file_mib.ok()) return file_mib.status();
  config.file_mib = *file_mib;

  if (reader.Has("iodepth")) {
    absl::StatusOr<int64_t> iodepth = reader.Int("iodepth", 0, 1, 1024);
    if (!iodepth.ok()) return iodepth.status();
    config.iodepth = static_cast<int>(*iodepth);
  }

  absl::StatusOr<int64_t> jobs = reader.Int("jobs", config.jobs, 1, 64);
  if (!jobs.ok()) return jobs.status();
  config.jobs = static_cast<int>(*jobs);

  absl::StatusOr<double> ramp =
      reader.Double("ramp_seconds", config.ramp_seconds, 0, 600);
  if (!ramp.ok()) return ramp.status();
  config.ramp_seconds = *ramp;

  absl::StatusOr<double> runtime =
      reader.Double("runtime_seconds", config.runtime_seconds, 0.01, 3600);
  if (!runtime.ok()) return runtime.status();
  config.runtime_seconds = *runtime;

  absl::StatusOr<bool> direct = reader.Bool("direct", config.direct);
  if (!direct.ok()) return direct.status();
  config.direct = *direct;

  // Every job needs at least one block of the largest size in its region.
  if (config.file_mib < config.jobs) {
    return reader.Error(
        "file_mib",
        absl::StrCat(config.file_mib, " MiB cannot be split into ", config.jobs,
                     " job regions of at least 1 MiB; raise "
                     "file_mib or lower jobs"));
  }
  for (const DiskWorkload* w : config.workloads) {
    const int64_t buffers = static_cast<int64_t>(config.jobs) *
                            config.IodepthFor(*w) * w->block_bytes;
    if (buffers > kMaxBufferBytes) {
      return reader.Error(
          "iodepth",
          absl::StrCat(w->name, " would need ", buffers >> 20,
                       " MiB of buffers (jobs × iodepth × block); at most ",
                       kMaxBufferBytes >> 20, " MiB; lower iodepth or jobs"));
    }
  }
  return config;
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

absl::Status DiskUringBenchmark::ValidateParams(const Params& params) const {
  return ParseDiskParams(params).status();
}

absl::StatusOr<std::vector<v1::Sample>> DiskUringBenchmark::Run(
    const Params& params, const RunContext& context) {
  absl::StatusOr<DiskConfig> config = ParseDiskParams(params);
  if (!config.ok()) return config.status();
  const int64_t file_bytes = config->file_mib * kDiskMiB;

  const std::string file_name = RandomDiskFileName();
  absl::StatusOr<std::string> target =
      ResolveScratchTarget(context.scratch_dir(), file_name);
  if (!target.ok()) return target.status();
  const std::string dir = target->substr(0, target->rfind('/'));
  const std::string canonical_dir = dir.empty() ? "/" : dir;
  // Files of earlier runs that were killed would otherwise fill the disk.
  absl::StatusOr<int> stale = RemoveStaleScratchFiles(canonical_dir);
  if (!stale.ok()) return stale.status();
  absl::StatusOr<uint64_t> available = AvailableBytes(canonical_dir);
  if (!available.ok()) return available.status();
  if (absl::Status s = CheckFreeSpace(canonical_dir, *available,
                                      static_cast<uint64_t>(file_bytes));
      !s.ok()) {
    return s;
  }

  // From here on the file exists; `file` removes it on every return path.
  absl::StatusOr<std::unique_ptr<ScratchFile>> file =
      ScratchFile::Create(canonical_dir, file_name);
  if (!file.ok()) return file.status();
  const StorageFacts storage = DescribeStorage(canonical_dir, (*file)->fd());
  const size_t alignment = std::max<size_t>(
      kDefaultAlignment, static_cast<size_t>(storage.logical_block_bytes));
  for (const DiskWorkload* w : config->workloads) {
    if (w->block_bytes % static_cast<int64_t>(alignment) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "disk: the device's logical block size is ",
          storage.logical_block_bytes, " bytes; ", w->name, " uses ",
          w->block_bytes, "-byte blocks, which direct I/O cannot do"));
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
    fill.block_bytes = kDiskMiB;
    fill.expected_seconds = static_cast<double>(config->file_mib) / 500.0;
    fill.plan = [file_bytes](int, Clock::time_point) {
      IoPlan plan;
      plan.write = true;
      plan.block_bytes = kDiskMiB;
      plan.region = FileRegion{0, file_bytes};
      plan.max_ios = file_bytes / kDiskMiB;
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
  for (const DiskWorkload* w : config->workloads) {
    if (context.cancelled()) return absl::CancelledError("disk: cancelled");
    const int depth = config->IodepthFor(*w);
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
      plan.write = w->write;
      plan.random = w->random;
      plan.block_bytes = w->block_bytes;
      plan.region = JobRegion(file_bytes, c.jobs, job, kDiskMiB);
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
    const double mbps =
        MegabytesPerSecond(static_cast<double>(tally->bytes), seconds);
    const double iops = IopsFromCount(static_cast<double>(tally->ios), seconds);
    FioSettings fio;
    fio.file_bytes = file_bytes;
    fio.iodepth = depth;
    fio.jobs = config->jobs;
    fio.ramp_seconds = config->ramp_seconds;
    fio.runtime_seconds = config->runtime_seconds;
    fio.direct = direct;

    auto add = [&](const std::string& suffix, double value,
                   const std::string& unit) {
      v1::Sample& sample = samples.emplace_back();
      sample.set_metric(absl::StrCat("disk.", w->name, ".", suffix));
      sample.set_value(value);
      sample.set_unit(unit);
      auto& p = *sample.mutable_params();
      p["workload"] = w->name;
      p["block_bytes"] = absl::StrCat(w->block_bytes);
      p["iodepth"] = absl::StrCat(depth);
      p["jobs"] = absl::StrCat(config->jobs);
      p["ramp_seconds"] = FormatNumber(config->ramp_seconds);
      p["runtime_seconds"] = FormatNumber(config->runtime_seconds);
      p["direct"] = direct ? "1" : "0";
      if (!direct_fallback.empty()) p["direct_fallback"] = direct_fallback;
      p["file_mib"] = absl::StrCat(config->file_mib);
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
      p["ios"] = absl::StrCat(tally->ios);
      p["MBps"] = FormatNumber(mbps);
      p["iops"] = FormatNumber(iops);
      p["mean_us"] = FormatNumber(tally->latency.mean_nanos() / 1e3);
      p["max_us"] =
          FormatNumber(static_cast<double>(tally->latency.max_nanos()) / 1e3);
      p["engine"] = kEngine;
      if (*stale > 0) p["stale_files_removed"] = absl::StrCat(*stale);
      p["fio_equivalent"] = FioEquivalentCommand(*w, fio);
    };
    if (w->random) {
      add("iops", iops, "iops");
      add("p50_us", tally->latency.PercentileNanos(0.50) / 1e3, "us");
      add("p99_us", tally->latency.PercentileNanos(0.99) / 1e3, "us");
      add("p999_us", tally->latency.PercentileNanos(0.999) / 1e3, "us");
    } else {
      add("MBps", mbps, "MBps");
    }
  }
  context.ReportProgress(1, "disk: done");
  return samples;
}

}  // namespace fleetbench::agent
