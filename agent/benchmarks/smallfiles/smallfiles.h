// agent/benchmarks/smallfiles/smallfiles.h — "smallfiles": many small files read
// the way a training job's data loader reads them.
//
// What it measures: a folder of N files of S bytes — made by the benchmark
// in the runner's scratch folder (fleetbench-smallfiles-<random>/, removed
// when Run() returns, whatever the outcome; folders of killed runs are
// removed before starting), or an existing dataset folder given as `path`,
// which must lie under a folder the agent's operator allowed (agent
// --dataset-root; RunContext::dataset_roots): a run's parameters alone can
// never make an agent read a path. A dataset folder is only read, never
// written; its regular files directly inside it are the dataset (symlinks
// and subfolders are skipped).
//
// Method: every file is flushed (one syncfs on the folder after a scratch
// run's writes) and dropped from the page cache (posix_fadvise DONTNEED on
// each file); the inode and dentry caches are not dropped (that needs root
// and is machine-wide). Then, as a loader starting an epoch does:
//   1. readdir: the folder listed again and again for at least 0.2 s;
//   2. stat: fstatat of every file, in random order, on `threads` threads;
//   3. read: every file in a fresh random order, `threads` threads taking
//      the next file from one shared queue: openat (open latency), fstat and
//      read(2) of the whole file into one buffer until EOF (read latency),
//      close; buffered by default (as Python's open().read()), O_DIRECT with
//      direct=1. The pass stops early at runtime_seconds or cancellation and
//      counts what was done.
// files/s = files read / wall time of the pass; MB/s = bytes / time / 10^6.
// Latency percentiles by fio's rule (disk_math.h LatencyHistogram).
//
// Metrics: smallfiles.files_per_s, smallfiles.MBps,
// smallfiles.open_{p50,p99,p999}_us, smallfiles.read_{p50,p99,p999}_us,
// smallfiles.stat_per_s, smallfiles.readdir_entries_per_s.
//
// Parameters (ValidateParams explains any bad one):
//   files            1..10000000; scratch: how many to make   default 20000
//                    (dataset: at most this many, a random subset; default all)
//   file_kib         1..65536, scratch only                    default 128
//   threads          1..256                                    default 8
//   path             absolute dataset folder (see above)       default: scratch
//   direct           0 or 1                                    default 0
//   runtime_seconds  0.1..3600: cap on the read pass           default 120
//
// Errors: FAILED_PRECONDITION (the node cannot run it as asked; the task
// fails with the reason) for a path no --dataset-root holds,
// a symlink in the path, a folder without files, too little scratch space;
// CANCELLED when cancelled; the errno of a failed call otherwise. Thread
// safety: one Run() at a time.
#ifndef FLEETBENCH_AGENT_BENCHMARKS_SMALLFILES_SMALLFILES_H_
#define FLEETBENCH_AGENT_BENCHMARKS_SMALLFILES_SMALLFILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/benchmarks/benchmark.h"
#include "fleetbench/v1/result.pb.h"

namespace fleetbench::agent {

struct SmallFilesConfig {
  int64_t files = 20000;
  bool files_given = false;
  int64_t file_bytes = 128 * 1024;
  int threads = 8;
  std::string path;  // empty: make the files in the scratch folder
  bool direct = false;
  double runtime_seconds = 120;
};

// Defaults for absent keys; INVALID_ARGUMENT naming the parameter otherwise.
absl::StatusOr<SmallFilesConfig> ParseSmallFilesParams(const Params& params);

class SmallFilesBenchmark final : public Benchmark {
 public:
  std::string name() const override { return "smallfiles"; }
  absl::Status Probe() const override { return absl::OkStatus(); }
  std::vector<MetricInfo> metrics() const override;
  absl::Status ValidateParams(const Params& params) const override;
  // The base, or the read pass cap plus making the files at a pessimistic
  // 20 MiB/s plus ten minutes, whichever is longer.
  absl::Duration DefaultTimeout(const Params& params) const override;
  absl::StatusOr<std::vector<v1::Sample>> Run(
      const Params& params, const RunContext& context) override;
};

}  // namespace fleetbench::agent

#endif  // FLEETBENCH_AGENT_BENCHMARKS_SMALLFILES_SMALLFILES_H_
