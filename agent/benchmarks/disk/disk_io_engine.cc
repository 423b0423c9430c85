#include "agent/benchmarks/disk/disk_io_engine.h"

#include <liburing.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <latch>
#include <memory>
#include <optional>
#include <random>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace fleetbench::agent::disk {
namespace {

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
  //
  // fsync=N (IoPlan::fsync_every) puts an fsync in a slot after every N
  // writes issued; a rate cap holds the next I/O back until its time and
  // reaps (or sleeps) meanwhile.
  absl::StatusOr<IoTally> Run(const IoPlan& plan,
                              const std::atomic<bool>& stop) {
    io_uring* ring = ring_->get();
    IoTally tally;
    std::vector<Slot> slots(static_cast<size_t>(depth_));
    std::vector<int> free_slots;
    free_slots.reserve(static_cast<size_t>(depth_));
    for (int slot = depth_ - 1; slot >= 0; --slot) free_slots.push_back(slot);
    int64_t issued = 0;          // reads and writes, not fsyncs
    int64_t writes_issued = 0;
    int64_t synced_at_writes = 0;  // writes_issued at the last fsync
    int64_t bytes_issued = 0;
    int inflight = 0;
    bool stopping = stop.load(std::memory_order_relaxed);
    absl::Status failure;
    const bool timed = plan.max_ios < 0;
    // Set when the rate cap holds the next I/O back: when it may go.
    std::optional<Clock::time_point> held_until;

    enum class Issue { kIssued, kDone, kHeld, kFailed };
    // Prepares and submits one I/O on `slot`.
    auto issue = [&](int slot) -> Issue {
      const bool sync_due = plan.fsync_every > 0 && writes_issued > 0 &&
                            writes_issued % plan.fsync_every == 0 &&
                            synced_at_writes != writes_issued;
      if (!sync_due && !timed && issued >= plan.max_ios) return Issue::kDone;
      if (!sync_due && plan.rate_bytes > 0) {
        // fio's rate: the bytes issued so far may not be ahead of the cap.
        const Clock::time_point due =
            plan.start + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(
                                 static_cast<double>(bytes_issued) /
                                 static_cast<double>(plan.rate_bytes)));
        if (Clock::now() < due) {
          held_until = due;
          return Issue::kHeld;
        }
      }
      io_uring_sqe* sqe = io_uring_get_sqe(ring);
      Slot next;
      if (sync_due) {
        next.kind = Kind::kFsync;
        synced_at_writes = writes_issued;
        io_uring_prep_fsync(sqe, fd_, 0);
      } else {
        const bool write =
            plan.read_percent <= 0 ||
            (plan.read_percent < 100 &&
             static_cast<int>(random_.Next() % 100) >= plan.read_percent);
        next.kind = write ? Kind::kWrite : Kind::kRead;
        next.offset =
            plan.random
                ? RandomOffset(plan.region, plan.block_bytes, random_.Next())
                : SequentialOffset(plan.region, plan.block_bytes, issued);
        ++issued;
        bytes_issued += plan.block_bytes;
        char* buffer =
            buffers_.get() + static_cast<int64_t>(slot) * block_bytes_;
        if (write) {
          ++writes_issued;
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
                              static_cast<uint64_t>(next.offset));
        } else {
          io_uring_prep_read(sqe, fd_, buffer,
                             static_cast<unsigned>(plan.block_bytes),
                             static_cast<uint64_t>(next.offset));
        }
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
        return Issue::kFailed;
      }
      // Latency starts when io_uring_enter has returned, as fio's clat does.
      next.issued = Clock::now();
      slots[static_cast<size_t>(slot)] = next;
      ++inflight;
      return Issue::kIssued;
    };

    while (true) {
      held_until.reset();
      while (!stopping && !free_slots.empty()) {
        const Issue result = issue(free_slots.back());
        if (result == Issue::kHeld) break;
        if (result != Issue::kIssued) {
          stopping = true;
          break;
        }
        free_slots.pop_back();
      }
      if (held_until.has_value()) {
        // Held back by the rate cap: the window may close meanwhile.
        const Clock::time_point now = Clock::now();
        if ((timed && now >= plan.count_until) ||
            stop.load(std::memory_order_relaxed)) {
          stopping = true;
          held_until.reset();
        }
      }
      if (inflight == 0) {
        if (!held_until.has_value()) break;
        // Nothing to reap: sleep until the next I/O may go (in short steps,
        // so that a cancellation is seen).
        std::this_thread::sleep_until(std::min(
            *held_until, Clock::now() + std::chrono::milliseconds(10)));
        continue;
      }

      // One completion per reap (fio's iodepth_batch_complete_max=1): the
      // one at the ring's head if there is one, else the first to arrive.
      io_uring_cqe* cqe = nullptr;
      int ret;
      if (held_until.has_value()) {
        const auto wait = std::max<int64_t>(
            0, std::chrono::duration_cast<std::chrono::nanoseconds>(
                   *held_until - Clock::now())
                   .count());
        __kernel_timespec timeout{};
        timeout.tv_sec = wait / 1000000000;
        timeout.tv_nsec = wait % 1000000000;
        ret = io_uring_wait_cqe_timeout(ring, &cqe, &timeout);
        if (ret == -ETIME) continue;
      } else {
        ret = io_uring_wait_cqe(ring, &cqe);
      }
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
      const char* what = s.kind == Kind::kFsync  ? "fsync"
                         : s.kind == Kind::kWrite ? "write"
                                                  : "read";
      const int64_t expected = s.kind == Kind::kFsync ? 0 : plan.block_bytes;
      if (cqe->res < 0) {
        if (failure.ok()) {
          failure = absl::ErrnoToStatus(
              -cqe->res, s.kind == Kind::kFsync
                             ? std::string("disk: fsync")
                             : absl::StrCat("disk: ", what, " of ",
                                            plan.block_bytes,
                                            " bytes at offset ", s.offset));
        }
        stopping = true;
      } else if (cqe->res != expected) {
        if (failure.ok()) {
          failure = absl::DataLossError(
              absl::StrCat("disk: short ", what, ": ", cqe->res, " of ",
                           plan.block_bytes, " bytes at offset ", s.offset));
        }
        stopping = true;
      } else if (counting) {
        DirectionTally& t = s.kind == Kind::kFsync  ? tally.fsyncs
                            : s.kind == Kind::kWrite ? tally.writes
                                                     : tally.reads;
        ++t.ios;
        t.bytes += expected;
        t.latency.Add(static_cast<uint64_t>(
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
  enum class Kind { kRead, kWrite, kFsync };
  struct Slot {
    Kind kind = Kind::kRead;
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

}  // namespace

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
    total.Merge(*r);
  }
  return total;
}

}  // namespace fleetbench::agent::disk
