// agent/benchmarks/disk/disk_io_engine.h — the disk plugin's I/O engine:
// jobs that each own an io_uring and `depth` aligned buffers, run together
// for one phase (the fill, or one timed workload) and tallied.
//
// The engine measures; what to measure (workloads, file, parameters) and
// how to report it stays in disk_uring.cc. Each job is one thread with its
// own ring (io_uring rings are single-issuer here); RunPhase starts them
// together, polls for cancellation and progress on the caller's thread and
// returns the merged tally, or the first job's error.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_DISK_DISK_IO_ENGINE_H_
#define FLEETBENCH_AGENT_BENCHMARKS_DISK_DISK_IO_ENGINE_H_

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "agent/benchmarks/disk_common/disk_math.h"

namespace fleetbench::agent::disk {

using Clock = std::chrono::steady_clock;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// What one job does in one phase.
struct IoPlan {
  // Percent of I/Os that read (fio's rwmixread): 100 reads only, 0 writes
  // only; in between, each I/O's direction is drawn at random, as fio does.
  int read_percent = 100;
  bool random = false;
  int64_t block_bytes = 0;
  FileRegion region;
  // fio's fsync=N: after every N writes issued, the next I/O is an fsync of
  // the file (IORING_OP_FSYNC, in a slot of its own like any I/O); 0: none.
  int64_t fsync_every = 0;
  // fio's rate: at most this many bytes per second from this job, counted
  // from `start` (I/Os are held back until their time); 0: no cap.
  int64_t rate_bytes = 0;
  Clock::time_point start;
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

// Counted I/Os of one kind: reads, writes or fsyncs.
struct DirectionTally {
  int64_t ios = 0;
  int64_t bytes = 0;
  LatencyHistogram latency;

  void Merge(const DirectionTally& other) {
    ios += other.ios;
    bytes += other.bytes;
    latency.Merge(other.latency);
  }
};

struct IoTally {
  DirectionTally reads;
  DirectionTally writes;
  DirectionTally fsyncs;  // bytes stay 0

  void Merge(const IoTally& other) {
    reads.Merge(other.reads);
    writes.Merge(other.writes);
    fsyncs.Merge(other.fsyncs);
  }
};

// One phase: the fill, or one timed workload.
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

// Runs one phase on `phase.jobs` threads that start together; watches for
// cancellation and reports progress (phase_index of phases) from the
// calling thread. The tally of all jobs, or the first job's error.
absl::StatusOr<IoTally> RunPhase(const Phase& phase, int fd, size_t alignment,
                                 const RunContext& context, int phase_index,
                                 int phases);

}  // namespace fleetbench::agent::disk

#endif  // FLEETBENCH_AGENT_BENCHMARKS_DISK_DISK_IO_ENGINE_H_
